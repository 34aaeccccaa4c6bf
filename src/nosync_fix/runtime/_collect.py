"""Device sums and collected tensors turned back into the Python values the original made.

NSY201 and NSY202 keep values on the device inside a loop and convert them once,
after it. The guards that make that conversion exact live here, so that the fixed
code reads like what a careful person would write::

    losses.append(loss.detach())            # was: losses.append(loss.item())
    ...
    losses = to_host(losses, "item")        # after the loop

    total += python_precision(loss.detach())   # was: total += loss.item(), dtype unknown

Nothing here reads the device inside the loop; :func:`to_host` reads it once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: What ``to_host`` does to each collected tensor, one at a time.
_ONE_BY_ONE = {
    "item": lambda t: t.item(),
    "float": float,
    "int": int,
    "tolist": lambda t: t.tolist(),
    "numpy": lambda t: t.cpu().numpy(),
    "cpu": lambda t: t.cpu(),
}
#: The forms ``to_host`` accepts: the above, and "extend" (``list.extend(t.tolist())``).
FORMS = frozenset(_ONE_BY_ONE) | {"extend"}


def python_precision(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in the precision of the Python number its ``.item()`` gives.

    Python adds floats in float64 and integers exactly; a sum kept on the device
    gives the same bits only in float64 (floating tensors), int64 (integers and
    booleans) or complex128 (complex tensors). The dtype is looked up when the
    code runs, for reads whose dtype the fixer could not tell. Queues a cast, never
    waits for the device.
    """
    if tensor.is_complex():
        return tensor.to(torch.complex128)
    if tensor.is_floating_point():
        return tensor.double()
    return tensor.long()


@torch.compiler.disable
def to_host(values: Sequence[Any], how: str) -> list[Any]:
    """The list the original loop built from the collected device tensors in ``values``.

    ``how`` is the conversion the original applied to each tensor before appending it:
    ``"item"`` (``t.item()``), ``"float"``, ``"int"``, ``"tolist"``, ``"numpy"``
    (``t.cpu().numpy()``), ``"cpu"`` (``t.cpu()``), or ``"extend"``
    (``list.extend(t.tolist())``: the elements of each tensor, flattened one level).
    Elements that are not tensors (host values appended in the same loop) are kept as
    they are (for "extend": as one element).

    When every element is a tensor and they share dtype and device (and, for whole
    tensors, the shape after the first dimension; 0-dim tensors are stacked), they are
    joined with one ``torch.cat`` and moved with one transfer; otherwise each is converted on its
    own, exactly as the original did. Either way the result holds the same objects.

    Reading the device is the point of this function, so ``torch.compile`` does not
    trace it (``torch.compiler.disable``): called from compiled code it runs in eager
    mode at the one graph break that the original's own conversion made.
    """
    if how not in FORMS:
        raise ValueError(f"unknown conversion {how!r}; expected one of {sorted(FORMS)}")
    values = list(values)
    if not values:
        return []
    if all(type(v) is torch.Tensor for v in values):
        joined = _joined(values, how)
        if joined is not None:
            return joined
    if how == "extend":
        return [x for v in values
                for x in (v.tolist() if isinstance(v, torch.Tensor) else [v])]
    convert = _ONE_BY_ONE[how]
    return [convert(v) if isinstance(v, torch.Tensor) else v for v in values]


def _joined(values: list[torch.Tensor], how: str) -> list[Any] | None:
    """The result with one transfer, or None when the tensors cannot be joined exactly."""
    if how in ("item", "float", "int"):
        if len({(v.dtype, v.device) for v in values}) != 1:
            return None
        numbers = torch.cat([v.reshape(1) for v in values]).tolist()
        if how != "item":  # `float(t)` of an integer tensor, `int(t)` of a float or a bool
            numbers = [_ONE_BY_ONE[how](x) for x in numbers]
        return numbers
    if how == "tolist":
        if len({(v.dtype, v.device, v.shape) for v in values}) != 1:
            return None
        return torch.stack(values).tolist()
    if len({(v.dtype, v.device, v.shape[1:]) for v in values}) != 1:
        return None
    if values[0].dim() == 0:
        if how == "extend":
            return None  # `.tolist()` of a 0-dim tensor is a number: the original failed
        # 0-dim copies (`loss.sum().cpu()`): stacked, moved once, one tensor each again.
        parts = torch.stack(values).cpu().unbind()
        return [p.numpy() if how == "numpy" else p.clone() for p in parts]
    if how == "extend":
        return torch.cat(values).tolist()
    parts = torch.cat(values).cpu().split([len(v) for v in values])
    return [p.numpy() if how == "numpy" else p.clone() for p in parts]
