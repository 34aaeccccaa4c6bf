# golden: --unsafe-fixes
# Regression (issue 20): asserts on CPU tensors (tokenizer ids, .cpu() copies) wait for
# no device: no finding. The assert on the loss is still rewritten.
import torch


def train(model, loader, optimizer, tokenizer):
    for x, text in loader:
        ids = tokenizer(text, return_tensors="pt").input_ids
        assert (ids >= 0).all(), "negative token id"
        out = model(x)
        host_out = out.detach().cpu()
        assert torch.isfinite(host_out).all()
        loss = out.sum()
        if __debug__:
            torch._assert_async(torch.isfinite(loss), "loss is not finite")
        loss.backward()
        optimizer.step()
