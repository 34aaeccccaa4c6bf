import torch


@torch.compile(backend="aot_eager")
def step(model, x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    print(f"loss {loss.item():.4f}")
    return loss
