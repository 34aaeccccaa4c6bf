import numpy as np
import torch
import torch.nn.functional as F


def train(model, loader, gate):
    history = []
    for x in loader:
        out = torch.relu(model(x))
        # Host values: not reads.
        n = np.float32(3.0).item()
        k = int(x.shape[0])
        cpu_total = torch.zeros(3).tolist() + [torch.tensor(1.0).item()]  # made on the host
        # Truth tests of device values, a formatted tensor, copies to the host.
        flag = out.mean() > 0 and gate
        history.append(f"{out.mean()}")
        arrays = model(x).detach().cpu().numpy()
        if not torch.compiler.is_compiling():
            debug = out.sum().item()  # guarded: deliberate
        # A Python number through a mask is a masked_fill_ (no wait); an integer index
        # is no mask.
        out[out < 0] = 0.0
        out[0] = 1.0
        model.eval().cpu()  # a module, not a tensor
        history.append((flag, arrays, n, k, cpu_total))
    return history


def eval_step(model, x):
    loss = F.mse_loss(model(x), x)
    return f"{loss:.3f}"
