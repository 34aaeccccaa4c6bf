# golden: --unsafe-fixes
import torch as T


class Model(T.nn.Module):
    def forward(self, x: T.Tensor) -> T.Tensor:
        out = x.relu()
        assert (out >= 0).all(), 'relu ' "is non-negative"
        return out
