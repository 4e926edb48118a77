"""The lock journal: a killed holder's lock is recovered, a lock is recorded in a slot
its process reuses (no file made or removed per lock), and what recovery must leave."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.errors import LockError
from exomonad.teams.lock import FileLock, lock_dir_for
from exomonad.teams.lockjournal import recover_locks, set_lock_journal
from exomonad.util.waiting import retry_until


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "journal"
    set_lock_journal(directory)
    yield directory
    set_lock_journal(None)


def entries(journal: Path) -> dict[str, list[str]]:
    """Each journal file's lines (an empty file: no lines)."""
    return {e.name: e.read_text().splitlines() for e in journal.iterdir()}


def test_a_lock_is_recorded_while_held_in_one_file_reused_for_every_lock(
    tmp_path: Path, journal: Path
) -> None:
    target = tmp_path / "inbox.json"
    for _ in range(50):
        with FileLock(target) as lk:
            [(name, lines)] = entries(journal).items()
            assert name.startswith(f"{os.getpid()}-")
            assert lines == [str(lk.path), str(lk.path.stat().st_mtime_ns), str(tmp_path)]
    assert entries(journal) == {name: []}  # the same file, empty: it records nothing now


def test_locks_held_at_once_each_have_a_file(tmp_path: Path, journal: Path) -> None:
    with FileLock(tmp_path / "a.json"), FileLock(tmp_path / "b.json"):
        held = entries(journal)
        assert sorted(lines[0] for lines in held.values()) == [
            str(tmp_path / "a.json.lock"),
            str(tmp_path / "b.json.lock"),
        ]
    assert all(lines == [] for lines in entries(journal).values())
    assert len(entries(journal)) == 2  # both kept for the next locks


def test_a_shorter_record_leaves_nothing_of_a_longer_one(tmp_path: Path, journal: Path) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    with FileLock(deep / "inbox.json"):
        pass
    with FileLock(tmp_path / "x.json") as lk:
        [lines] = entries(journal).values()
        assert lines == [str(lk.path), str(lk.path.stat().st_mtime_ns), str(tmp_path)]


def test_a_lock_dir_that_could_not_be_removed_keeps_its_record(
    tmp_path: Path, journal: Path
) -> None:
    """Its lock dir still stands (rmdir failed): the record stays for recovery after a
    kill, and its file is not reused for the next lock."""
    target = tmp_path / "inbox.json"
    lk = FileLock(target)
    lk.acquire()
    made = lock_dir_for(target).stat().st_mtime_ns
    (lock_dir_for(target) / "stuck").write_text("")  # rmdir now fails: not empty
    os.utime(lock_dir_for(target), ns=(made, made))  # still ours by its mtime
    recorded = entries(journal)
    with pytest.raises(LockError, match="could not release"):
        lk.release()
    assert entries(journal) == recorded
    (lock_dir_for(target) / "stuck").unlink()
    lock_dir_for(target).rmdir()
    with FileLock(target):
        assert len(entries(journal)) == 2


def test_a_process_that_exits_leaves_no_journal_file(tmp_path: Path) -> None:
    directory, target = tmp_path / "journal", tmp_path / "inbox.json"
    code = (
        "from pathlib import Path\n"
        "from exomonad.teams.lock import FileLock\n"
        "from exomonad.teams.lockjournal import set_lock_journal\n"
        f"set_lock_journal(Path({str(directory)!r}))\n"
        f"for _ in range(3):\n    with FileLock(Path({str(target)!r})): pass\n"
        f"print(len(list(Path({str(directory)!r}).iterdir())))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"  # its slot while it ran
    assert list(directory.iterdir()) == []


def test_a_forked_child_records_its_locks_in_files_of_its_own(
    tmp_path: Path, journal: Path
) -> None:
    with FileLock(tmp_path / "a.json"):
        pass
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one lock held, its journal files reported, then gone
        try:
            with FileLock(tmp_path / "b.json"):
                names = sorted(
                    e.name for e in journal.iterdir() if (journal / e.name).stat().st_size
                )
                os.write(write, ",".join(names).encode())
        finally:
            os._exit(0)
    os.close(write)
    held = os.read(read, 4096).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert held.startswith(f"{pid}-"), held
    assert "," not in held
    assert [lines for lines in entries(journal).values() if lines] == []


def test_a_dead_process_s_empty_files_go_at_recovery(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    directory.mkdir()
    (directory / "999999999-0").write_text("")
    (directory / "999999999-1").write_text("")
    assert recover_locks(directory) == []
    assert list(directory.iterdir()) == []


def test_lock_journal_recovers_a_killed_holders_lock(tmp_path: Path) -> None:

    target, journal = tmp_path / "inbox.json", tmp_path / "journal"
    code = (
        "import sys, time; from pathlib import Path\n"
        "from exomonad.teams.lock import FileLock\n"
        "from exomonad.teams.lockjournal import set_lock_journal\n"
        f"set_lock_journal(Path({str(journal)!r}))\n"
        f"FileLock(Path({str(target)!r})).acquire(); print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    lock = target.with_name("inbox.json.lock")
    assert lock.is_dir()
    assert recover_locks(journal) == []  # its holder is alive: not touched
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    assert recover_locks(journal) == [lock]
    assert not lock.exists()
    assert list(journal.iterdir()) == []


def test_lock_journal_recovers_a_lock_killed_after_a_refresh(tmp_path: Path) -> None:
    """A lock held past a refresh has a new mtime; the journal must follow it, or the
    killed holder's lock stands to its stale time (10 s of Claude Code's writers
    giving up) instead of going at the next start."""

    target, journal = tmp_path / "inbox.json", tmp_path / "journal"
    code = (
        "import sys, time; from pathlib import Path\n"
        "from exomonad.teams.lock import FileLock, LockSettings\n"
        "from exomonad.teams.lockjournal import set_lock_journal\n"
        f"set_lock_journal(Path({str(journal)!r}))\n"
        f"FileLock(Path({str(target)!r}), LockSettings(update=0.05)).acquire()\n"
        "print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        lock = target.with_name("inbox.json.lock")
        made = lock.stat().st_mtime_ns
        retry_until(lambda: lock.stat().st_mtime_ns != made, timeout=10,
                    message="the refresher never touched the lock")  # fmt: skip
        [entry] = [e for e in journal.iterdir() if "." not in e.name]  # not one being replaced
        refreshed = lock.stat().st_mtime_ns

        def stopped_in_step() -> bool:
            """Freeze the holder where the journal holds the lock's mtime: a kill between
            the refresher's touch and its journal write (~0.2% of the time) would leave
            the lock to go stale instead, as it should."""
            holder.send_signal(signal.SIGSTOP)
            stat = Path(f"/proc/{holder.pid}/stat")
            retry_until(lambda: stat.read_text().rsplit(")", 1)[1].split()[0] == "T", timeout=10)
            if entry.read_text().split("\n")[1] == str(lock.stat().st_mtime_ns):
                return True
            holder.send_signal(signal.SIGCONT)
            return False

        retry_until(stopped_in_step, timeout=10, message="the journal kept the first mtime")
        assert lock.stat().st_mtime_ns >= refreshed
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    assert recover_locks(journal) == [lock]
    assert not lock.exists()
    assert list(journal.iterdir()) == []


def test_lock_journal_leaves_a_lock_someone_took_since(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    journal.mkdir()
    lock = tmp_path / "inbox.json.lock"
    lock.mkdir()
    (journal / "999999999-0").write_text(f"{lock}\n{lock.stat().st_mtime_ns - 1}\n")  # dead pid
    assert recover_locks(journal) == []
    assert lock.is_dir()  # another mtime: not ours
    assert list(journal.iterdir()) == []
