"""Run the doctests of every module under ``src/exomonad`` (docstrings that run)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import exomonad

PACKAGE_DIR = Path(exomonad.__file__).parent


def discover() -> list[str]:
    """Every module and package under ``exomonad``, found by ``pkgutil.walk_packages``."""
    names = ["exomonad"]
    names += [m.name for m in pkgutil.walk_packages(exomonad.__path__, prefix="exomonad.")]
    return sorted(names)


MODULES = discover()


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests failed in {name}"


def test_discovery_finds_the_core_modules() -> None:
    for name in (
        "exomonad.errors",
        "exomonad.util.waiting",
        "exomonad.teams.paths",
        "exomonad.teams.lock",
        "exomonad.teams.atomic",
        "exomonad.teams.models",
        "exomonad.teams.protocol",
        "exomonad.teams.dialects",
        "exomonad.teams.config",
        "exomonad.teams.mailbox",
        "exomonad.teams.presence",
    ):
        assert name in MODULES


def test_discovery_misses_no_source_file() -> None:
    # walk_packages only descends into directories with an __init__.py; a .py file it
    # cannot reach would have its doctests silently skipped.
    on_disk = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        on_disk.add(".".join(parts))
    assert sorted(on_disk - set(MODULES)) == []


def test_the_core_modules_have_doctests_that_run() -> None:
    attempted = 0
    for name in ("exomonad.teams.paths", "exomonad.teams.lock", "exomonad.teams.protocol"):
        attempted += doctest.testmod(importlib.import_module(name)).attempted
    assert attempted >= 10
