# golden: --unsafe-fixes
import torch


class Extremes(torch.nn.Module):
    def forward(self, scores: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        probs = scores.softmax(-1)
        best = torch.where(probs > 0.1, probs, float("-inf")).max()
        worst = torch.where(probs > 0.1, probs, float("inf")).min()
        count = ids.long()
        top_id = count[count > 0].max()
        return best - worst + top_id
