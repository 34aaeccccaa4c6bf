# golden: --unsafe-fixes
import torch
from tqdm import tqdm
from nosync_fix.runtime import deferred_call, fmt, item


def train(model, loader, optimizer):
    bar = tqdm(loader)
    for step, x in enumerate(bar):
        loss = torch.nn.functional.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        # positive, reported only: the bar formats a tensor with str() at once
        bar.set_postfix(loss=loss)
        bar.set_postfix({"loss": loss, "step": step}, refresh=False)
        bar.set_postfix_str(loss.detach())
        # positive, fixed: a read, and a tensor formatted into the text
        deferred_call(bar.set_postfix, loss=item(loss))
        deferred_call(bar.set_description, fmt("loss {}", loss))
        # negative: host values, a CPU tensor
        bar.set_postfix(step=step, refresh=False)
        bar.set_postfix(seen=torch.tensor(step))
