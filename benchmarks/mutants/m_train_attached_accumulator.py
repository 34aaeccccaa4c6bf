"""Train a small classifier on synthetic data, tracking running loss and accuracy.

The bookkeeping in `train_epoch` is the most common sync in real training code:
`running_loss += loss.item()` and `correct += (pred == y).sum().item()` each make
the host wait for the device on every step.

    python examples/train_classifier.py
    nosync-verify examples/train_classifier.py --entry train_epoch
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_FEATURES = 20
NUM_CLASSES = 4
BATCH_SIZE = 32
NUM_BATCHES = 8


class MLP(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, num_classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.head(x)


def make_batches(generator: torch.Generator,
                 device: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Gaussian blobs, one centre per class: learnable, but not in one step."""
    centres = torch.randn(NUM_CLASSES, NUM_FEATURES, generator=generator) * 0.5
    batches = []
    for _ in range(NUM_BATCHES):
        y = torch.randint(0, NUM_CLASSES, (BATCH_SIZE,), generator=generator)
        x = centres[y] + torch.randn(BATCH_SIZE, NUM_FEATURES, generator=generator)
        batches.append((x.to(device), y.to(device)))
    return batches


def train_epoch(model: nn.Module, optimizer: torch.optim.Optimizer,
                batches: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[float, float]:
    """One pass over the data; returns the mean loss and the accuracy."""
    model.train()
    running_loss = 0.0
    correct = 0
    seen = 0
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()

        running_loss += loss.double() * x.size(0)
        pred = logits.argmax(dim=1)
        correct += (pred == y).sum().detach()
        seen += y.size(0)
    running_loss = float(running_loss)
    correct = int(correct)
    return running_loss / seen, correct / seen


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = MLP(NUM_FEATURES, 64, NUM_CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, optimizer, make_batches(generator, device)


if __name__ == "__main__":
    model, optimizer, batches = example_inputs(0)
    for epoch in range(5):
        loss, accuracy = train_epoch(model, optimizer, batches)
        print(f"epoch {epoch}: loss {loss:.4f}, accuracy {accuracy:.1%}")


# nosync-verify mutant: train_attached_accumulator
# of: examples/train_classifier.py
# entry: train_epoch
# rules: NSY201
# class: accumulator kept attached to autograd
# why: Drops .detach(): the running loss holds every step's autograd graph alive until the end
#   of the epoch (same values).
