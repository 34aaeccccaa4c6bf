# A loss handed to a backward pass is a tensor, even beside numpy (whose arrays
# have `.item()` too): Accelerate's, Fabric's and DeepSpeed's `backward(loss)`
# call `loss.backward()`, and a scaled iterable has no `backward`.
import numpy as np
import torch


def accelerate_steps(model, loader, optimizer, accelerator):
    for batch in loader:
        total_loss = 0.0
        for micro in batch:
            loss = model(micro)
            total_loss += loss.item()
            accelerator.backward(loss)
        optimizer.step()
        print(f"loss {total_loss:.4f}")


def scaled_steps(model, loader, optimizer, scaler):
    total = 0.0
    for batch in loader:
        loss = model(batch)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        total += loss.item()
    return total


# Not evidence: torch.autograd.backward also takes a sequence of tensors.
def autograd_steps(model, loader):
    total = 0.0
    for batch in loader:
        out = model(batch)
        torch.autograd.backward(out)
        total += out.item()
    return total


# Not evidence: a `backward` given more than the loss is some other method.
def two_arguments(model, loader, layer):
    total = 0.0
    for batch in loader:
        out = model(batch)
        layer.backward(out, 2)
        total += out.item()
    return total


# Edge: an array the analysis knows (np.asarray) stays one, handed to `backward` or not.
def numpy_layer(layer, loader):
    total = 0.0
    for batch in loader:
        grad = np.asarray(batch).mean()
        layer.backward(grad)
        total += grad.item()
    return total
