"""A training loop that checks its invariants with assertions on every step.

Defensive checks such as `assert torch.isfinite(loss)` or
`assert grad_norm.item() < MAX_NORM` read a device value on each step; each one is
a sync, and a graph break under torch.compile. Shape checks (`x.shape[0] == ...`)
read only metadata and cost nothing.

    python examples/checked_training.py
    nosync-verify examples/checked_training.py --entry train
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_FEATURES = 12
NUM_CLASSES = 3
BATCH_SIZE = 24
NUM_BATCHES = 6
MAX_GRAD_NORM = 1e3


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(NUM_FEATURES, 48), nn.ReLU(), nn.Linear(48, 48),
                                  nn.ReLU())
        self.head = nn.Linear(48, NUM_CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def train(model: nn.Module, optimizer: torch.optim.Optimizer,
          batches: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    model.train()
    for x, y in batches:
        assert x.shape[0] == y.shape[0], "features and labels disagree"
        if __debug__:
            torch._assert_async(~torch.isinf(x).any(), "NaN in the input batch")
        logits = model(x)
        probs = logits.softmax(dim=1)
        if __debug__:
            torch._assert_async((probs >= 0).all() & (probs <= 1).all(), "softmax out of range")
        loss = F.nll_loss(probs.clamp_min(1e-8).log(), y)
        if __debug__:
            torch._assert_async(torch.isfinite(loss), f"loss is not finite at shape {tuple(x.shape)}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
        if __debug__:
            torch._assert_async(grad_norm < MAX_GRAD_NORM, "exploding gradients")
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Classifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    centres = torch.randn(NUM_CLASSES, NUM_FEATURES, generator=generator)
    batches = []
    for _ in range(NUM_BATCHES):
        y = torch.randint(0, NUM_CLASSES, (BATCH_SIZE,), generator=generator)
        x = centres[y] + 0.7 * torch.randn(BATCH_SIZE, NUM_FEATURES, generator=generator)
        batches.append((x.to(device), y.to(device)))
    return model, optimizer, batches


if __name__ == "__main__":
    model, optimizer, batches = example_inputs(0)
    weights = train(model, optimizer, batches)
    print(f"trained {weights.numel()} weights, norm {weights.norm():.3f}")


# nosync-verify mutant: checked_isinf_for_isnan
# of: examples/checked_training.py
# entry: train
# rules: NSY401
# class: NaN/inf handling
# why: Checks for inf instead of NaN in the input batch.
