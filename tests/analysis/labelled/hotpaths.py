import functools
import torch
import torch.nn as nn
from torch.utils.data import Dataset

LIMIT = torch.ones(1).item()  # cold


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        for _ in range(3):
            self.fc.weight.data.mul_(0.5)  # cold

    def forward(self, x):
        y = self.fc(x)  # hot
        return y  # hot

    def extra_repr(self):
        return "net"  # cold


class Pairs(Dataset):
    def __getitem__(self, i):
        for j in range(3):
            i += j  # cold
        return i  # cold

    def __len__(self):
        return 10  # cold


class Lit(nn.Module):
    def training_step(self, batch, batch_idx):
        loss = batch.sum()  # hot
        return loss  # hot

    def configure_optimizers(self):
        return None  # cold


def collate_fn(samples):
    for s in samples:
        s.float()  # cold


@torch.compile
def compiled(x):
    return x.sin()  # hot


@torch.compile(backend="aot_eager")
def compiled_with_options(x):
    return x.cos()  # hot


def passed_to_compile(x):
    return x.exp()  # hot


fast = torch.compile(passed_to_compile)


def train(model, loader, optimizer):
    model.train()  # cold
    total = 0.0  # cold
    for x in loader:
        loss = model(x).sum()  # hot
        if loss > 0:  # hot
            total += 1  # hot
    print(total)  # cold
    values = [t.item() for t in loader]  # cold
    squares = [v * v for v in values]  # cold
    while total > 0:
        total -= 1  # hot
    return total  # cold


def guarded(x):
    for _ in range(3):
        if not torch.compiler.is_compiling():
            print(x.item())  # cold
        x = x + 1  # hot


def evaluate(loader):
    for epoch in range(2):
        for x in loader:
            pass
        print(epoch)  # hot


if __name__ == "__main__":
    result = train(None, [], None)  # cold
    for step in range(3):
        print(step)  # hot


def test_training_loop_converges(model, loader):
    # A pytest test: its reads and asserts are what it checks, never a hot path.
    for x in loader:
        loss = model(x).sum()  # cold
        assert loss.item() < 10  # cold


class LitModel(torch.nn.Module):
    def test_step(self, batch, batch_idx):
        return self(batch).sum()  # hot


def rope_update(rope_forward):
    # A decorator of forward methods (Hugging Face's RoPE): the wrapper it returns runs
    # as the forward, and so does the helper beside it that the wrapper calls.
    def switch(self, position_ids):
        seq_len = position_ids.max() + 1  # hot
        return seq_len  # hot

    def unused(self):
        return 1  # cold

    @functools.wraps(rope_forward)
    def wrapper(self, x, position_ids):
        switch(self, position_ids)  # hot
        return rope_forward(self, x, position_ids)  # hot

    return wrapper  # cold


def plain_decorator(fn):
    # Wrapping something that is not named as a forward: nothing says it is traced.
    def helper(x):
        return x  # cold

    @functools.wraps(fn)
    def wrapper(x):
        return helper(x)  # cold

    return wrapper  # cold
