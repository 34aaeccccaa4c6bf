# golden: --unsafe-fixes
# Regression: pytest test functions are not hot paths; their asserts are the test.
import torch


def test_loss_is_finite(model, loader):
    for x in loader:
        loss = model(x).sum()
        assert torch.isfinite(loss), "loss diverged"
        assert loss.item() < 100.0
