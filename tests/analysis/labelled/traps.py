"""Traps: things that look like device reads but are not, and things that look harmless."""

import numpy as np
import torch
from torch.utils.data import Dataset


class Meter:
    def __init__(self):
        self.total = 0.0

    def item(self):
        return self.total


def custom_item(meter: Meter, values):
    v = meter.item()  # kind: meter.item() => host ;; meter => host?
    arr = np.array(values)
    w = arr.sum().item()  # kind: arr.sum() => host ;; arr.sum().item() => host
    return v, w


def mixed_assignments(flag, t: torch.Tensor):
    value = 0.0
    if flag:
        value = t.sum()
    out = value  # kind: value => unknown
    return out


def reassigned_to_host(t: torch.Tensor):
    t = t.item()
    u = t  # kind: t => host
    return u


def shape_reads(x: torch.Tensor):
    if x.shape[0] > 0:  # kind: x.shape[0] > 0 => host
        pass
    if x.numel():  # kind: x.numel() => host
        pass
    n = len(x) - 1  # kind: len(x) - 1 => host
    return n


class Tokens(Dataset):
    def __init__(self, rows):
        self.rows = rows
        self.table = torch.linspace(0, 1, 10).tolist()  # kind: torch.linspace(0, 1, 10).tolist() => host

    def __getitem__(self, index):
        row = torch.as_tensor(self.rows[index])  # kind: torch.as_tensor(self.rows[index]) => tensor
        return row.sum().item()  # kind: row.sum().item() => host

    def __len__(self):
        return len(self.rows)  # kind: len(self.rows) => host


def model_moved_in_place(model, batch, device):
    model.to(device)
    model.train()
    out = model  # kind: model => unknown
    return out


def optimizer_named_opt(opt, params):
    opt.step()
    for p in params:  # kind: p => unknown
        pass


def string_index_of_model_output(model, x):
    out = model(x)  # kind: out => unknown
    logits = out["logits"]  # kind: out["logits"] => unknown
    return logits


def walrus(x: torch.Tensor):
    if (n := x.sum()) > 0:  # kind: (n := x.sum()) > 0 => tensor
        pass
    return n  # kind: n => tensor


def sizes_passed_to_functional(x, size, dim, scale):
    y = torch.nn.functional.interpolate(x, size)  # kind: size => unknown ;; x => tensor
    z = torch.nn.functional.softmax(x, dim)  # kind: dim => unknown
    w = torch.max(x, dim)  # kind: dim => unknown
    return y, z, w, scale


class ReturnsText(torch.nn.Module):
    def forward(self):
        return "forward_return"

    def check(self):
        # A module call compared with a string (Lightning's wrapper tests): no tensor
        # compares to text, so this is a host bool and the assert must stay an assert.
        assert self() == "forward_return"  # kind: self() == "forward_return" => host
        same = f"{self.training}" != self()  # kind: f"{self.training}" != self() => host
        return same
