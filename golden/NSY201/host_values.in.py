import argparse

import numpy as np
import torch


def run(args, loader):
    weights = np.ones(4)
    seen = 0
    lr_sum = 0.0
    score = 0.0
    for x in loader:
        seen += x.shape[0]
        lr_sum += float(args.lr)
        score += weights.sum().item()
        score += np.float32(1.5).item()
    return seen, lr_sum, score


class Meter:
    def item(self):
        return 1.0


def custom(meters):
    total = 0.0
    for m in meters:
        total += m.item()
    return total
