"""Tests for :mod:`exomonad.panes.locking`: per-pane flock across threads and processes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from exomonad.errors import PaneError
from exomonad.panes.locking import LOCK_DIR_ENV, default_lock_dir, lock_path, pane_lock
from exomonad.util.waiting import retry_until


def test_second_holder_waits_until_release(tmp_path: Path) -> None:
    events: list[str] = []
    entered = threading.Event()
    release = threading.Event()

    def first() -> None:
        with pane_lock(tmp_path, "tmux:/sock:%1"):
            events.append("first-in")
            entered.set()
            release.wait(5)
            events.append("first-out")

    thread = threading.Thread(target=first)
    thread.start()
    assert entered.wait(5)

    def second() -> None:
        with pane_lock(tmp_path, "tmux:/sock:%1"):
            events.append("second-in")

    other = threading.Thread(target=second)
    other.start()
    other.join(0.2)
    assert other.is_alive(), "second holder got the lock while the first held it"
    release.set()
    thread.join(5)
    other.join(5)
    assert events == ["first-in", "first-out", "second-in"]


def test_other_panes_are_not_blocked(tmp_path: Path) -> None:
    with pane_lock(tmp_path, "p:%1"), pane_lock(tmp_path, "p:%2", timeout=30):
        pass  # had %1 blocked %2, this would raise PaneError: nobody releases %1 meanwhile


def test_timeout_raises_pane_error(tmp_path: Path) -> None:
    with pane_lock(tmp_path, "p:%1"), pytest.raises(PaneError, match="locked"):  # noqa: SIM117
        with pane_lock(tmp_path, "p:%1", timeout=0.1):
            pass


def test_lock_is_shared_with_other_processes(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    code = (
        "import sys, time, pathlib\n"
        "from exomonad.panes.locking import pane_lock\n"
        "with pane_lock(pathlib.Path(sys.argv[1]), 'p:%7'):\n"
        "    pathlib.Path(sys.argv[2]).touch()\n"
        "    time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(ready)])
    try:
        retry_until(ready.exists, timeout=10, message="child never took the lock")
        with pytest.raises(PaneError), pane_lock(tmp_path, "p:%7", timeout=0.2):
            pass
        proc.kill()
        proc.wait(5)
        # The kernel dropped the dead process's lock: no stale lock to clean up.
        with pane_lock(tmp_path, "p:%7", timeout=30):
            pass  # had the lock outlived its process, this would raise PaneError
    finally:
        proc.kill()
        proc.wait(5)


def test_lock_file_names_are_safe(tmp_path: Path) -> None:
    path = lock_path(tmp_path, "tmux:/tmp/../../etc/passwd:%1")
    assert path.parent == tmp_path
    assert "/" not in path.name
    assert lock_path(tmp_path, "a:%1") != lock_path(tmp_path, "a_%1")


def test_lock_dir_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "env"))
    assert default_lock_dir() == tmp_path / "env"
    monkeypatch.delenv(LOCK_DIR_ENV)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_lock_dir() == tmp_path / "exomonad" / "locks"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert default_lock_dir().name == "locks"
    assert default_lock_dir().parent.name.startswith("exomonad-")
