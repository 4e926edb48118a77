"""A waiter for a held lock is woken by the lock dir's removal, not only by its back-off."""

from __future__ import annotations

import contextlib
import os
import threading
from functools import partial
from pathlib import Path

import pytest

from exomonad.teams import lockwait
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import FileLock, LockSettings, lock_dir_for
from exomonad.teams.lockwait import Release
from exomonad.util.waiting import retry_until
from tests.teams.conftest import Woken

#: One wait of a minute: a waiter that gets the lock sooner was woken by the release.
ONE_LONG_WAIT = LockSettings(retries=1, min_timeout=60.0, max_timeout=60.0)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "inbox.json"


def count_tries(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each try to take a lock gave, from now on (True: taken)."""
    tries: list[bool] = []
    real = FileLock._try_take

    def counted(self: FileLock, d: SafeDir) -> bool:
        tries.append(real(self, d))
        return tries[-1]

    monkeypatch.setattr(FileLock, "_try_take", counted)
    return tries


def take_in_thread(target: Path, settings: LockSettings) -> tuple[threading.Thread, list[str]]:
    """A thread that takes ``target``'s lock and lets it go; ``done`` gets "got" or the error."""
    done: list[str] = []

    def run() -> None:
        try:
            with FileLock(target, settings):
                done.append("got")
        except Exception as exc:  # reported to the test
            done.append(repr(exc))

    t = threading.Thread(target=run)
    t.start()
    return t, done


def test_a_waiter_is_woken_by_the_release_not_its_backoff(target: Path, woken: Woken) -> None:
    holder = FileLock(target)
    holder.acquire()
    t, done = take_in_thread(target, ONE_LONG_WAIT)
    retry_until(woken.waiting.is_set)
    assert done == []  # still held: the waiter waits
    holder.release()
    t.join()
    assert done == ["got"]
    assert woken.results == [True]  # its one wait (a minute) ended with the release
    assert not lock_dir_for(target).exists()


def test_files_written_beside_the_lock_do_not_wake_it(tmp_path: Path) -> None:
    """Writes beside the lock (Claude Code's temp files, its inbox) do not end a wait; a
    name removed or renamed away does (a spurious wake-up is one more ``mkdir``)."""
    os.mkdir(tmp_path / "x.lock")
    with SafeDir.trusting(tmp_path) as d:
        release = Release.watch(d)
        assert release is not None
        with release:
            release.arm()
            (tmp_path / "x.json.tmp").write_text("[]")
            (tmp_path / "x.json").write_text("[]")
            os.mkdir(tmp_path / "y.lock")
            assert release.wait(0.2) is False
            os.rename(tmp_path / "x.lock", tmp_path / "gone")  # renamed away: gone
            assert release.wait(60.0) is True
            release.arm()
            assert release.wait(0.05) is False  # what happened before arm() is forgotten
            os.rmdir(tmp_path / "y.lock")
            assert release.wait(60.0) is True


def test_a_lock_let_go_before_the_watch_began_is_taken_at_once(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder lets go between the waiter's failed try and its watch: it tries again
    before it waits, rather than sleeping its whole wait."""
    holder = FileLock(target)
    holder.acquire()
    real = Release.watch

    def watch_after_the_release(d: SafeDir) -> Release | None:
        holder.release()
        return real(d)

    monkeypatch.setattr(Release, "watch", watch_after_the_release)
    waits: list[float] = []

    def wait(_: Release, timeout: float) -> bool:
        waits.append(timeout)
        return False

    monkeypatch.setattr(Release, "wait", wait)
    with FileLock(target, ONE_LONG_WAIT) as lock:
        assert lock.held
    assert waits == []


@pytest.mark.parametrize("failure", ["no inotify instance", "no watch"])
def test_without_inotify_the_waiter_sleeps_its_backoff(
    target: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise OSError(24, failure)

    monkeypatch.setattr(lockwait, "_FREE", [])  # no instance made yet
    if failure == "no inotify instance":
        monkeypatch.setattr(lockwait._Instance, "__init__", refuse)
    else:
        monkeypatch.setattr(lockwait._Instance, "add_watch", refuse)
    with SafeDir.trusting(target.parent) as d:
        assert Release.watch(d) is None
    tries = count_tries(monkeypatch)
    holder = FileLock(target)
    holder.acquire()
    t, done = take_in_thread(target, LockSettings(retries=400, min_timeout=0.005, factor=1.0))
    retry_until(lambda: len(tries) >= 3)  # tried, slept, tried again: it is waiting
    holder.release()
    t.join()
    assert done == ["got"]


def test_a_lock_never_let_go_still_runs_out(target: Path, woken: Woken) -> None:
    settings = LockSettings(retries=3, min_timeout=0.01, max_timeout=0.02)
    with FileLock(target):
        t, done = take_in_thread(target, settings)
        t.join()
    assert len(done) == 1
    assert "still held after 3 retries" in done[0]
    assert woken.results  # it did wait...
    assert not any(woken.results)  # ...and every wait ran its course


def test_with_watch_off_no_watch_is_made(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``LockSettings(watch=False)``: each wait is slept whole, as proper-lockfile does."""
    made: list[SafeDir] = []
    monkeypatch.setattr(Release, "watch", made.append)
    settings = LockSettings(retries=400, min_timeout=0.005, factor=1.0, watch=False)
    tries = count_tries(monkeypatch)
    holder = FileLock(target)
    holder.acquire()
    t, done = take_in_thread(target, settings)
    retry_until(lambda: len(tries) >= 3)  # tried, slept, tried again: it is waiting
    with SafeDir.trusting(target.parent) as d:
        assert lockwait.until_gone(d, lock_dir_for(target).name, 0.02, 0.005, watch=False) is False
        holder.release()
        t.join()
        assert lockwait.until_gone(d, lock_dir_for(target).name, 0.02, 0.005, watch=False)
    assert done == ["got"]
    assert made == []


def inotify_fds() -> int:
    """How many inotify instances this process has open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own, closed since
            count += "inotify" in os.readlink(f"/proc/self/fd/{fd}")
    return count


def test_waits_in_threads_come_and_gone_reuse_their_instances(target: Path, woken: Woken) -> None:
    """An instance is borrowed for a wait and given back (closing one that had watches
    would cost the kernel's grace period): threads that come and go leave none open."""
    before = inotify_fds()
    for i in range(20):
        holder = FileLock(target)
        holder.acquire()
        t, done = take_in_thread(target, ONE_LONG_WAIT)
        retry_until(partial(lambda n: woken.began > n, i))  # this thread waits
        holder.release()
        t.join()
        assert done == ["got"]
    assert woken.results == [True] * 20
    assert inotify_fds() <= before + 1
