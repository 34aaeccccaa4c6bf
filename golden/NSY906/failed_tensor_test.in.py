import torch


def place_rates(optimizer, device):
    # `rate.detach()` is evidence that `rate` may be a tensor, but only where the test of
    # `torch.Tensor` holds: where it failed, the rate is anything but a tensor.
    for group in optimizer.param_groups:
        rate = group["lr"]
        if isinstance(rate, torch.Tensor):
            rate = rate.detach().to(device)
        else:
            rate = torch.tensor(float(rate), device=device)  # negative: no tensor here
        group["lr"] = rate


def show_rates(optimizer, show):
    for group in optimizer.param_groups:
        rate = group["lr"]
        if isinstance(rate, torch.Tensor):
            rate.detach()
        show(float(rate))  # positive: after the test, as before it
        show(float(rate) if not isinstance(rate, torch.Tensor) else 0.0)  # negative
        if isinstance(rate, torch.nn.Parameter):
            pass
        else:
            show(float(rate))  # positive: a tensor that is not a Parameter
        if isinstance(rate, torch.Tensor):
            pass
        else:
            rate = group["base_lr"]
            show(float(rate))  # edge: bound again in the branch, before the use


def show_losses(model, batches, show):
    for x in batches:
        out = model(x)
        if isinstance(out, torch.Tensor):
            loss = out
        else:
            loss = out[0]  # a model's tuple holds tensors: not narrowed to the host
        show(loss.item())  # positive
