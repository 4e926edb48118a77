"""One locked read-modify-write of an inbox file: the step every mailbox change goes through.

Claude Code's way: ``mkdir -p inboxes/``, create the file as ``[]`` with ``O_EXCL`` if
absent, lock, re-read, change, write (temp + rename), unlock, all relative to the inbox
directory opened once without following a symlink (:meth:`TeamPaths.open_dir`). The
critical section is one read, one parse, one serialise and one rename (and the temp
file's fsync when ``durable``); what was to be written is verified before the lock is
released (once released, Claude Code 2.1.330 may deliver and prune it at once). The
directory fsync of a durable write happens after the lock is released, keeping the hold
short for Claude Code's writers, which give up after ~655 ms.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from exomonad.teams.atomic import read_bytes, read_json_array, write_json_atomic
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import FileLock, LockSettings
from exomonad.teams.models import message_identity
from exomonad.teams.paths import TeamPaths

__all__ = ["Change", "Mutation", "ensure_file", "local_lock", "missing_ids", "mutate"]

#: ``change(entries, inbox_dir)``: edit ``entries`` in place; True to write them back.
Change = Callable[[list[dict[str, Any]], SafeDir], bool]

_local_locks: dict[Path, threading.Lock] = {}
_local_locks_guard = threading.Lock()


def local_lock(path: Path) -> threading.Lock:
    """One in-process lock per inbox, taken before the file lock.

    Threads of one process (the server's tool calls) then queue for an inbox in order
    instead of racing for proper-lockfile's lock with back-off sleeps, and only one of
    them at a time competes with Claude Code, whose writers give up after ~655 ms.
    """
    with _local_locks_guard:
        lock = _local_locks.get(path)
        if lock is None:
            lock = _local_locks[path] = threading.Lock()
        return lock


def ensure_file(d: SafeDir, name: str) -> None:
    """Create inbox ``name`` in ``d`` as ``[]`` unless it exists (never through a link)."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=d.fd)
    except FileExistsError:
        return
    try:
        os.write(fd, b"[]")
    finally:
        os.close(fd)


def missing_ids(data: bytes, message_ids: Collection[str]) -> set[str]:
    """Which of ``message_ids`` no entry of the inbox bytes ``data`` has as its identity."""
    wanted = set(message_ids)
    if not any(m.encode() in data for m in wanted):  # no need to parse
        return wanted
    return wanted - {message_identity(e) for e in orjson.loads(data)}


@dataclass(frozen=True)
class Mutation:
    """What one :func:`mutate` did."""

    #: ``change`` asked for a write and it happened.
    wrote: bool
    #: Every id asked to verify is in the file (checked before the lock was released).
    verified: bool
    #: (inode, mtime_ns, size) of the file as our write left it, taken under the lock.
    version: tuple[int, int, int] | None
    #: Seconds the file lock was held (0 when nothing was locked).
    held: float


_NOTHING = Mutation(wrote=False, verified=False, version=None, held=0.0)


def mutate(
    paths: TeamPaths,
    member: str,
    change: Change,
    *,
    lock: LockSettings,
    durable: bool,
    verify: Callable[[], Collection[str]] | None = None,
    create: bool = True,
) -> Mutation:
    """Run ``change`` on ``member``'s entries under lock; write if it returns True.

    ``verify`` names (called after ``change``) the message ids that must be in the file
    when the lock is released: after our own write, checked by the file's inode (the
    rename put our file in place and nobody else writes while we hold the lock); when
    ``change`` wrote nothing, by reading the entries back. Without ``create`` a missing
    inbox (or inbox directory) is left missing and nothing happens.
    """
    path = paths.inbox(member)
    try:
        d = paths.open_dir(path.parent, create=create)
    except FileNotFoundError:
        if create:
            raise
        return _NOTHING
    with d:
        if create:
            ensure_file(d, path.name)
        elif not d.exists(path.name):
            return _NOTHING
        version = None
        with local_lock(path):
            with FileLock(path, lock, at=d):
                acquired = time.perf_counter()
                entries = read_json_array(path, at=d)
                wrote = change(entries, d)
                if wrote:
                    inode = write_json_atomic(path, entries, durable=durable, sync_dir=False, at=d)
                    st = d.lstat(path.name)
                    version = (st.st_ino, st.st_mtime_ns, st.st_size)
                    ok = st.st_ino == inode
                else:  # nothing written: are the ids there already (an earlier write's)?
                    ids = verify() if verify is not None else ()
                    ok = not ids or not missing_ids(read_bytes(path, at=d), ids)
            held = time.perf_counter() - acquired
        if wrote and durable:
            d.fsync()
    return Mutation(wrote=wrote, verified=ok, version=version, held=held)
