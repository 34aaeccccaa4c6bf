"""Shared test helpers."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a result can be reproduced and
# CI does not fail on a draw nobody saw locally. `NOSYNC_HYPOTHESIS=explore pytest`
# draws new ones (so does benchmarks/fuzz.py, for longer).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("NOSYNC_HYPOTHESIS", "repeatable"))

# Tests must not depend on the developer's pyproject or colour settings.
os.environ.setdefault("NO_COLOR", "1")


@pytest.fixture(autouse=True)
def user_cache(tmp_path_factory, monkeypatch):
    """Each test's own per-user cache folder (XDG_CACHE_HOME), never the developer's."""
    folder = tmp_path_factory.mktemp("user-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "nosync-fix"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project folder that is the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
