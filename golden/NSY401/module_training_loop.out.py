# golden: --unsafe-fixes
# A script whose training loop is module-level code: its asserts run on every step and
# get the fix; the check after training keeps its AssertionError.
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]

for x, y in batches:
    loss = torch.nn.functional.mse_loss(model(x), y)
    if __debug__:
        torch._assert_async(torch.isfinite(loss), "loss is not finite")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

for p in model.parameters():
    assert torch.isfinite(p).all()
