# golden: --unsafe-fixes
import torch


class Extremes(torch.nn.Module):
    def forward(self, scores: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        probs = scores.softmax(-1)
        best = probs[probs > 0.1].max()
        worst = probs[probs > 0.1].amin()
        count = ids.long()
        top_id = count[count > 0].max()
        return best - worst + top_id
