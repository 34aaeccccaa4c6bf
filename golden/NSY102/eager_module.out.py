# golden: --unsafe-fixes
# Regression (issue 20, torchtune's distillation losses): nothing in this file compiles the
# loss, and in eager mode torch.cond traces its branches on every call (forward and
# backward went from ~3 ms to ~350 ms). The branch is reported without a fix.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ForwardKLLoss(nn.Module):
    def __init__(self, ignore_index: int = -100):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(self, student_logits, teacher_logits, labels, normalize=True):
        teacher_prob = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
        inf_mask = torch.isinf(student_logits)
        student_logprob = F.log_softmax(student_logits, dim=-1, dtype=torch.float32)
        prod_probs = torch.masked_fill(teacher_prob * student_logprob, inf_mask, 0)
        x = torch.sum(prod_probs, dim=-1).view(-1)
        mask = (labels != self.ignore_index).int()
        if not normalize:
            return -torch.sum(x * mask.view(-1), dim=0)
        if torch.sum(mask.view(-1), dim=0) == 0:
            return torch.tensor(0.0, device=x.device)
        return -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)


class Student(nn.Module):
    def forward(self, x: torch.Tensor):
        norm = x.norm()
        def _then(norm, x):
            scale = 1.0 / norm
            x = x * scale
            return x
        def _else(norm, x):
            return x.clone()
        x = torch.cond(norm > 1.0, _then, _else, (norm, x))
        return x


# Another class is compiled: the loss still runs eagerly.
student = torch.compile(Student())
