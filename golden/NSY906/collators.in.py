# golden: --select NSY201,NSY301,NSY902,NSY906
from dataclasses import dataclass

import torch
from torch import nn


class Collator:
    pass


class MultiModalCollator(Collator):
    # A collator runs in the data pipeline, on host tensors: none of its methods is hot.
    def __call__(self, batch):
        sizes = [self._size(sample) for sample in batch]
        return torch.stack([s["pixels"] for s in batch]), sizes

    def _size(self, sample):
        total = 0
        for grid in sample["grids"]:
            total += grid.prod().item()
        return total


@dataclass
class DataCollatorForSpans:
    max_span: int = 5

    def mask_tokens(self, labels):
        for i in range(labels.size(0)):
            span = torch.randint(1, self.max_span + 1, (1,)).item()
            labels[i, :span] = -100
        return labels


class PackingCollator(MultiModalCollator):
    def _size(self, sample):
        return [grid.sum().item() for grid in sample["grids"]]


class Packer:
    # Not a collator: its loop is hot as any other.
    def _size(self, sample):
        total = 0
        for grid in sample["grids"]:
            total += grid.prod().item()
        return total


class EmbeddingCollator(nn.Module):
    # A model named like a collator: its forward is hot.
    def forward(self, x):
        for row in x:
            print(row.sum().item())
        return x
