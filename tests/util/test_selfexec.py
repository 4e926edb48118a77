"""``exomonad.util.selfexec``: which ``exomonad`` PATH finds, and is it this install."""

from __future__ import annotations

import sys
from pathlib import Path

from exomonad.util.selfexec import locate, path_fix, self_argv

BIN = Path(sys.executable).parent


def _script(path: Path, first_line: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{first_line}\nimport sys\n")
    path.chmod(0o755)
    return str(path.parent)


def test_this_venvs_console_script_is_ours() -> None:
    found = locate("exomonad", path=str(BIN))
    assert (found.found, found.ours, found.ok) == (str(BIN / "exomonad"), True, True)


def test_another_installs_script_is_not_ours(tmp_path: Path) -> None:
    other = _script(tmp_path / "other" / "bin" / "exomonad", "#!/opt/other/bin/python3")
    found = locate("exomonad", path=other)
    assert (found.ours, found.ok) == (False, False)
    assert path_fix() == f'export PATH="{BIN}:$PATH"'


def test_a_non_python_wrapper_cannot_be_told(tmp_path: Path) -> None:
    wrapper = _script(tmp_path / "w" / "exomonad", "#!/bin/sh")
    assert locate("exomonad", path=wrapper).ours is None
    env = _script(tmp_path / "e" / "exomonad", "#!/usr/bin/env python3")
    assert locate("exomonad", path=env).ours is None


def test_missing(tmp_path: Path) -> None:
    found = locate("exomonad", path=str(tmp_path))
    assert (found.found, found.ok) == (None, False)


def test_self_argv_is_isolated() -> None:
    assert self_argv() == [sys.executable, "-I", "-m", "exomonad"]
