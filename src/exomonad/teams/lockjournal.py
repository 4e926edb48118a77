"""The lock journal: the inbox locks ExoMonad's processes hold, for recovery after a kill.

proper-lockfile locks carry no owner: a process killed while holding one leaves a lock
dir that Claude Code waits on until it is stale (10 s), dropping its messages meanwhile.
A process that journals its locks (:func:`set_lock_journal`) records each lock it holds
in a file of its own in the journal directory, named ``<pid>-<n>``: the lock dir, the
mtime it had when made (or last refreshed) and the root its directory was opened from,
a line each. :func:`recover_locks` removes exactly the leftovers of dead processes.

A journal file is a *slot* its process reuses: written when a lock is taken, emptied
when the lock is let go (an empty file records nothing). A group commit takes a lock
hundreds of times a second; making and removing a file for each lock cost ~140 us, most
of it while Claude Code's writers waited for the lock (docs/performance.md, issue 14).
A process's empty slots are removed when it exits; those of a killed process go at the
next recovery.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import threading
from pathlib import Path

from exomonad.errors import ExomonadError
from exomonad.teams.dirs import SafeDir
from exomonad.util.digits import is_number
from exomonad.util.proc import pid_alive

__all__ = ["Slot", "recover_locks", "set_lock_journal", "take_slot"]

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW


class Slot:
    """One journal file of this process, open: records one lock at a time."""

    __slots__ = ("_size", "fd", "journal", "path")

    def __init__(self, journal: _Journal, path: Path, fd: int) -> None:
        self.journal = journal
        self.path = path
        self.fd = fd
        self._size = 0

    def record(self, lock: Path, mtime_ns: int, root: Path) -> None:
        """Record ``lock`` (its mtime now, the root its directory was opened from) in
        place of what the slot held (best effort: a record that cannot be written only
        leaves recovery to the lock's stale time)."""
        data = b"%b\n%d\n%b\n" % (os.fsencode(lock), mtime_ns, os.fsencode(root))
        with contextlib.suppress(OSError):
            os.pwrite(self.fd, data, 0)
            if len(data) < self._size:  # what is left of a longer record goes
                os.ftruncate(self.fd, len(data))
            self._size = len(data)

    def release(self, *, keep: bool = False) -> None:
        """The lock is let go: empty the slot for the next lock. ``keep``: the lock dir
        may still stand (its removal failed), so its record stays for recovery and the
        slot is not reused."""
        if keep:
            os.close(self.fd)
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            os.close(self.fd)
            return
        self._size = 0
        self.journal.give_back(self)


class _Journal:
    """This process's slots in one journal directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pid = os.getpid()
        self._free: list[Slot] = []
        self._seq = itertools.count()
        self._guard = threading.Lock()
        self.closed = False

    def take(self) -> Slot | None:
        """A free slot, or a new one (None if its file cannot be made)."""
        with self._guard:
            if self._free:
                return self._free.pop()
            path = self.directory / f"{self.pid}-{next(self._seq)}"
        try:
            return Slot(self, path, os.open(path, _FLAGS, 0o600))
        except OSError:
            return None

    def give_back(self, slot: Slot) -> None:
        """``slot`` is empty again: reuse it (or close it if this journal is closed)."""
        with self._guard:
            if not self.closed and self.pid == os.getpid():
                self._free.append(slot)
                return
        os.close(slot.fd)

    def close(self) -> None:
        """Close and remove the free slots; slots in use close when their locks go."""
        with self._guard:
            self.closed = True
            free, self._free = self._free, []
        for slot in free:
            os.close(slot.fd)
            slot.path.unlink(missing_ok=True)


_journal: _Journal | None = None
_journal_guard = threading.Lock()


def set_lock_journal(directory: Path | None) -> None:
    """Record the locks this process holds in ``directory`` (None: stop recording)."""
    global _journal
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
    with _journal_guard:
        old, _journal = _journal, _Journal(directory) if directory is not None else None
    if old is not None:
        old.close()


def take_slot() -> Slot | None:
    """A journal slot to record a lock just taken in (None: no journal, or no slot)."""
    global _journal
    journal = _journal
    if journal is None:
        return None
    if journal.pid != os.getpid():  # a forked child: its slots are files of its own
        with _journal_guard:
            if _journal is journal:
                _journal = _Journal(journal.directory)
            journal = _journal
        if journal is None:
            return None
    return journal.take()


@atexit.register
def _remove_free_slots() -> None:
    journal = _journal
    if journal is not None and journal.pid == os.getpid():
        journal.close()


def recover_locks(directory: Path) -> list[Path]:
    """Remove lock dirs left by dead processes of ours; returns the locks removed.

    A journal entry names the lock dir, the mtime it had when we made it and the root
    its directory was opened from; the lock is removed only if its holder is gone, the
    mtime is unchanged (a lock someone took since has another mtime) and its directory
    is still reached from that root without a symlink. A dead process's entries go,
    whatever they hold.
    """
    removed: list[Path] = []
    if not directory.is_dir():
        return removed
    for entry in directory.iterdir():
        pid_text = entry.name.split("-", 1)[0]
        if not is_number(pid_text) or pid_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError, ValueError, IndexError, ExomonadError):
            lines = [os.fsdecode(line) for line in entry.read_bytes().split(b"\n")]
            if lines[0] and _remove_recorded(lines):
                removed.append(Path(lines[0]))
        entry.unlink(missing_ok=True)
    return removed


def _remove_recorded(lines: list[str]) -> bool:
    """Remove the lock a journal entry records, if it is still the one we made."""
    lock, mtime_ns = Path(lines[0]), int(lines[1])
    root = Path(lines[2]) if len(lines) > 2 and lines[2] else None
    opened = SafeDir.open(root, lock.parent) if root else SafeDir.trusting(lock.parent)
    with opened as d:
        if d.lstat(lock.name).st_mtime_ns != mtime_ns:
            return False
        os.rmdir(lock.name, dir_fd=d.fd)
    return True
