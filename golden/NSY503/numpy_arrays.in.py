# golden: --unsafe-fixes
import numpy as np
import torch


def calibration(probabilities: np.ndarray, labels: np.ndarray, bins: int):
    edges = np.linspace(0, 1, bins + 1)
    rows = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        mask = (probabilities >= lower) & (probabilities < upper)
        if not mask.any():
            continue
        rows.append((probabilities[mask].mean(), labels[mask].mean(), len(labels[mask])))
    total = np.zeros(3)
    for row in rows:
        total += np.asarray(row)
    return torch.tensor(total)
