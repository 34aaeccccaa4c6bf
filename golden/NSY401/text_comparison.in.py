# golden: --unsafe-fixes
# Regression (Lightning's wrapper tests): a module's output compared with a string is a
# host bool, never a tensor, so the assert must stay a plain assert.
import torch


class Wrapped(torch.nn.Module):
    def forward(self):
        return "forward_return"

    def training_step(self, batch):
        assert self() == "forward_return"
        assert "done" != self(), "the wrapper must forward"
        return batch
