"""Waiting for a held lock: woken when its holder lets it go, not only by a timer.

A lock here is a directory, ``<file>.lock`` (:mod:`exomonad.teams.lock`), and its holder
lets it go with ``rmdir``. A waiter that only sleeps proper-lockfile's back-off comes
back late: behind one of Claude Code's writes to a lead inbox of a few hundred KB (about
3.4 ms), a back-off of 1, 2 and 4 ms tries again at 7 ms, and behind a prune at 15 or
31 ms (docs/performance.md, issue 14). :class:`Release` watches the lock's directory
with inotify while a lock in it is waited for, and the waiter tries again as soon as
anything in it is removed or renamed away (a spurious wake-up costs one ``mkdir``). The
back-off stays the longest it sleeps without news, so a stale lock is still looked at on
the same schedule, and where inotify is not to be had (no instance or watch left, no
``/proc``) the waiter sleeps as before.

A wait borrows an inotify instance, adds a watch, and gives the instance back: closing
an instance that had watches waits for the kernel's grace period (7-8 ms measured here),
while a watch added and removed costs ~14 µs, so instances are kept, as many as waits
ever ran at once. The events are never parsed: what the instance has queued is read
and dropped before each try (:meth:`Release.arm`), and any event after that ends the
wait.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import select
import threading
import time

from asyncinotify import Mask

from exomonad.teams.dirs import SafeDir

__all__ = ["Release", "until_gone"]

#: Events that may mean a lock dir was let go (the queue overflowing wakes it too).
_GONE = int(Mask.DELETE | Mask.MOVED_FROM | Mask.ONLYDIR)
_READ = 1 << 16
_LIBC = ctypes.CDLL(None, use_errno=True)


def _checked(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


class _Instance:
    """An inotify instance (non-blocking, close-on-exec) and a poll object on it.

    The three calls are made through ``ctypes``: ``asyncinotify`` (the server's watcher)
    keeps every watch it adds until it has parsed the event that says it was removed,
    and this module never parses events.
    """

    def __init__(self) -> None:
        self.fd = _checked(_LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        self.poll = select.poll()
        self.poll.register(self.fd, select.POLLIN)

    def add_watch(self, path: str) -> int:
        return _checked(_LIBC.inotify_add_watch(self.fd, os.fsencode(path), _GONE))

    def rm_watch(self, wd: int) -> None:
        _checked(_LIBC.inotify_rm_watch(self.fd, wd))

    def drain(self) -> None:
        """Read and drop every event queued."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fd, _READ):
                pass


#: Instances not in use: a wait borrows one and gives it back (none is ever closed).
_FREE: list[_Instance] = []
_FREE_LOCK = threading.Lock()


def _borrow() -> _Instance:
    with _FREE_LOCK:
        if _FREE:
            return _FREE.pop()
    return _Instance()


def _give_back(instance: _Instance) -> None:
    with _FREE_LOCK:
        _FREE.append(instance)


def _forget_in_child() -> None:  # a forked child must not read its parent's events
    global _FREE, _FREE_LOCK
    _FREE, _FREE_LOCK = [], threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


class Release:
    """A watch on a lock's directory, held by the thread waiting for the lock.

    Build one with :meth:`watch`; :meth:`arm` it before each try, :meth:`wait` after a
    try failed, and :meth:`close` it (or use it as a context manager) when done.

    >>> import os, tempfile, threading
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp()); os.mkdir(root / "x.lock")
    >>> with SafeDir.trusting(root) as d, Release.watch(d) as release:
    ...     release.arm()
    ...     release.wait(0.01)  # still held
    ...     threading.Timer(0.05, os.rmdir, [root / "x.lock"]).start()
    ...     release.wait(30.0)  # back as the holder lets it go, not after 30 s
    False
    True
    """

    def __init__(self, instance: _Instance, wd: int) -> None:
        self._instance = instance
        self._wd = wd

    @classmethod
    def watch(cls, d: SafeDir) -> Release | None:
        """Start watching ``d`` (None: no inotify to be had)."""
        try:
            instance = _borrow()
        except OSError:  # out of inotify instances
            return None
        try:  # the directory held open, by its descriptor: not a path swapped meanwhile
            wd = instance.add_watch(f"/proc/self/fd/{d.fd}")
        except OSError:  # no /proc, out of watches
            _give_back(instance)
            return None
        return cls(instance, wd)

    def arm(self) -> None:
        """Forget what happened so far: only what happens from now on ends a wait."""
        self._instance.drain()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds: True once something in the directory was
        removed or renamed away since :meth:`arm` (try again now), False if not."""
        return bool(self._instance.poll.poll(max(0, math.ceil(timeout * 1000))))

    def close(self) -> None:
        """Stop watching (the instance is kept for the next wait)."""
        with contextlib.suppress(OSError):  # gone already: the directory was removed
            self._instance.rm_watch(self._wd)
        self._instance.drain()
        _give_back(self._instance)

    def __enter__(self) -> Release:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def until_gone(d: SafeDir, name: str, timeout: float, poll: float, *, watch: bool = True) -> bool:
    """Wait until ``name`` in ``d`` is gone (True), at most ``timeout`` seconds (False):
    woken by its removal, or, without inotify (or ``watch``), looking again every ``poll``
    seconds.

    >>> import os, tempfile, threading
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp()); os.mkdir(root / "x.lock")
    >>> with SafeDir.trusting(root) as d:
    ...     until_gone(d, "x.lock", 0.01, 0.001)
    ...     threading.Timer(0.05, os.rmdir, [root / "x.lock"]).start()
    ...     until_gone(d, "x.lock", 30.0, 30.0)
    False
    True
    """
    deadline = time.monotonic() + timeout
    release = Release.watch(d) if watch and d.exists(name) else None
    try:
        while True:
            if release is not None:
                release.arm()
            if not d.exists(name):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if release is None:
                time.sleep(min(poll, left))
            else:
                release.wait(left)
    finally:
        if release is not None:
            release.close()
