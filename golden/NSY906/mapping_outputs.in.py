import torch
from torch import nn


class Distiller(nn.Module):
    def __init__(self, student: nn.Module, teacher: nn.Module):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def training_step(self, batches, show):
        for batch in batches:
            out = self.student(batch)
            with torch.no_grad():
                reference = self.teacher(batch)
            # The teacher's output is a mapping of tensors: its keys are names.
            out.update({f"teacher_{key}": value for key, value in reference.items()})
            labels = [f"teacher_{name}" for name in reference.keys()]  # negative
            for key, value in reference.items():
                show(f"{key}", value.item())  # negative: the key; positive: the value
            for value in reference.values():
                show(f"{value}")  # positive: a tensor
            show(labels)
