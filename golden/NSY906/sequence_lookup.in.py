# A list, tuple or string indexed by a tensor calls its `__index__`: a read of the device
# (the PyTorch tutorial's `classes[predicted[j]]`).
import torch

classes = ("plane", "car", "bird")


def train(model, loader, log, table):
    names = ["a", "b", "c"]
    counts = {"a": 1}
    for x in loader:
        out = torch.relu(model(x))
        out.sum().backward()
        predicted = out.argmax(dim=1)
        # positive
        log(classes[predicted[0]])
        log(names[out.argmax()])
        log("abc"[predicted[1]])
        # negative: a dict (hashed, not read), a value of unknown kind, a tensor indexed
        # by a tensor, host indices
        log(counts.get(out.argmax()))
        log(table[out.argmax()])
        log(out[predicted])
        log(names[0], classes[len(names) - 1])
