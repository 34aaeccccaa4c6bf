import torch

weights = torch.randn(10)
print(f"initial norm {weights.norm().item():.3f}")


def summarize(model):
    total = sum(p.numel() for p in model.parameters())
    print(f"parameters {total} mean {model.weight.mean().item():.4f}")
