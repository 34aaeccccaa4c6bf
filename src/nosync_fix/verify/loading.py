"""Loading the two versions of a file as isolated modules, seeding, and getting inputs.

Each version is executed into a fresh module object every time it is needed,
so that models, optimizers and other globals are never shared between the
versions or carried over from one measurement to the next. Both versions are
seeded identically before they are executed, before their inputs are made and
before the entry is called.
"""

from __future__ import annotations

import ast
import inspect
import io
import itertools
import linecache
import os
import random
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

_names = itertools.count()


class VerifyUsageError(ValueError):
    """The verifier was asked something it cannot do (exit code 2 on the command line)."""


@dataclass(frozen=True)
class Source:
    """One version of the file under test."""

    label: str  # "before" or "after"
    text: str
    #: The name its code objects carry: its path, or a synthetic name for an in-memory fix.
    filename: str
    #: The name messages use (as the user gave it).
    display: str = ""

    @property
    def name(self) -> str:
        return self.display or self.filename


@dataclass
class Loaded:
    """A fresh module of one version and what the verifier needs from it."""

    source: Source
    module: types.ModuleType
    entry: Callable[..., Any]
    inputs: Callable[..., Any]


def seed_everything(seed: int) -> None:
    """The same random state for both versions: Python, torch (all devices), numpy if loaded."""
    random.seed(seed)
    torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def register_source(source: Source) -> None:
    """Make tracebacks, dynamo's messages and our reports able to show the lines."""
    lines = source.text.splitlines(keepends=True)
    linecache.cache[source.filename] = (len(source.text), None, lines, source.filename)


class LoadedModules:
    """Keeps track of the modules created for one verification and removes them at the end."""

    def __init__(self, package: str | None = None) -> None:
        self._names: list[str] = []
        #: The package the file belongs to: its relative imports resolve there.
        self.package = package

    def load(self, source: Source, seed: int, *, tree: ast.Module | None = None,
             extra_globals: dict[str, Any] | None = None) -> types.ModuleType:
        """Execute ``source`` (or its rewritten ``tree``) into a new module, seeded with ``seed``.

        Output printed while the module is executed is discarded.
        """
        name = f"_nosync_verify_{source.label}_{next(_names)}"
        module = types.ModuleType(name)
        module.__file__ = source.filename
        if self.package:
            module.__package__ = self.package
        if extra_globals:
            module.__dict__.update(extra_globals)
        register_source(source)
        code = compile(tree if tree is not None else source.text, source.filename, "exec",
                       dont_inherit=True)
        # Registered while it lives: dataclasses, pickling and typing look modules up by name.
        sys.modules[name] = module
        self._names.append(name)
        seed_everything(seed)
        with quiet():
            exec(code, module.__dict__)
        return module

    def close(self) -> None:
        for name in self._names:
            sys.modules.pop(name, None)
        self._names.clear()


class Sink(io.TextIOBase):
    """Where discarded output goes (recognisable, so that handlers bound to it can be found)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


@contextmanager
def quiet() -> Iterator[None]:
    """Discard what the code under test prints."""
    sink = Sink()
    with redirect_stdout(sink), redirect_stderr(sink):
        yield


@contextmanager
def importable_from(directory: str) -> Iterator[None]:
    """Let the file import its neighbours, as ``python file.py`` would."""
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass


def package_of(path: Path) -> tuple[str | None, Path]:
    """The dotted package a file belongs to (None: not in a package), and the directory to
    import from: the one above its top package, as ``python -m pkg.mod`` run there would,
    or the file's own directory, as ``python file.py`` would."""
    path = path.resolve()
    parts: list[str] = []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts:
        return None, path.parent
    return ".".join(parts), folder


def resolve_module(spec: str) -> tuple[Path, str | None]:
    """``pkg.mod`` or ``pkg.mod:entry`` as (the module's file, the entry or None), found on
    the current directory and ``sys.path`` (its parent packages are imported, as by -m)."""
    import importlib.util

    name, _, entry = spec.partition(":")
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise VerifyUsageError(f"{spec!r} is neither a file nor a module (pkg.mod[:entry])")
    sys.path.insert(0, os.getcwd())
    try:
        with quiet():
            found = importlib.util.find_spec(name)
    except Exception as error:  # a parent package that fails to import, say
        raise VerifyUsageError(f"cannot find module {name!r}: {type(error).__name__}: "
                               f"{error}") from None
    finally:
        sys.path.remove(os.getcwd())
    if found is None or not found.origin or not found.origin.endswith(".py"):
        raise VerifyUsageError(f"no Python source for module {name!r}")
    return Path(found.origin), entry or None


def function(module: types.ModuleType, name: str, role: str, filename: str) -> Callable[..., Any]:
    value = getattr(module, name, None)
    if value is None:
        raise VerifyUsageError(f"{filename} has no {role} function {name!r}")
    if not callable(value):
        raise VerifyUsageError(f"{filename}: {name!r} is not callable")
    return value


class NoAdversarialInput(Exception):
    """The inputs function returned None for an ``adversarial=`` kind: nothing to try."""


def make_inputs(inputs: Callable[..., Any], seed: int, device: str,
                filename: str, adversarial: str | None = None,
                ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Call the inputs function and normalise what it returns to ``(args, kwargs)``.

    The device is passed as ``device=`` when the function accepts it; otherwise
    tensors and modules in the result are moved to the device afterwards.
    ``adversarial`` (a kind of :mod:`.adversarial`) is passed as ``adversarial=``
    to a function that takes that keyword; a None it returns raises
    :class:`NoAdversarialInput`.
    """
    accepts_device = _accepts(inputs, "device")
    options: dict[str, Any] = {"device": device} if accepts_device else {}
    if adversarial is not None and _has_parameter(inputs, "adversarial"):
        options["adversarial"] = adversarial
    seed_everything(seed)
    with quiet():
        value = inputs(seed, **options)
    if value is None and "adversarial" in options:
        raise NoAdversarialInput(adversarial)
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple):
        raise VerifyUsageError(
            f"{filename}: {getattr(inputs, '__name__', 'inputs')}(seed) must return a tuple "
            f"of arguments or (args, kwargs), not {type(value).__name__}")
    if (len(value) == 2 and isinstance(value[0], (tuple, list))
            and isinstance(value[1], dict) and all(isinstance(k, str) for k in value[1])):
        args, kwargs = tuple(value[0]), dict(value[1])
    else:
        args, kwargs = value, {}
    if not accepts_device and device != "cpu":
        args, kwargs = _to_device((args, kwargs), device)
    return args, kwargs


def _has_parameter(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` has a parameter called ``name`` (``**kwargs`` does not count)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _to_device(value: Any, device: str) -> Any:
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return value.to(device)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def flush_deferred_output() -> None:
    """Emit what rewritten code handed to ``nosync_fix.runtime`` (when it was imported)."""
    runtime = sys.modules.get("nosync_fix.runtime")
    flush = getattr(runtime, "flush", None)
    if callable(flush):
        flush()
