import torch
import torch as T
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor, nn as tnn
from torch.nn.utils import clip_grad_norm_


class Encoder(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = tnn.LayerNorm(width)
        self.register_buffer("scale", torch.ones(width))
        self.gain = nn.Parameter(torch.zeros(1))
        self.width = width
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(2)])

    def forward(self, x: Tensor) -> Tensor:
        h = self.proj(x)  # kind: self.proj(x) => tensor ;; self.proj => host ;; x => tensor
        h = self.norm(h) * self.scale  # kind: self.norm(h) => tensor ;; self.scale => tensor
        g = self.gain.exp()  # kind: self.gain => tensor ;; self.gain.exp() => tensor
        w = self.width  # kind: self.width => host
        for block in self.blocks:  # kind: self.blocks => host
            h = block(h)  # kind: block(h) => tensor ;; block => host
        return h * g  # kind: h * g => tensor


def factories(n):
    a = torch.zeros(3)  # kind: torch.zeros(3) => tensor
    b = T.ones(2, 2)  # kind: T.ones(2, 2) => tensor
    c = torch.arange(n)  # kind: torch.arange(n) => tensor
    d = torch.randn(4, generator=None)  # kind: torch.randn(4, generator=None) => tensor
    e = torch.tensor([1.0, 2.0])  # kind: torch.tensor([1.0, 2.0]) => tensor
    f = torch.full((2,), 3.0)  # kind: torch.full((2,), 3.0) => tensor
    g = torch.linspace(0, 1, 5)  # kind: torch.linspace(0, 1, 5) => tensor
    h = torch.empty_like(a)  # kind: torch.empty_like(a) => tensor
    i = torch.cat([a, c])  # kind: torch.cat([a, c]) => tensor ;; [a, c] => host
    j = torch.where(a > 0, a, b)  # kind: torch.where(a > 0, a, b) => tensor ;; a > 0 => tensor
    k = torch.linalg.norm(a)  # kind: torch.linalg.norm(a) => tensor
    m = torch.fft.rfft(a)  # kind: torch.fft.rfft(a) => tensor
    return a, b, c, d, e, f, g, h, i, j, k, m


def functional(x: torch.Tensor, y: "torch.Tensor"):
    p = F.relu(x)  # kind: F.relu(x) => tensor
    q = F.softmax(x, dim=-1)  # kind: F.softmax(x, dim=-1) => tensor
    loss = F.cross_entropy(p, y)  # kind: F.cross_entropy(p, y) => tensor ;; y => tensor?
    r = torch.nn.functional.gelu(x)  # kind: torch.nn.functional.gelu(x) => tensor
    return p, q, loss, r


def methods_and_operators(x: torch.Tensor, s: float):
    a = x.sum()  # kind: x.sum() => tensor
    b = x.mean(dim=0).abs()  # kind: x.mean(dim=0).abs() => tensor
    c = x.view(-1).float()  # kind: x.view(-1).float() => tensor
    d = x + 1  # kind: x + 1 => tensor
    e = 2.0 * x  # kind: 2.0 * x => tensor
    f = x @ x.T  # kind: x @ x.T => tensor ;; x.T => tensor
    g = -x  # kind: -x => tensor
    h = x[0]  # kind: x[0] => tensor
    i = x[:, 1:]  # kind: x[:, 1:] => tensor
    j = x > s  # kind: x > s => tensor ;; s => host
    k = (x == 0).sum()  # kind: (x == 0).sum() => tensor
    m = x.clone().detach()  # kind: x.clone().detach() => tensor
    n = x.to("cuda", non_blocking=True)  # kind: x.to("cuda", non_blocking=True) => tensor
    o = x.cpu()  # kind: x.cpu() => tensor
    p = x.grad  # kind: x.grad => tensor
    q = x.data  # kind: x.data => tensor
    r = x.max(dim=1)  # kind: x.max(dim=1) => tensor
    values, indices = torch.max(x, 1)  # kind: values => tensor ;; indices => tensor
    t = abs(x)  # kind: abs(x) => tensor
    u = x if s > 0 else x * 2  # kind: x if s > 0 else x * 2 => tensor
    return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, r, t, u


def modules_and_criteria(batch):
    model = Encoder(8)  # kind: Encoder(8) => host
    head = nn.Sequential(nn.Linear(8, 2), nn.ReLU())  # kind: nn.Sequential(nn.Linear(8, 2), nn.ReLU()) => host
    criterion = nn.CrossEntropyLoss()  # kind: nn.CrossEntropyLoss() => host
    compiled = torch.compile(model)  # kind: torch.compile(model) => host
    out = head(model(batch))  # kind: head(model(batch)) => tensor ;; model(batch) => tensor
    out2 = compiled(batch)  # kind: compiled(batch) => tensor
    loss = criterion(out, batch)  # kind: criterion(out, batch) => tensor
    norm = clip_grad_norm_(model.parameters(), 1.0)  # kind: clip_grad_norm_(model.parameters(), 1.0) => tensor
    norm2 = torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)  # kind: torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0) => tensor
    weight = head[0].weight  # kind: head[0].weight => tensor ;; head[0] => host
    for p in model.parameters():  # kind: model.parameters() => host
        g = p.grad  # kind: p => tensor ;; p.grad => tensor
    for name, param in model.named_parameters():  # kind: name => host ;; param => tensor
        pass
    return out, out2, loss, norm, norm2, weight


def evidence(loader, device):
    for x, y in loader:
        x = x.to(device)  # kind: x.to(device) => tensor?
        y = y.cuda(non_blocking=True)  # kind: y.cuda(non_blocking=True) => tensor?
        pred = x.argmax(1)  # kind: x => tensor ;; pred => tensor? ;; x.argmax(1) => tensor
        correct = (pred == y).sum()  # kind: (pred == y).sum() => tensor ;; y => tensor
    return correct


def backward_evidence(model, batch):
    loss = model(batch)  # kind: model(batch) => tensor?
    loss.backward()
    value = loss.detach()  # kind: loss => tensor ;; loss.detach() => tensor
    out = batch.logits  # kind: batch.logits => unknown
    probs = out.detach().softmax(-1)  # kind: out.detach().softmax(-1) => tensor ;; out.detach() => tensor
    return value, probs


def helper_returns_tensor(x):
    return torch.sigmoid(x)


def calls_helper(x):
    y = helper_returns_tensor(x)  # kind: helper_returns_tensor(x) => tensor
    return y


def optional_and_annotated(mask: torch.Tensor | None, lengths: list[torch.Tensor],
                           ratio: float, count: int, name: str):
    if mask is not None:  # kind: mask is not None => host ;; mask => tensor
        pass
    for length in lengths:  # kind: lengths => host
        total = length.sum()  # kind: length => tensor ;; length.sum() => tensor
    label = name + ":"  # kind: name => host ;; name + ":" => host
    return ratio * count  # kind: ratio * count => host ;; ratio => host


def argument_evidence(model, data, target):
    output = model(data)
    loss = torch.nn.functional.nll_loss(output, target)  # kind: output => tensor ;; target => tensor
    pred = output.argmax(dim=1, keepdim=True)  # kind: pred => tensor? ;; output.argmax(dim=1, keepdim=True) => tensor
    hits = pred.eq(target.view_as(pred)).sum()  # kind: pred.eq(target.view_as(pred)).sum() => tensor
    flags = torch.isnan(data)  # kind: data => tensor
    parts = torch.cat(chunks(data))  # kind: chunks(data) => host
    return loss, hits, flags, parts


def chunks(x):
    return [x]


def mapping_outputs(teacher: nn.Module, batch):
    out = teacher(batch)
    # A model's output that is iterated as a mapping holds tensors under names.
    for key, value in out.items():  # kind: key => unknown ;; value => tensor
        pass
    names = [f"dist_{name}" for name in out.keys()]  # kind: name => unknown
    return names


def numpy_columns(dataset, per_task):
    column = dataset.data.column("task_index").to_numpy()  # kind: column => host
    frames = (column == 3).nonzero()[0][:per_task]
    return frames.tolist()  # kind: frames => host
