# golden: --unsafe-fixes
# Regression (issue 20): asserts in a check script and in test helpers are the check
# itself. They keep raising AssertionError at their line: no finding, no fix.
import torch


def assert_same_outputs(model, reference, batches):
    for batch in batches:
        assert torch.allclose(model(batch), reference(batch)), "outputs differ"


def _check_finite(tensors):
    for t in tensors:
        assert torch.isfinite(t).all()


def load_and_verify(path):
    state = torch.load(path)
    assert torch.isfinite(state["weight"]).all(), "corrupt checkpoint"
    return state


model = torch.nn.Linear(4, 4)
for name, p in model.named_parameters():
    assert torch.isfinite(p).all(), name

if __name__ == "__main__":
    for x in [torch.ones(4), torch.zeros(4)]:
        assert (model(x) != 0).any(), "dead layer"
