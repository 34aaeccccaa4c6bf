import torch


def train_step(x: torch.Tensor, loss: torch.Tensor, history):
    for _ in range(2):
        filled = torch.full((3,), loss.item())
        scaled = x * int(loss)
        history.append(loss.item())
        x[0] = loss.item()
        value = float(loss)
        print(value)
    return filled, scaled
