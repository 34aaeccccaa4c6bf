# golden: --unsafe-fixes
import torch


def evaluate(model, loader, tokenizer, texts):
    total = 0.0
    hits = 0
    tokens = 0
    scaled = 0.0
    on_device = 0.0
    for batch, text in zip(loader, texts):
        counts = torch.tensor(batch, device="cpu")
        total += counts.sum().item()
        scores = model(batch).cpu()
        hits += (scores > 0).sum().item()
        scaled += (scores * 2 - 1).mean().item()
        encoded = tokenizer(text, return_tensors="pt")
        tokens += encoded["attention_mask"].sum().item()
        on_device += (model(batch) > 0).sum().detach().double()
    on_device = float(on_device)
    return total, hits, tokens, scaled, on_device
