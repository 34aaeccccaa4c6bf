# golden: --unsafe-fixes
# Regression (detectron2's keypoint decoding): TorchScript compiles functions decorated
# with torch.jit.script / script_if_tracing and rejects `if __debug__:`, so asserts
# there are reported without a fix. Undecorated code keeps its fix.
import torch


@torch.jit.script_if_tracing
def decode(maps: torch.Tensor) -> torch.Tensor:
    for i in range(maps.shape[0]):
        assert (maps[i] >= 0).all()
    return maps * 2


@torch.jit.script
def scripted(maps: torch.Tensor) -> torch.Tensor:
    for i in range(maps.shape[0]):
        assert (maps[i] >= 0).all()
    return maps * 2


def eager(maps: torch.Tensor) -> torch.Tensor:
    for i in range(maps.shape[0]):
        if __debug__:
            torch._assert_async((maps[i] >= 0).all())
    return maps * 2
