"""Shared test fixtures. Area-specific fixtures live in the test modules that use them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """A private copy of the bundled NVIDIA-first example package, safe to rewrite."""
    destination = tmp_path / "example"
    shutil.copytree(FIXTURES / "example", destination)
    return destination
