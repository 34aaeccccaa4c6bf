import argparse
import math
import os
import random
import time

import numpy as np
import torch


def metadata(x: torch.Tensor, args):
    a = x.shape  # kind: x.shape => host
    b = x.shape[0]  # kind: x.shape[0] => host
    c = x.size()  # kind: x.size() => host
    d = x.size(0)  # kind: x.size(0) => host
    e = x.numel()  # kind: x.numel() => host
    f = x.dim()  # kind: x.dim() => host
    g = x.ndim  # kind: x.ndim => host
    h = x.dtype  # kind: x.dtype => host
    i = x.device  # kind: x.device => host
    j = x.is_cuda  # kind: x.is_cuda => host
    k = x.requires_grad  # kind: x.requires_grad => host
    m = x.is_contiguous()  # kind: x.is_contiguous() => host
    n = x.stride()  # kind: x.stride() => host
    o = x.element_size()  # kind: x.element_size() => host
    p = len(x)  # kind: len(x) => host
    q = x.item()  # kind: x.item() => host
    r = x.tolist()  # kind: x.tolist() => host
    s = x.shape[0] > 0  # kind: x.shape[0] > 0 => host
    t = x is None  # kind: x is None => host
    u = x.numel() == 0  # kind: x.numel() == 0 => host
    v = x.type()  # kind: x.type() => host
    w = x.is_floating_point()  # kind: x.is_floating_point() => host
    return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, r, s, t, u, v, w


def literals_and_builtins(items):
    a = 1  # kind: 1 => host
    b = 2.5  # kind: 2.5 => host
    c = "text"  # kind: "text" => host
    d = f"{a} items"  # kind: f"{a} items" => host
    e = [1, 2, 3]  # kind: [1, 2, 3] => host
    f = range(10)  # kind: range(10) => host
    g = len(items)  # kind: len(items) => host
    h = True  # kind: True => host
    i = None  # kind: None => host
    j = a + b  # kind: a + b => host
    k = (a, b)  # kind: (a, b) => host
    m = {"lr": b}  # kind: {"lr": b} => host
    n = max(a, b)  # kind: max(a, b) => host
    o = not items  # kind: not items => host
    p = "%d steps" % a  # kind: "%d steps" % a => host
    return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p


def stdlib():
    a = math.exp(1.0)  # kind: math.exp(1.0) => host
    b = math.pi  # kind: math.pi => host
    c = time.time()  # kind: time.time() => host
    d = os.environ["RANK"]  # kind: os.environ["RANK"] => host
    e = random.random()  # kind: random.random() => host
    f = time.perf_counter() - c  # kind: time.perf_counter() - c => host
    return a, b, c, d, e, f


def numpy_values(data):
    arr = np.asarray(data)  # kind: np.asarray(data) => host
    m = arr.mean()  # kind: arr.mean() => host ;; arr => host
    v = m.item()  # kind: m.item() => host ;; m => host
    z = np.zeros(3) + 1  # kind: np.zeros(3) + 1 => host
    s = np.float32(2.0).item()  # kind: np.float32(2.0).item() => host
    w = arr[0]  # kind: arr[0] => host
    return m, v, z, s, w


def configuration():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()  # kind: parser.parse_args() => host
    lr = float(args.lr)  # kind: args.lr => host ;; float(args.lr) => host
    steps = args.steps * 2  # kind: args.steps * 2 => host
    return lr, steps


def config_param(cfg, hparams, x: torch.Tensor):
    warmup = cfg.train.warmup  # kind: cfg.train.warmup => host
    decay = cfg["decay"]  # kind: cfg["decay"] => host
    batch = hparams.batch_size  # kind: hparams.batch_size => host
    scaled = x * cfg.scale  # kind: x * cfg.scale => tensor ;; cfg.scale => host
    return warmup, decay, batch, scaled


class Trainer:
    def __init__(self, config):
        self.config = config
        self.steps = 0
        self.history = []

    def log(self):
        rate = self.config.lr  # kind: self.config.lr => host
        n = self.steps  # kind: self.steps => host
        h = self.history  # kind: self.history => host
        return rate, n, h
