# Issue 18 form e: a count kept under a device condition is counted on the device.
import torch


def train(model, loader, optimizer, loss_fn, max_norm=1.0):
    clipped = 0
    skipped = 0.0
    weighted = 0
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        # count the clipped steps
        if norm > max_norm:
            clipped += 1
        if torch.isnan(norm):
            skipped += 1
        if norm > 2 * max_norm:
            weighted += 3
        optimizer.step()
    return clipped, skipped, weighted


def negatives(model, loader, max_norm, log):
    mixed = 0
    shown = 0
    host = 0
    for step, (x, y) in enumerate(loader):
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if norm > max_norm:
            mixed += 0.5  # int start, float step: int or float depending on the run
        if norm > max_norm:
            shown += 1
        log(shown)  # read every step
        if step > 3:
            host += 1
        if norm > max_norm:
            host += 1
        else:
            host -= 1
    return mixed, shown, host
