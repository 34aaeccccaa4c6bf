"""nosync-verify: prove a rewrite on the real compiler.

Runs the original file and its rewrite (the fixer's output, or a file of your
own) side by side and reports graph breaks, host syncs, numerical equivalence
and time::

    from nosync_fix.verify import verify

    report = verify("train.py", "train_epoch", trials=20, backend="aot_eager")
    report.passed            # same behaviour, no more breaks, no more syncs
    report.as_dict()         # what `nosync-verify --json` writes

In a test suite::

    from nosync_fix.verify import assert_verified

    def test_rewrite_of_train_py():
        assert_verified("train.py", "train_epoch", trials=5, backend="aot_eager")

This package imports torch (the fixer never does); it is loaded lazily so that
``nosync-verify --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Report, VerifyUsageError, verify

__all__ = ["Report", "VerifyUsageError", "assert_verified", "verify"]


def assert_verified(file: str, entry: str, **options: Any) -> Report:
    """Verify like :func:`verify` and fail (AssertionError with the report) unless it passed.

    Returns the report, for further assertions (timings, branch coverage ...).
    """
    from .core import verify
    from .render import render

    report = verify(file, entry, **options)
    if not report.passed:
        raise AssertionError("nosync-verify: " + "; ".join(report.problems) + "\n\n"
                             + render(report))
    return report


def __getattr__(name: str) -> Any:
    if name in ("Report", "VerifyUsageError", "verify"):
        from . import core

        return getattr(core, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
