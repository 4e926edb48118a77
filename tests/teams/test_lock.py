"""The proper-lockfile compatible lock: mkdir semantics, waiting, staleness, refresh."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from exomonad.errors import ExomonadError, LockCompromisedError, LockError
from exomonad.teams.lock import (
    _REFRESHER,
    CLAUDE_INBOX_LOCK,
    CLAUDE_TASK_LOCK,
    DEFAULT_LOCK,
    FileLock,
    LockSettings,
    lock_dir_for,
)
from exomonad.util.waiting import retry_until
from tests.teams.conftest import TINY_LOCK

#: Many cheap retries: enough for heavy contention without ever running out.
PATIENT = LockSettings(retries=1000, min_timeout=0.0005, max_timeout=0.005)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "inbox.json"


def age(path: Path, seconds: float) -> None:
    """Set ``path``'s mtime ``seconds`` into the past."""
    then = time.time() - seconds
    os.utime(path, (then, then))


# -- waits() arithmetic ----------------------------------------------------------------


def test_claude_inbox_waits_total_655_ms() -> None:
    waits = CLAUDE_INBOX_LOCK.waits()
    assert waits == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1, 0.1, 0.1, 0.1])
    assert sum(waits) == pytest.approx(0.655)


def test_claude_settings_match_proper_lockfile_options() -> None:
    assert (
        LockSettings(
            retries=10, min_timeout=0.005, max_timeout=0.1, factor=2.0, stale=10.0, update=5.0
        )
        == CLAUDE_INBOX_LOCK
    )
    assert CLAUDE_TASK_LOCK.retries == 30
    assert len(CLAUDE_TASK_LOCK.waits()) == 30
    assert sum(CLAUDE_TASK_LOCK.waits()) == pytest.approx(0.155 + 25 * 0.1)


def test_default_lock_budget() -> None:
    waits = DEFAULT_LOCK.waits()
    assert len(waits) == 40
    assert waits[:8] == pytest.approx([0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.1])
    assert sum(waits) == pytest.approx(0.127 + 33 * 0.1)
    assert DEFAULT_LOCK.stale == 10.0


def test_waits_respect_factor_and_zero_retries() -> None:
    assert LockSettings(retries=4, min_timeout=1, max_timeout=100, factor=3).waits() == [
        1,
        3,
        9,
        27,
    ]
    assert LockSettings(retries=0).waits() == []


def test_waits_with_many_retries_do_not_overflow() -> None:
    # proper-lockfile (the ``retry`` package) computes min(maxTimeout, min * factor**n) in
    # JS doubles, where factor**n becomes Infinity and the min is simply maxTimeout. Here
    # ``2.0 ** 1024`` raises OverflowError, so a patient setting cannot even be used.
    settings = LockSettings(retries=1100, min_timeout=0.001, max_timeout=0.01)
    waits = settings.waits()
    assert len(waits) == 1100
    assert waits[-1] == 0.01
    assert sum(waits) == pytest.approx(0.001 + 0.002 + 0.004 + 0.008 + 1096 * 0.01)


# -- mkdir semantics -------------------------------------------------------------------


def test_lock_is_a_directory_next_to_the_target(target: Path) -> None:
    assert lock_dir_for(target) == target.parent / "inbox.json.lock"
    lk = FileLock(target)
    assert lk.path == lock_dir_for(target)
    assert not lk.held
    lk.acquire()
    try:
        assert lk.held
        assert lk.path.is_dir()
        assert list(lk.path.iterdir()) == []
        assert not target.exists()  # the target itself is never touched
    finally:
        lk.release()
    assert not lk.held
    assert not lk.path.exists()


def test_context_manager_releases_even_on_error(target: Path) -> None:
    seen: list[bool] = []

    def fail_inside() -> None:
        with FileLock(target) as lk:
            seen.append(lk.path.is_dir())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_inside()
    assert seen == [True]
    assert not lock_dir_for(target).exists()


def test_lock_can_be_taken_again_after_release(target: Path) -> None:
    lk = FileLock(target, TINY_LOCK)
    for _ in range(3):
        with lk:
            assert lk.held
        assert not lk.path.exists()


def test_acquire_twice_on_same_object_is_refused(target: Path) -> None:
    with FileLock(target) as lk:
        with pytest.raises(LockError, match="already held"):
            lk.acquire()
        assert lk.path.is_dir()


def test_missing_directory_is_a_lock_error(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="directory is missing"):
        FileLock(tmp_path / "nope" / "inbox.json", TINY_LOCK).acquire()


def test_held_lock_makes_a_second_lock_wait_then_fail(target: Path) -> None:
    settings = LockSettings(retries=4, min_timeout=0.01, max_timeout=0.02)
    with FileLock(target):
        other = FileLock(target, settings)
        started = time.monotonic()
        with pytest.raises(LockError, match="still held after 4 retries") as info:
            other.acquire()
        elapsed = time.monotonic() - started
        assert not other.held
        assert lock_dir_for(target).is_dir()
    assert elapsed >= sum(settings.waits())  # it did wait: 10 + 20 + 20 + 20 ms
    assert isinstance(info.value, ExomonadError)
    assert not isinstance(info.value, LockCompromisedError)


def test_waiter_gets_the_lock_once_it_is_released(target: Path) -> None:
    first = FileLock(target)
    first.acquire()
    got = threading.Event()

    def wait_for_it() -> None:
        with FileLock(target, PATIENT):
            got.set()

    t = threading.Thread(target=wait_for_it)
    t.start()
    try:
        assert not got.wait(0.05)  # blocked while we hold it
    finally:
        first.release()
    t.join(5)
    assert got.is_set()
    assert not lock_dir_for(target).exists()


# -- staleness -------------------------------------------------------------------------


def test_stale_lock_is_taken_over(target: Path) -> None:
    lock_dir_for(target).mkdir()
    age(lock_dir_for(target), 20)
    old = lock_dir_for(target).stat().st_mtime
    lk = FileLock(target, LockSettings(retries=0))
    lk.acquire()
    try:
        assert lk.held
        assert lk.path.stat().st_mtime > old + 10  # a fresh lock, now ours (not at clock grain)
    finally:
        lk.release()
    assert not lk.path.exists()


def test_lock_just_under_stale_is_respected(target: Path) -> None:
    lock_dir_for(target).mkdir()
    age(lock_dir_for(target), 8)
    with pytest.raises(LockError):
        FileLock(target, TINY_LOCK).acquire()
    assert lock_dir_for(target).is_dir()


def test_fresh_lock_is_never_removed_by_a_waiter(target: Path) -> None:
    lock_dir_for(target).mkdir()
    before = lock_dir_for(target).stat().st_mtime_ns
    for _ in range(3):
        with pytest.raises(LockError):
            FileLock(target, TINY_LOCK).acquire()
    assert lock_dir_for(target).is_dir()
    assert lock_dir_for(target).stat().st_mtime_ns == before


def test_stale_setting_is_honoured(target: Path) -> None:
    lock_dir_for(target).mkdir()
    age(lock_dir_for(target), 2)
    with FileLock(target, LockSettings(retries=0, stale=1.0)) as lk:
        assert lk.held


def test_stale_lock_that_cannot_be_removed_is_a_lock_error(target: Path) -> None:
    lock_dir_for(target).mkdir()
    (lock_dir_for(target) / "junk").write_text("not ours")
    age(lock_dir_for(target), 20)
    with pytest.raises(LockError, match="could not be removed"):
        FileLock(target, TINY_LOCK).acquire()
    assert (lock_dir_for(target) / "junk").exists()


# -- compromise ------------------------------------------------------------------------


def test_release_refuses_a_lock_whose_mtime_changed(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0))
    lk.acquire()
    age(lk.path, 3)  # someone else touched (or re-made) the lock dir
    with pytest.raises(LockCompromisedError):
        lk.release()
    assert lk.path.is_dir()  # never remove a lock that may not be ours
    assert lk.compromised
    assert not lk.held


def test_check_detects_a_removed_lock(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0))
    lk.acquire()
    lk.check()  # still ours
    os.rmdir(lk.path)
    with pytest.raises(LockCompromisedError):
        lk.check()
    with pytest.raises(LockCompromisedError):
        lk.release()
    assert not lk.path.exists()


def test_lock_replaced_by_someone_else_is_left_alone(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0))
    lk.acquire()
    os.rmdir(lk.path)
    os.mkdir(lk.path)
    age(lk.path, -5)  # the new owner's lock, mtime clearly different from ours
    with pytest.raises(LockCompromisedError):
        lk.release()
    assert lk.path.is_dir()


def test_check_and_release_of_an_unheld_lock(target: Path) -> None:
    lk = FileLock(target)
    with pytest.raises(LockCompromisedError, match="not held"):
        lk.check()
    with pytest.raises(LockCompromisedError):
        lk.release()


def test_compromised_flag_resets_on_next_acquire(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0, retries=0, stale=1.0))
    lk.acquire()
    age(lk.path, 3)
    with pytest.raises(LockCompromisedError):
        lk.release()
    assert lk.compromised
    lk.acquire()  # the leftover is stale (3 s > 1 s): taken over
    assert not lk.compromised
    lk.release()
    assert not lk.path.exists()


# -- refresh ---------------------------------------------------------------------------


def test_refresher_notices_a_foreign_mtime_change(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0.1))
    lk.acquire()
    age(lk.path, 3)  # someone else touched the lock dir while we hold it
    retry_until(lambda: lk.compromised, timeout=5, message="refresher did not notice")
    with pytest.raises(LockCompromisedError):
        lk.release()
    assert lk.path.is_dir()


def test_refresher_updates_mtime(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0.2))
    lk.acquire()
    first = lk.path.stat().st_mtime_ns
    try:
        retry_until(lambda: lk.path.stat().st_mtime_ns != first, timeout=5)
        second = lk.path.stat().st_mtime_ns
        assert second > first
        retry_until(lambda: lk.path.stat().st_mtime_ns != second, timeout=5)
        assert not lk.compromised
        lk.check()  # the refreshed mtime is recognised as ours
    finally:
        lk.release()  # and release still succeeds
    assert not lk.path.exists()


def test_a_check_during_a_refresh_is_not_mistaken_for_a_stolen_lock(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refresher touches the lock dir, then notes its new mtime: a ``check()`` in
    between saw a changed mtime and marked the lock compromised (found by an audit of
    the suite: ``test_refresher_updates_mtime`` failed once in 800 runs). The refresher
    is held right after its touch here, and the check must wait for it."""
    touched, go = threading.Event(), threading.Event()
    real_utime = os.utime

    def utime(*args: object, **kwargs: object) -> None:
        real_utime(*args, **kwargs)  # type: ignore[arg-type]
        if threading.current_thread().name == "exomonad-lock-refresh":
            touched.set()
            go.wait(10)

    monkeypatch.setattr(os, "utime", utime)
    lk = FileLock(target, LockSettings(update=0.05))
    lk.acquire()
    errors: list[BaseException] = []

    def check() -> None:
        try:
            lk.check()
        except BaseException as exc:
            errors.append(exc)

    try:
        retry_until(touched.is_set, timeout=5, message="the refresher never touched the lock")
        checker = threading.Thread(target=check)
        checker.start()
        checker.join(0.5)  # time for the old code to fail; the new one waits for the refresh
        go.set()
        checker.join(10)
        assert not checker.is_alive()
        assert errors == []
        assert not lk.compromised
    finally:
        go.set()
        lk.release()
    assert not lk.path.exists()


def test_refresher_marks_a_removed_lock_compromised(target: Path) -> None:
    lk = FileLock(target, LockSettings(update=0.1))
    lk.acquire()
    os.rmdir(lk.path)
    retry_until(lambda: lk.compromised, timeout=5)
    with pytest.raises(LockCompromisedError):
        lk.release()


def test_refresher_tracks_only_locks_that_want_refreshing(target: Path) -> None:
    quiet = FileLock(target, LockSettings(update=0))
    with quiet:
        assert id(quiet) not in _REFRESHER._held
    refreshed = FileLock(target, LockSettings(update=60))
    with refreshed:
        assert _REFRESHER._held.get(id(refreshed)) is refreshed
    assert id(refreshed) not in _REFRESHER._held  # released locks are forgotten


_FORK_SCRIPT = """
import os, sys
from pathlib import Path
from exomonad.teams.lock import FileLock, LockSettings
from exomonad.util.waiting import WaitTimeout, retry_until

d = Path(sys.argv[1])
with FileLock(d / "warm", LockSettings(update=0.1)):
    pass  # the parent has used a refreshed lock: its refresher thread exists
pid = os.fork()
if pid == 0:
    code = 1
    try:
        lk = FileLock(d / "held", LockSettings(update=0.1))
        lk.acquire()
        first = lk.path.stat().st_mtime_ns
        try:
            retry_until(lambda: lk.path.stat().st_mtime_ns != first, timeout=3)
            code = 0
        except WaitTimeout:
            code = 3
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_refresher_works_in_a_forked_child(tmp_path: Path) -> None:
    # Threads do not survive fork(): a child that inherits a started refresher must start
    # its own, or its long-held locks go stale and can be stolen (exit 3 = never refreshed).
    proc = subprocess.run(
        [sys.executable, "-c", _FORK_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


# -- mutual exclusion ------------------------------------------------------------------


def _increment(target: Path, times: int) -> None:
    for _ in range(times):
        with FileLock(target, PATIENT):
            value = int(target.read_text())
            target.write_text(str(value + 1))


def test_threads_never_lose_an_update(target: Path) -> None:
    target.write_text("0")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            _increment(target, 40)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert int(target.read_text()) == 8 * 40
    assert not lock_dir_for(target).exists()


def _process_worker(target: str, times: int) -> None:
    _increment(Path(target), times)


def test_processes_never_lose_an_update(target: Path) -> None:
    target.write_text("0")
    # forkserver: one clean single-threaded server imports this module once, then forks a
    # child per worker (fork from this multi-threaded test process could inherit a held lock).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    procs = [ctx.Process(target=_process_worker, args=(str(target), 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert int(target.read_text()) == 4 * 25
    assert not lock_dir_for(target).exists()


def test_back_to_back_locks_do_not_wake_the_refresher(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group commit takes and lets go of a lock hundreds of times a second: waking the
    refresher thread each time cost the appender a thread switch per group."""
    settings = LockSettings(update=5.0)
    with FileLock(target, settings):  # the thread started and sleeping on its own
        pass
    notified: list[float] = []
    real = _REFRESHER.cond.notify

    def notify(n: int = 1) -> None:
        notified.append(time.monotonic())
        real(n)

    monkeypatch.setattr(_REFRESHER.cond, "notify", notify)
    for _ in range(200):
        with FileLock(target, settings):
            pass
    assert len(notified) <= 1  # at most once, should its idle sleep have just ended


def test_a_lock_due_before_the_refresher_wakes_wakes_it(target: Path) -> None:
    slow = FileLock(target.with_name("slow"), LockSettings(update=60.0))
    with slow:  # the refresher now sleeps for a minute
        fast = FileLock(target, LockSettings(update=0.1))
        with fast:
            first = fast.path.stat().st_mtime_ns
            retry_until(lambda: fast.path.stat().st_mtime_ns != first, timeout=5,
                        message="a lock due sooner did not wake the refresher")  # fmt: skip
            fast.check()
