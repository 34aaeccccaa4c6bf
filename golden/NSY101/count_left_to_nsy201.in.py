# A count kept under a device condition in a loop is NSY201's: one finding per `if`.
import torch


def train(model, loader, optimizer, max_norm=1.0):
    clipped = 0
    for x in loader:
        model(x).sum().backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if norm > max_norm:  # negative here: NSY201 counts it on the device
            clipped += 1
        optimizer.step()
    return clipped


@torch.compile
def once(model, max_norm=1.0):
    clipped = 0
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if norm > max_norm:  # edge: compiled, no loop: NSY201 does not take it
        clipped += 1
    return clipped


def with_else(model, loader, max_norm=1.0):
    kept = 0
    for x in loader:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if norm > max_norm:  # positive: an `else` is no count NSY201 rewrites
            kept += 1
        else:
            kept -= 1
    return kept
