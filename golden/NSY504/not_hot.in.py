import torch


def load(state, reference: torch.Tensor):
    weight = torch.as_tensor(state["weight"])
    if not torch.equal(weight, reference):
        raise ValueError("checkpoint does not match")
    return weight
