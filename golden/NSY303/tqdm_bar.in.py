# golden: --unsafe-fixes
import torch
import torch.nn.functional as F
from tqdm import tqdm
from tqdm.auto import trange


def train(model, loader, epochs):
    bar = tqdm(loader)
    for x, y in bar:
        loss = F.cross_entropy(model(x), y)
        bar.set_postfix(loss=loss.item(), lr=1e-3)
        bar.set_postfix_str(f"loss={loss.item():.3f}")
    for epoch in (epochs_bar := trange(epochs)):
        loss = F.cross_entropy(model(x), y)
        epochs_bar.set_description(f"epoch {epoch} loss {loss.item():.2f}")
    with tqdm(total=len(loader)) as progress:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            progress.set_postfix({"loss": loss.item()})
