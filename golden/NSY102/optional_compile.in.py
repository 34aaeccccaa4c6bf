# golden: --unsafe-fixes
# Regression (issue 20, the form of torchtune's distillation losses): the loss class is
# compiled only in an optional method of its owner, and another owner keeps a plain
# instance. Its forward runs eagerly on those paths, where torch.cond would trace its
# branches on every call: reported without a fix. The owner's own forward is not
# compiled either.
import torch
import torch.nn as nn


class TokenLoss(nn.Module):
    def __init__(self, ignore_index: int = -100):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        keep = (labels != self.ignore_index).int()
        count = torch.sum(keep, dim=0)
        if count == 0:
            return torch.tensor(0.0, device=scores.device)
        return -torch.sum(scores * keep, dim=0) / count


class ChunkedTokenLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = TokenLoss()

    def apply_compile_strategy(self, *args, **kwargs):
        self.inner = torch.compile(self.inner, *args, **kwargs)
        return self

    def forward(self, chunks: list, labels: torch.Tensor) -> torch.Tensor:
        total = 0.0
        for chunk in chunks:
            total += self.inner(chunk, labels)
        keep = (labels != -100).int()
        count = torch.sum(keep, dim=0)
        if count == 0:
            return torch.tensor(0.0, device=labels.device)
        return total / count


class PairLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = TokenLoss()
        self.second = TokenLoss()

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.first(scores, labels) + self.second(scores, labels)
