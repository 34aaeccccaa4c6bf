# golden: --unsafe-fixes
import torch
import torch.nn.functional as F
from tqdm import tqdm
from tqdm.auto import trange
from nosync_fix.runtime import deferred_call, fmt, item


def train(model, loader, epochs):
    bar = tqdm(loader)
    for x, y in bar:
        loss = F.cross_entropy(model(x), y)
        deferred_call(bar.set_postfix, loss=item(loss), lr=1e-3)
        deferred_call(bar.set_postfix_str, fmt("loss={:.3f}", item(loss)))
    for epoch in (epochs_bar := trange(epochs)):
        loss = F.cross_entropy(model(x), y)
        deferred_call(
            epochs_bar.set_description, fmt("epoch {} loss {:.2f}", epoch, item(loss))
        )
    with tqdm(total=len(loader)) as progress:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            deferred_call(progress.set_postfix, {"loss": item(loss)})
