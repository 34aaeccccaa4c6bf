import torch


@torch.no_grad()
def estimate_loss(model, batches):
    # A dict of CPU tensors: torch.zeros without a device, filled with numbers.
    out = {}
    for split in ["train", "val"]:
        losses = torch.zeros(len(batches))
        for k, (x, y) in enumerate(batches):
            losses[k] = float(torch.nn.functional.mse_loss(model(x), y))
        out[split] = losses.mean()
    return out


def on_device(model, batches, device):
    # The same on the device: reading its values waits.
    out = {}
    out["val"] = torch.zeros(len(batches), device=device).mean()
    return out


def updated(model, batches):
    # Filled in another way than `out[key] = value`: nothing is proven.
    out = {"train": torch.zeros(2).mean()}
    out.update(model.metrics())
    return out


def last_loss(model, x):
    return model(x).sum().cpu()


def train(model, batches, opt, device):
    seen = set()
    for step in range(100):
        losses = estimate_loss(model, batches)
        seen.add(losses["val"].item())  # negative: a CPU tensor
        print(f"val {losses['val']:.4f}")  # negative: formatting it reads no device
        seen.add(last_loss(model, batches[0][0]).item())  # negative: .cpu() returned
        far = on_device(model, batches, device)
        seen.add(far["val"].item())  # positive: made on the device
        other = updated(model, batches)
        seen.add(other["train"].item())  # edge: the dict is updated elsewhere


def evaluate(model, batches):
    results = [float(model(x).mean()) for x in batches]
    return torch.tensor(results).sum()


def keep_best(model, batches, splits):
    top = 0
    for split in splits:
        score = evaluate(model, batches) + evaluate(model, split)
        if score > top:  # negative: CPU tensors, and `top` is 0 or one of them
            top = score
            model.save()
