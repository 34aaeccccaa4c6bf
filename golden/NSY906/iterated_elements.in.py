import torch


def describe(weights):
    text = ""
    for i, w in enumerate(weights):
        text += "{:+.2f} x^{} ".format(w, i + 1)  # positive: every call passes a tensor
    return text


def describe_list(values):
    text = ""
    for i, v in enumerate(values):
        text += "{:+.2f} x^{} ".format(v, i + 1)  # negative: a call passes a list
    return text


def describe_host(values):
    return [f"{v:.2f}" for v in values]  # negative: only tensors made on the host


def describe_passed(values):
    return [f"{v:.2f}" for v in values]  # edge: passed on as a value, other callers unknown


def main(vocab):
    fc = torch.nn.Linear(4, 1)
    print(describe(fc.weight.view(-1)))
    print(describe(fc.bias))
    print(describe_list(fc.weight.view(-1)))
    print(describe_list([0.5, 1.5]))
    print(describe_host(torch.arange(4.0)))
    print(describe_host(torch.zeros(4).cpu()))
    hooks = [describe_passed]
    print(hooks[0](fc.weight.view(-1)))

    model = torch.nn.Transformer()
    model.eval()
    x = torch.zeros(1, 4, dtype=torch.long)
    y = model.generate(x, 20)[0]
    print("".join([vocab[int(i)] for i in y]))  # positive: generate of a module
    sampler = make_sampler()
    z = sampler.generate(x, 20)[0]
    print("".join([vocab[int(i)] for i in z]))  # negative: not known to be a module
    for k, t in enumerate(y):
        print(f"{k:3d}")  # edge: formats the index, not the element


def make_sampler():
    return None
