import torch


def train(model, batches, reference):
    # `torch.allclose` reads the device whatever its arguments are: nothing here is known
    # to be a tensor, and the pre-filter once skipped the file for that.
    for batch in batches:
        out = model(batch)
        assert torch.allclose(out.weight, reference.weight)
