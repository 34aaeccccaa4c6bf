import numpy as np
import torch


@torch.no_grad()
def predict(model, loader):
    outputs = []
    for x in loader:
        outputs.append(model(x).softmax(dim=-1).cpu().numpy())
    outputs = np.concatenate(outputs)
    return outputs
