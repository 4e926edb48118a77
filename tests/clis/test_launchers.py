"""``exomonad.clis.launchers.write_shims``: this install's commands first on PATH."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.clis.env import VENV_BIN
from exomonad.clis.launchers import write_shims
from exomonad.util.selfexec import EXOMONAD, HOOK_FRONT, hook_front


def test_the_shims_run_this_install_and_bring_the_hook_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = write_shims(tmp_path / "bin")
    done = subprocess.run([str(bin_dir / EXOMONAD), "hook", "--help"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert (done.returncode, done.stdout.startswith("usage: exomonad hook")) == (0, True)
    assert (bin_dir / HOOK_FRONT).resolve() == (VENV_BIN / HOOK_FRONT).resolve()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert hook_front(EXOMONAD) == HOOK_FRONT  # so `exomonad init` writes hooks through it
    write_shims(bin_dir)  # again: the link is replaced, not an error
    assert (bin_dir / HOOK_FRONT).is_symlink()
