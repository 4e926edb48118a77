"""One locked read-modify-write of an inbox file: the step every mailbox change goes through.

Claude Code's way: ``mkdir -p inboxes/``, create the file as ``[]`` with ``O_EXCL`` if
absent, lock, re-read, change, write (temp + rename), unlock, all relative to the inbox
directory opened once without following a symlink (:meth:`TeamPaths.open_dir`). The
critical section is one read, one parse, one serialise and one rename (and the temp
file's fsync when ``durable``); what was to be written is verified before the lock is
released (once released, Claude Code 2.1.330 may deliver and prune it at once). The
directory fsync of a durable write happens after the lock is released, keeping the hold
short for Claude Code's writers, which give up after ~655 ms. Appends go further
(``ahead``): parse, serialise, write and fsync happen before the lock, and under it only
a read, a comparison of bytes and the rename, unless the file changed meanwhile.
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

from exomonad.errors import CorruptFileError
from exomonad.teams.atomic import (
    Staged,
    commit_staged,
    discard_staged,
    parse_json_array,
    read_bytes_or_empty,
    stage_json,
)
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import FileLock, LockSettings, lock_dir_for
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


@dataclass(frozen=True)
class _Ahead:
    """A write prepared before the lock: the bytes it was computed from, and its temp file."""

    basis: bytes
    staged: Staged


def mutate(
    paths: TeamPaths,
    member: str,
    change: Change,
    *,
    lock: LockSettings,
    durable: bool,
    verify: Callable[[], Collection[str]] | None = None,
    create: bool = True,
    ahead: bool = False,
) -> Mutation:
    """Run ``change`` on ``member``'s entries under lock; write if it returns True.

    ``verify`` names (called after ``change``) the message ids that must be in the file
    when the lock is released: after our own write, checked by the file's inode (the
    rename put our file in place and nobody else writes while we hold the lock); when
    ``change`` wrote nothing, by reading the entries back. Without ``create`` a missing
    inbox (or inbox directory) is left missing and nothing happens.

    With ``ahead``, while nobody holds the lock, the write is prepared before taking it
    (:func:`_prepare`: read, ``change``, serialise, temp file written and fsynced), and
    under the lock the file is read again: only if its bytes are exactly the ones the
    write was computed from is the temp file renamed into place, otherwise it is thrown
    away and ``change`` runs again on what was read under the lock. The lock is then held
    for a read, a comparison and a rename. ``change`` must only edit ``entries`` (it may
    run twice, once outside the lock).
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
        prepared = _prepare(path, d, change, durable) if ahead else None
        try:
            with local_lock(path):
                with FileLock(path, lock, at=d):
                    acquired = time.perf_counter()
                    data = read_bytes_or_empty(path, at=d)
                    if prepared is not None and data == prepared.basis:
                        wrote, inode = True, commit_staged(prepared.staged, at=d)
                        prepared = None
                    else:
                        entries = parse_json_array(path, data)
                        wrote = change(entries, d)
                        if wrote:
                            staged = stage_json(path, entries, durable=durable, at=d)
                            inode = commit_staged(staged, at=d)
                    if wrote:
                        st = d.lstat(path.name)
                        version = (st.st_ino, st.st_mtime_ns, st.st_size)
                        ok = st.st_ino == inode
                    else:  # nothing written: are the ids there already (an earlier write's)?
                        ids = verify() if verify is not None else ()
                        ok = not ids or not missing_ids(data, ids)
                held = time.perf_counter() - acquired
        finally:
            if prepared is not None:  # the file changed before we held the lock
                discard_staged(prepared.staged, at=d)
        if wrote and durable:
            d.fsync()
    return Mutation(wrote=wrote, verified=ok, version=version, held=held)


def _prepare(path: Path, d: SafeDir, change: Change, durable: bool) -> _Ahead | None:
    """``change`` applied to the inbox as it is now, unlocked, and written to a temp file
    (fsynced with ``durable``); None when there is nothing to prepare: the lock is held
    (its holder is about to change the file, and whoever queues meanwhile then joins the
    write made under the lock), the bytes do not parse (a torn read of an in-place write,
    or a corrupt file: the read under the lock decides), or ``change`` wants no write."""
    if d.exists(lock_dir_for(path).name):
        return None
    basis = read_bytes_or_empty(path, at=d)
    try:
        entries = parse_json_array(path, basis)
    except CorruptFileError:
        return None
    if not change(entries, d):
        return None
    return _Ahead(basis, stage_json(path, entries, durable=durable, at=d))
