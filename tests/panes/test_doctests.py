"""The examples in the ``exomonad.panes`` docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["", ".base", ".fake", ".locking", ".sanitize", ".screen", ".spool", ".tmux", ".zellij"]


@pytest.mark.parametrize("suffix", MODULES)
def test_docstring_examples(suffix: str) -> None:
    module = importlib.import_module(f"exomonad.panes{suffix}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
