"""``exomonad.util.selfexec``: which ``exomonad`` PATH finds, and is it this install."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from exomonad import runtimes
from exomonad.runtimes.base import hook_command, is_ours
from exomonad.util.selfexec import EXOMONAD, HOOK_FRONT, hook_front, locate, path_fix, self_argv

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


def _bin(path: Path, *names: str) -> Path:
    path.mkdir(parents=True)
    for name in names:
        (path / name).write_text("#!/bin/sh\n")
        (path / name).chmod(0o755)
    return path


def test_the_hook_front_stands_beside_the_exomonad_that_hooks_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    both, alone = _bin(tmp_path / "both", EXOMONAD, HOOK_FRONT), _bin(tmp_path / "alone", EXOMONAD)
    monkeypatch.setenv("PATH", f"{both}:/usr/bin:/bin")
    assert hook_front(EXOMONAD) == HOOK_FRONT
    monkeypatch.setenv("PATH", f"{alone}:{both}:/usr/bin:/bin")  # another install's front
    assert hook_front(EXOMONAD) is None
    spaced = _bin(tmp_path / "a b", EXOMONAD, HOOK_FRONT)
    assert hook_front(shlex.quote(str(spaced / EXOMONAD))) == shlex.quote(str(spaced / HOOK_FRONT))
    assert hook_front(str(alone / EXOMONAD)) is None
    assert hook_front(f"{sys.executable} -I -m exomonad") is None


def test_hook_commands_start_the_front_when_it_is_there(tmp_path: Path) -> None:
    both, alone = _bin(tmp_path / "both", EXOMONAD, HOOK_FRONT), _bin(tmp_path / "alone", EXOMONAD)
    gemini = runtimes.get("gemini")
    fast = hook_command(str(both / EXOMONAD), "before-tool", gemini, 50)
    client = f"{both / EXOMONAD} hook before-tool --runtime gemini --timeout 70"
    assert fast == f"{both / HOOK_FRONT} {client}"
    assert is_ours({"hooks": [{"command": fast}]})
    slow = hook_command(str(alone / EXOMONAD), "after-tool", gemini, 50)
    assert slow == f"{alone / EXOMONAD} hook after-tool --runtime gemini"
