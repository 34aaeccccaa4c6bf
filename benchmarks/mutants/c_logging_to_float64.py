"""Train an autoencoder, printing the running loss every few steps and keeping a history.

The classic PyTorch-tutorial loop: `running_loss += loss.item()` on every step, a
print and reset every LOG_EVERY steps, and `history.append(loss.item())` for a plot
afterwards. Each read waits for the device, although the host needs the numbers only
every LOG_EVERY steps (and the history only at the end).

    python examples/periodic_logging.py
    nosync-verify examples/periodic_logging.py --entry train
"""

import torch
import torch.nn as nn

NUM_FEATURES = 24
BATCH_SIZE = 32
NUM_BATCHES = 8
LOG_EVERY = 4


def train(model: nn.Module, optimizer: torch.optim.Optimizer,
          batches: list[torch.Tensor], epochs: int = 2) -> list[float]:
    criterion = nn.MSELoss()
    history = []
    for epoch in range(epochs):
        running_loss = 0.0
        history_start = len(history)
        for i, x in enumerate(batches):
            optimizer.zero_grad()
            loss = criterion(model(x), x)
            loss.backward()
            optimizer.step()

            history.append(loss.detach())
            running_loss += loss.detach().to(torch.float64)
            if i % LOG_EVERY == LOG_EVERY - 1:
                running_loss = float(running_loss)
                print(f"[{epoch + 1}, {i + 1:3d}] loss: {running_loss / LOG_EVERY:.4f}")
                running_loss = 0.0
        if len({(v.dtype, v.device) for v in history[history_start:]}) == 1:
            history[history_start:] = torch.cat([v.reshape(1) for v in history[history_start:]]).tolist()
        else:
            history[history_start:] = [v.item() for v in history[history_start:]]
    return history


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(NUM_FEATURES, 8), nn.ReLU(), nn.Linear(8, NUM_FEATURES))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    basis = torch.randn(4, NUM_FEATURES, generator=generator)  # data on a 4-d subspace
    batches = [(torch.randn(BATCH_SIZE, 4, generator=generator) @ basis).to(device)
               for _ in range(NUM_BATCHES)]
    return model, optimizer, batches


if __name__ == "__main__":
    history = train(*example_inputs(0))
    print(f"first loss {history[0]:.4f}, last loss {history[-1]:.4f}")


# nosync-verify control: logging_to_float64
# of: examples/periodic_logging.py
# entry: train
# rules: NSY201,NSY202
# class: equivalent
# why: .to(torch.float64) for .double().
