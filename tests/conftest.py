"""Shared test helpers."""

from __future__ import annotations

import os

import pytest

# Tests must not depend on the developer's pyproject or colour settings.
os.environ.setdefault("NO_COLOR", "1")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project folder that is the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
