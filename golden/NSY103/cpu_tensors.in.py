# golden: --unsafe-fixes
# Regression (issue 20): a branch on tensors that certainly live on the CPU (made with
# device="cpu", copied with .cpu(), tokenizer output) waits for no device: no finding.
# The same branch on the model's output is still reported.
import torch


def train(model, loader, optimizer, tokenizer):
    for x, text in loader:
        out = model(x)
        loss = out.sum()
        counts = torch.zeros(3, device="cpu")
        if counts.sum() > 0:
            print("seen", counts)
        host_out = out.detach().cpu()
        if (host_out > 0).any():
            print("positive output")
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        if (ids == 0).all():
            print("empty text")
        if (out > 0).any():
            print("positive output on the device")
        loss.backward()
        optimizer.step()
