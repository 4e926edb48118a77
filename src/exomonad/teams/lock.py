"""A lock that interoperates with Node's ``proper-lockfile`` (what Claude Code uses).

The lock on ``<file>`` is the *directory* ``<file>.lock``; ``mkdir`` is the atomic step.
A lock whose mtime is older than ``stale`` seconds may be removed by a waiter, who then
retries at once. The holder refreshes the mtime every ``update`` seconds and counts the
lock as compromised if the mtime changed under it. Release is ``rmdir``.

Claude Code gives up on a lock after 10 retries (about 655 ms) and then *drops* its
message, so whoever else holds the lock must hold it only briefly. Our own writers hold
it for a read-modify-write of one JSON file (well under a millisecond for small files).
A waiter of ours tries again as soon as something in the lock's directory is removed
(its holder's ``rmdir``: :mod:`~exomonad.teams.lockwait`), and at the latest when each
wait of the back-off ends.

We never remove a fresh lock we do not own: before ``rmdir`` on release we check that
the directory's mtime is still the one we set; if not, we leave it and raise
:class:`~exomonad.errors.LockCompromisedError`.

The lock dir is made, checked, refreshed and removed relative to the target's directory
held open for the whole hold (``at``, a :class:`~exomonad.teams.dirs.SafeDir` opened
without following symlinks), so a directory swapped for a link meanwhile cannot move the
lock elsewhere. Without ``at`` the target's directory is opened as its path says.
"""

from __future__ import annotations

import errno
import functools
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from exomonad.errors import LockCompromisedError, LockError
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lockjournal import Slot, take_slot
from exomonad.teams.lockwait import Release

__all__ = [
    "CLAUDE_INBOX_LOCK",
    "CLAUDE_TASK_LOCK",
    "DEFAULT_LOCK",
    "FileLock",
    "LockSettings",
    "lock_dir_for",
]


@dataclass(frozen=True)
class LockSettings:
    """Retry and staleness settings, named as in proper-lockfile (times in seconds).

    ``retries`` waits follow ``min(max_timeout, min_timeout * factor**n)`` with no jitter.
    """

    retries: int = 10
    min_timeout: float = 0.005
    max_timeout: float = 0.1
    factor: float = 2.0
    stale: float = 10.0
    update: float = 5.0
    #: Also wake when something in the lock's directory is removed (its holder letting
    #: go: :mod:`~exomonad.teams.lockwait`), not only when a wait ends. Off, a waiter
    #: sleeps each wait whole, as proper-lockfile does.
    watch: bool = True

    def waits(self) -> list[float]:
        """The sleep before each retry (computed once per settings value).

        >>> round(sum(CLAUDE_INBOX_LOCK.waits()), 3)
        0.655
        """
        return list(_waits(self))

    def _compute_waits(self) -> tuple[float, ...]:
        out, wait = [], self.min_timeout
        for _ in range(self.retries):
            out.append(min(self.max_timeout, wait))
            wait = min(self.max_timeout, wait * self.factor)  # capped: no float overflow
        return tuple(out)


@functools.lru_cache(maxsize=64)
def _waits(settings: LockSettings) -> tuple[float, ...]:
    return settings._compute_waits()


#: Claude Code's inbox and config.json settings (retries 10, 5..100 ms, factor 2).
CLAUDE_INBOX_LOCK = LockSettings()
#: Claude Code's task-list settings (retries 30, 5..100 ms).
CLAUDE_TASK_LOCK = LockSettings(retries=30)
#: Our own writers: finer first steps and a longer total budget. We never
#: drop a message on timeout: the caller gets a LockError and retries or reports it.
#: (Budget: 1+2+4+...+64 ms, then 100 ms waits: about 3.4 s in all.)
DEFAULT_LOCK = LockSettings(retries=40, min_timeout=0.001, max_timeout=0.1)


def lock_dir_for(target: Path) -> Path:
    """The lock directory for ``target``: ``<target>.lock``."""
    return target.with_name(target.name + ".lock")


class _Refresher:
    """One daemon thread that refreshes the mtime of every lock held longer than ``update``.

    The thread is woken only when a lock added is due before it would wake anyway: with
    nothing held it sleeps one ``update`` interval before it waits for good, so locks
    taken and released back to back (a group commit's) never wake it.
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """Fresh state; also run in a forked child, where the parent's thread is gone."""
        self._cond = threading.Condition()
        self._held: dict[int, FileLock] = {}
        self._thread: threading.Thread | None = None
        #: monotonic time the thread wakes by itself (inf: only when notified)
        self._wakes_at = math.inf

    def add(self, lock: FileLock) -> None:
        with self._cond:
            self._held[id(lock)] = lock
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="exomonad-lock-refresh", daemon=True
                )
                self._thread.start()
            if lock._next_refresh < self._wakes_at:
                self._cond.notify()

    @property
    def cond(self) -> threading.Condition:
        """Held while a lock is refreshed (its mtime touched, then noted)."""
        return self._cond

    def discard(self, lock: FileLock) -> None:
        with self._cond:
            self._held.pop(id(lock), None)

    def _run(self) -> None:
        idle = 0.0  # the update interval of the last lock seen: how long to sleep idle
        with self._cond:
            while True:
                now = time.monotonic()
                if not self._held:
                    self._wakes_at = now + idle if idle else math.inf
                    self._cond.wait(idle or None)
                    idle = 0.0
                    continue
                nxt = min(lk._next_refresh for lk in self._held.values())
                idle = max(lk.settings.update for lk in self._held.values())
                if nxt > now:
                    self._wakes_at = nxt
                    self._cond.wait(nxt - now)
                    continue
                self._wakes_at = now
                for lk in list(self._held.values()):
                    if lk._next_refresh <= now:
                        lk._refresh()


_REFRESHER = _Refresher()


class FileLock:
    """A proper-lockfile compatible lock on ``target`` (a context manager).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with FileLock(d / "inbox.json") as lk:
    ...     (d / "inbox.json.lock").is_dir()
    True
    >>> (d / "inbox.json.lock").exists()
    False
    """

    def __init__(
        self, target: Path, settings: LockSettings = DEFAULT_LOCK, *, at: SafeDir | None = None
    ) -> None:
        self.target = target
        self.path = lock_dir_for(target)
        self.settings = settings
        if at is not None:
            at.name_of(target)  # ValueError now, not at acquire, if it is the wrong dir
        self._at = at
        self._dir: SafeDir | None = None  # while held: ``at``, or the parent we opened
        self._mtime_ns: int | None = None
        self._journal: Slot | None = None
        self._next_refresh = 0.0
        self.compromised = False

    @property
    def held(self) -> bool:
        """True while we hold the lock."""
        return self._mtime_ns is not None

    def _open_dir(self) -> SafeDir:
        if self._at is not None:
            return self._at
        try:
            return SafeDir.trusting(self.target.parent)
        except FileNotFoundError as exc:
            raise LockError(f"cannot lock {self.target}: its directory is missing") from exc

    def _close_dir(self) -> None:
        d, self._dir = self._dir, None
        if d is not None and d is not self._at:
            d.close()

    def _try_mkdir(self, d: SafeDir) -> bool:
        try:
            os.mkdir(self.path.name, dir_fd=d.fd)
        except FileExistsError:
            return False
        self._mtime_ns = d.lstat(self.path.name).st_mtime_ns
        self._journal = take_slot()
        if self._journal is not None:
            self._journal.record(self.path, self._mtime_ns, d.root)
        return True

    def _remove_if_stale(self, d: SafeDir) -> bool:
        """Remove the lock dir if it is stale; True if a retry should follow at once."""
        try:
            st = d.lstat(self.path.name)
        except FileNotFoundError:
            return True
        if time.time() - st.st_mtime < self.settings.stale:
            return False
        try:
            os.rmdir(self.path.name, dir_fd=d.fd)
        except FileNotFoundError:
            pass
        except OSError as exc:  # not empty, permissions: not ours to fix
            raise LockError(f"stale lock {self.path} could not be removed: {exc}") from exc
        return True

    def acquire(self) -> None:
        """Take the lock, retrying per the settings; raise :class:`LockError` when out."""
        if self.held:
            raise LockError(f"{self.path} is already held by this FileLock")
        self._dir = d = self._open_dir()
        try:
            self._take(d)
        except BaseException:
            self._close_dir()
            raise
        self.compromised = False
        if self.settings.update > 0:
            self._next_refresh = time.monotonic() + self.settings.update
            _REFRESHER.add(self)

    def _take(self, d: SafeDir) -> None:
        """Take the lock in ``d``: tried again as soon as something in ``d`` is removed
        (watched, :class:`~exomonad.teams.lockwait.Release`), and at the latest after each
        of the settings' waits, which together are the time it is waited for."""
        waits = self.settings.waits()
        attempt = 0
        until = 0.0  # when the present wait ends (monotonic)
        release: Release | None = None
        try:
            while True:
                if release is not None:
                    release.arm()  # a release after this wakes the wait below
                if self._try_take(d):
                    return
                now = time.monotonic()
                if now >= until:
                    if attempt >= len(waits):
                        raise LockError(
                            f"{self.path} still held after {len(waits)} retries "
                            f"({sum(waits) * 1000:.0f} ms)"
                        )
                    until = now + waits[attempt]
                    attempt += 1
                    if self.settings.watch and release is None and (release := Release.watch(d)):
                        continue  # it may have been let go before the watch began
                if release is None:
                    time.sleep(until - now)
                else:
                    release.wait(until - now)
        finally:
            if release is not None:
                release.close()

    def _try_take(self, d: SafeDir) -> bool:
        """Try once to make the lock dir, removing a stale one first if need be."""
        try:
            if self._try_mkdir(d):
                return True
        except FileNotFoundError as exc:
            raise LockError(f"cannot lock {self.target}: its directory is missing") from exc
        return self._remove_if_stale(d) and self._try_mkdir(d)

    def _refresh(self) -> None:
        """Called by the refresher thread: bump the mtime, or mark the lock compromised."""
        self._next_refresh = time.monotonic() + self.settings.update
        d, name = self._dir, self.path.name
        if self._mtime_ns is None or d is None:
            return
        try:
            if d.lstat(name).st_mtime_ns != self._mtime_ns:
                raise FileNotFoundError
            os.utime(name, dir_fd=d.fd, follow_symlinks=False)
            self._mtime_ns = d.lstat(name).st_mtime_ns
        except OSError:  # gone, replaced, or no longer ours to touch
            self.compromised = True
            _REFRESHER.discard(self)  # the refresher's Condition wraps an RLock
            return
        if self._journal is not None:  # recovery after a kill must know its new mtime
            self._journal.record(self.path, self._mtime_ns, d.root)

    def check(self) -> None:
        """Raise :class:`LockCompromisedError` if the lock is no longer ours.

        Under the refresher's lock: a refresh touches the lock dir before it notes the
        new mtime, and a check in between would take our own touch for a thief's.
        """
        d = self._dir
        if self._mtime_ns is None or d is None:
            raise LockCompromisedError(f"{self.path} is not held")
        with _REFRESHER.cond:
            try:
                ours = d.lstat(self.path.name).st_mtime_ns == self._mtime_ns
            except FileNotFoundError:
                ours = False
        if self.compromised or not ours:
            self.compromised = True
            raise LockCompromisedError(f"{self.path} was changed or removed while we held it")

    def release(self) -> None:
        """Release the lock; never remove a lock dir that is no longer ours."""
        _REFRESHER.discard(self)
        d, slot, self._journal = self._dir, self._journal, None
        stands = False  # whether a lock dir we made may still be there
        try:
            try:
                self.check()  # raises unless held, so d is the open directory below
            finally:
                self._mtime_ns = None
            try:
                os.rmdir(self.path.name, dir_fd=d.fd if d is not None else -1)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    stands = True
                    raise LockError(f"could not release {self.path}: {exc}") from exc
        finally:
            self._close_dir()
            if slot is not None:
                slot.release(keep=stands)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
