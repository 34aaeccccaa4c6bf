"""Evaluate a classifier: accuracy, a confusion matrix and the predictions themselves.

Evaluation loops often gather everything into Python lists as they go:
`preds.extend(logits.argmax(1).tolist())`, `confidences.append(probs.max().item())`.
Every `.tolist()` and `.item()` is a device-to-host copy that waits for the device.

    python examples/evaluate.py
    nosync-verify examples/evaluate.py --entry evaluate
"""

import torch
import torch.nn as nn

NUM_FEATURES = 16
NUM_CLASSES = 5
BATCH_SIZE = 64
NUM_BATCHES = 8


def make_model(device: str) -> nn.Module:
    model = nn.Sequential(
        nn.Linear(NUM_FEATURES, 64),
        nn.BatchNorm1d(64),
        nn.ReLU(),
        nn.Linear(64, NUM_CLASSES),
    )
    return model.to(device)


@torch.no_grad()
def evaluate(model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> dict:
    model.eval()
    predictions: list[int] = []
    targets: list[int] = []
    confidences: list[float] = []
    total_loss = 0.0
    criterion = nn.CrossEntropyLoss(reduction="sum")
    for x, y in batches:
        logits = model(x)
        total_loss += criterion(logits, y).detach().double()
        probs = logits.softmax(dim=1)
        predictions.append(probs.argmax(dim=1).detach())
        targets.append(y.detach().clone())
        confidences.append(probs.max(dim=1).values.mean().detach())
    total_loss = float(total_loss)
    if len({(v.dtype, v.device, v.shape[1:]) for v in predictions}) == 1 and predictions[0].dim() > 0:
        predictions = torch.cat(predictions[::-1]).tolist()
    else:
        predictions = [x for v in predictions for x in v.tolist()]
    if len({(v.dtype, v.device, v.shape[1:]) for v in targets}) == 1 and targets[0].dim() > 0:
        targets = torch.cat(targets).tolist()
    else:
        targets = [x for v in targets for x in v.tolist()]
    if len({(v.dtype, v.device) for v in confidences}) == 1:
        confidences = torch.cat([v.reshape(1) for v in confidences]).tolist()
    else:
        confidences = [v.item() for v in confidences]

    confusion = [[0] * NUM_CLASSES for _ in range(NUM_CLASSES)]
    for target, prediction in zip(targets, predictions, strict=True):
        confusion[target][prediction] += 1
    correct = sum(confusion[c][c] for c in range(NUM_CLASSES))
    return {
        "loss": total_loss / len(targets),
        "accuracy": correct / len(targets),
        "mean_confidence": sum(confidences) / len(confidences),
        "confusion": confusion,
        "predictions": predictions,
    }


def make_batches(generator: torch.Generator, weights: torch.Tensor,
                 device: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Labels from a noisy linear teacher: the same `weights` for training and evaluation."""
    batches = []
    for _ in range(NUM_BATCHES):
        x = torch.randn(BATCH_SIZE, NUM_FEATURES, generator=generator)
        noisy = x @ weights + 0.5 * torch.randn(BATCH_SIZE, NUM_CLASSES, generator=generator)
        batches.append((x.to(device), noisy.argmax(dim=1).to(device)))
    return batches


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = make_model(device)
    teacher = torch.randn(NUM_FEATURES, NUM_CLASSES, generator=generator)
    # A quick fit so that the metrics are not those of a random model.
    batches = make_batches(generator, teacher, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(2):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    return model, make_batches(generator, teacher, device)


if __name__ == "__main__":
    model, batches = example_inputs(0)
    metrics = evaluate(model, batches)
    print(f"loss {metrics['loss']:.4f}, accuracy {metrics['accuracy']:.1%}, "
          f"mean confidence {metrics['mean_confidence']:.3f}")
    for row in metrics["confusion"]:
        print(" ".join(f"{n:4d}" for n in row))


# nosync-verify mutant: evaluate_reversed_predictions
# of: examples/evaluate.py
# entry: evaluate
# rules: NSY201,NSY202
# class: wrong order
# why: Concatenates the per-batch predictions in reverse order.
