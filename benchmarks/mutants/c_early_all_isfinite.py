"""Train a regressor with NaN-step skipping and early stopping on a validation loss.

Both decisions are taken on the host from device values: `if not torch.isfinite(loss):`
skips a step and `if val_loss.item() < best - MIN_DELTA:` decides when to stop. These
are control flow (`continue`, `break`), so nosync-fix reports them and suggests the
sync-free idiom rather than rewriting them.

    python examples/early_stopping.py
    nosync-verify examples/early_stopping.py --entry fit
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_FEATURES = 8
BATCH_SIZE = 32
NUM_BATCHES = 4
MAX_EPOCHS = 10
PATIENCE = 2
MIN_DELTA = 1e-3


def fit(model: nn.Module, optimizer: torch.optim.Optimizer,
        train_batches: list[tuple[torch.Tensor, torch.Tensor]],
        val_batch: tuple[torch.Tensor, torch.Tensor]) -> dict:
    best = float("inf")
    best_state = None
    bad_epochs = 0
    skipped = 0
    epochs_run = 0
    for epoch in range(MAX_EPOCHS):
        model.train()
        for x, y in train_batches:
            loss = F.mse_loss(model(x), y)
            if not torch.isfinite(loss).all():
                # A corrupted batch: skip the update rather than poison the weights.
                optimizer.zero_grad(set_to_none=True)
                skipped += 1
                continue
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            val_x, val_y = val_batch
            val_loss = F.mse_loss(model(val_x), val_y)
        epochs_run = epoch + 1
        if val_loss.item() < best - MIN_DELTA:
            best = val_loss.item()
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
            bad_epochs = 0
        else:
            bad_epochs += 1
            if bad_epochs >= PATIENCE:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    return {"best_val_loss": best, "epochs": epochs_run, "skipped_steps": skipped}


def make_batches(generator: torch.Generator, device: str):
    true_w = torch.randn(NUM_FEATURES, 1, generator=generator)
    batches = []
    for i in range(NUM_BATCHES + 1):
        x = torch.randn(BATCH_SIZE, NUM_FEATURES, generator=generator)
        y = x @ true_w + 0.1 * torch.randn(BATCH_SIZE, 1, generator=generator)
        if i == 2:
            x[0, 0] = float("nan")  # one corrupted sample, as real data loaders deliver
        batches.append((x.to(device), y.to(device)))
    return batches[:-1], batches[-1]


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(NUM_FEATURES, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 if seed % 2 else 0.02)
    train_batches, val_batch = make_batches(generator, device)
    return model, optimizer, train_batches, val_batch


if __name__ == "__main__":
    result = fit(*example_inputs(0))
    print(f"best validation loss {result['best_val_loss']:.4f} after {result['epochs']} epochs; "
          f"{result['skipped_steps']} steps skipped")


# nosync-verify control: early_all_isfinite
# of: examples/early_stopping.py
# entry: fit
# rules: -
# class: equivalent
# why: .all() on a 0-d tensor.
