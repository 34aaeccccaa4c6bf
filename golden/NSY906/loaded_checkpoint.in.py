import torch


def estimate(model, batches):
    scores = torch.zeros(len(batches))
    for k, batch in enumerate(batches):
        scores[k] = float(model(batch).mean())
    return scores.mean()


def train(model, batches, path, device, resume):
    best = 1e9
    if resume:
        state = torch.load(path, map_location=device)
        best = state["best"]  # a tensor saved from `estimate`, now on `device`
    for step in range(100):
        score = estimate(model, batches)  # a CPU tensor
        if score < best:  # positive: `best` may be on the device after a resume
            best = score
            torch.save({"best": best}, path)


def train_cpu_load(model, batches, path, resume):
    best = 1e9
    if resume:
        state = torch.load(path, map_location="cpu")
        best = state["best"]
    for step in range(100):
        score = estimate(model, batches)
        if score < best:  # negative: loaded onto the CPU
            best = score


def train_kept_on_host(model, batches, path, device, resume):
    best = 1e9
    if resume:
        state = torch.load(path, map_location=lambda storage, loc: storage)
        best = state["best"]
    for step in range(100):
        score = estimate(model, batches)
        if score < best:  # edge: a callable map_location is not taken for a device
            best = score
