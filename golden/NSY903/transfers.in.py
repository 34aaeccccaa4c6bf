import torch


def evaluate(model, loader):
    outputs = {}
    for step, (inputs, targets) in enumerate(loader):
        logits = model(inputs).detach()
        outputs[step] = logits.cpu()
        probs = logits.softmax(-1).cpu().numpy()
        ids = logits.argmax(-1).tolist()
        host = logits.to("cpu")
        moved = logits.to(device="cpu", dtype=torch.float64)
        explicit = logits.to(torch.device("cpu"))
    rows = [row.cpu() for row in logits.detach().unbind(0)]
    return outputs, probs, ids, host, moved, explicit, rows


def show(images):
    for index in range(len(images)):
        image = images[index].detach().cpu()
        pixels = image.numpy()
        yield pixels
