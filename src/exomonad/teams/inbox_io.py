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
a read, a comparison of bytes and the rename, unless the file changed meanwhile (then
the lock is let go and the write prepared again). An append (:class:`Appends`, the group
commit's change) to an inbox that is as this process's last append left it, or that with
entries appended since, is spliced onto its bytes instead of parsing and serialising
every entry again (:mod:`~exomonad.teams.inbox_splice`); the read under the lock still
decides. The replaced file is kept open across the rename and closed after the lock is
released, so freeing its blocks is not done while Claude Code's writers wait.
"""

from __future__ import annotations

import contextlib
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
    stage_bytes,
    stage_json,
)
from exomonad.teams.dirs import SafeDir
from exomonad.teams.inbox_splice import LastWrites, appended, message_ids, splice
from exomonad.teams.lock import FileLock, LockSettings, lock_dir_for
from exomonad.teams.lockwait import until_gone
from exomonad.teams.models import message_identity
from exomonad.teams.paths import TeamPaths

__all__ = [
    "AHEAD_TRIES",
    "BUSY_WAIT",
    "Appends",
    "Change",
    "Mutation",
    "close_deferred",
    "defer_closing",
    "ensure_file",
    "local_lock",
    "missing_ids",
    "mutate",
]

#: ``change(entries, inbox_dir)``: edit ``entries`` in place; True to write them back.
Change = Callable[[list[dict[str, Any]], SafeDir], bool]

#: ``new(present)``: the entries to append, given the message ids the inbox holds; adds
#: the ids of those it returns to ``present``.
New = Callable[[set[str]], list[dict[str, Any]]]
#: How many times :func:`mutate` prepares a write ahead of the lock before it writes
#: under the lock instead.
AHEAD_TRIES = 3
#: How long a write about to be prepared waits for another holder to let the lock go
#: (seconds; Claude Code's writers hold it ~3 ms for an inbox of a few hundred KB).
BUSY_WAIT = 0.05
_BUSY_POLL = 0.0005
#: What this process's last append left in each inbox.
_last = LastWrites()

#: File descriptors of replaced inboxes left for :func:`close_deferred` (None: closed
#: right after the lock is released).
_deferred: list[int] | None = None


def defer_closing() -> None:
    """From now on, keep each replaced inbox open until :func:`close_deferred`: closing
    the last descriptor of a replaced file frees its blocks (~0.1-0.2 ms for an inbox of
    a few hundred KB), which a caller with answers waiting does after answering."""
    global _deferred
    if _deferred is None:
        _deferred = []


def close_deferred() -> None:
    """Close what :func:`defer_closing` kept open."""
    while _deferred:
        os.close(_deferred.pop())


def _close(fd: int) -> None:
    if _deferred is None:
        os.close(fd)
    else:
        _deferred.append(fd)


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


class Appends:
    """A :data:`Change` that only appends: ``new(present)`` (see :data:`New`) gives the
    entries to add to the inbox, given the message ids already in it."""

    def __init__(self, new: New) -> None:
        self.new = new
        #: The message ids of the inbox as the last call left it.
        self.present: set[str] = set()

    def __call__(self, entries: list[dict[str, Any]], _: SafeDir) -> bool:
        self.present = message_ids(entries)
        added = self.new(self.present)
        entries.extend(added)
        return bool(added)


def _version(d: SafeDir, name: str) -> tuple[int, int, int] | None:
    try:
        st = d.lstat(name)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _hold_open(d: SafeDir, name: str) -> int | None:
    """The file ``name`` opened for reading (never through a link), or None."""
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                       dir_fd=d.fd)  # fmt: skip
    except OSError:
        return None


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
    """A write prepared before the lock: the bytes it was computed from, its temp file,
    and (an :class:`Appends`) the message ids of what it holds."""

    basis: bytes
    staged: Staged
    ids: set[str] | None


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
    before_lock: Callable[[], None] | None = None,
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
    write was computed from is the temp file renamed into place. Otherwise the lock is
    let go at once and the write prepared again from the new bytes, up to
    :data:`AHEAD_TRIES` times in all, the last time by running ``change`` under the lock
    on what was read there. The lock is then held for a read, a comparison and a rename.
    A write that finds the lock held when it is about to be prepared waits (up to
    :data:`BUSY_WAIT`) for its holder to let go, then is prepared from what the holder
    wrote, rather than written whole under the lock once it gets it. ``change`` must
    only edit ``entries`` (it may run several times, outside the lock).
    ``before_lock`` is called once, after the first preparation and before the lock is
    first taken (a caller that must not take it yet waits there, its write ready).
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
        held = 0.0
        for tries_left in range(AHEAD_TRIES - 1 if ahead else 0, -1, -1):
            prepared = _prepare(path, d, change, durable) if ahead else None
            if isinstance(prepared, _Busy):  # its holder is changing the file: prepare
                name = lock_dir_for(path).name
                if tries_left and until_gone(d, name, BUSY_WAIT, _BUSY_POLL, watch=lock.watch):
                    continue  # after it
                prepared = None
            if before_lock is not None:
                before_lock()
                before_lock = None
            done, hold = _locked(path, d, change, lock, durable, verify, prepared, tries_left)
            held += hold
            if done is not None:
                break
        assert done is not None  # the last try runs ``change`` under the lock
        if done.wrote and durable:
            d.fsync()
    return Mutation(wrote=done.wrote, verified=done.verified, version=done.version, held=held)


def _locked(
    path: Path,
    d: SafeDir,
    change: Change,
    lock: LockSettings,
    durable: bool,
    verify: Callable[[], Collection[str]] | None,
    prepared: _Ahead | None,
    tries_left: int,
) -> tuple[Mutation | None, float]:
    """The part of :func:`mutate` under the lock, and how long it held it; no mutation
    when ``prepared`` was computed from bytes that changed since and ``tries_left``
    allows preparing it again."""
    replaced: int | None = None
    done: Mutation | None = None
    try:
        with local_lock(path):
            with FileLock(path, lock, at=d):
                acquired = time.perf_counter()
                data = read_bytes_or_empty(path, at=d)
                staged: Staged | None = None
                ids: set[str] | None = None
                if prepared is not None and data == prepared.basis:
                    staged, ids, prepared = prepared.staged, prepared.ids, None
                elif prepared is None or not tries_left:
                    entries = parse_json_array(path, data)
                    if change(entries, d):
                        staged = stage_json(path, entries, durable=durable, at=d)
                        ids = change.present if isinstance(change, Appends) else None
                    else:  # nothing to write: are the ids there already (an earlier write's)?
                        wanted = verify() if verify is not None else ()
                        done = Mutation(False, not wanted or not missing_ids(data, wanted),
                                        None, 0.0)  # fmt: skip
                if staged is not None:
                    replaced = _hold_open(d, path.name)
                    inode = commit_staged(staged, at=d)
                    version = _version(d, path.name)
                    ok = version is not None and version[0] == inode
                    _last.remember(path, version if ok else None, staged.payload, ids)
                    done = Mutation(True, ok, version, 0.0)
            held = time.perf_counter() - acquired
    finally:
        if replaced is not None:  # freeing the replaced file's blocks: not under the lock
            _close(replaced)
        if prepared is not None:  # the file changed before we held the lock
            discard_staged(prepared.staged, at=d)
    return done, held


class _Busy:
    """What :func:`_prepare` says when someone holds the lock."""


_BUSY = _Busy()


def _prepare(path: Path, d: SafeDir, change: Change, durable: bool) -> _Ahead | _Busy | None:
    """``change`` applied to the inbox as it is now, unlocked, and written to a temp file
    (fsynced with ``durable``); :data:`_BUSY` when the lock is held (its holder is about
    to change the file); None when there is nothing to prepare: the bytes do not parse
    (a torn read of an in-place write, or a corrupt file: the read under the lock
    decides), or ``change`` wants no write.

    An append (:class:`Appends`) to the inbox as our last append left it, or as that with
    entries appended since (Claude Code's writers), is spliced onto its bytes
    (:mod:`~exomonad.teams.inbox_splice`); anything else is parsed whole."""
    if d.exists(lock_dir_for(path).name):
        return _BUSY
    appends = change if isinstance(change, Appends) else None
    known = _last.get(path) if appends is not None else None
    present: set[str] | None = None
    if known is not None and _version(d, path.name) == known.version:
        basis, present = known.data, set(known.ids)
    else:
        basis = read_bytes_or_empty(path, at=d)
        more = appended(known.data, basis) if known is not None else None
        if known is not None and more is not None:
            present = known.ids | message_ids(more)
    if appends is not None and present is not None:
        added = appends.new(present)
        if not added:
            return None
        with contextlib.suppress(ValueError):  # not a pretty array: parsed whole below
            payload = splice(basis, added)
            return _Ahead(basis, stage_bytes(path, payload, durable=durable, at=d), present)
    try:
        entries = parse_json_array(path, basis)
    except CorruptFileError:
        return None
    if not change(entries, d):
        return None
    ids = appends.present if appends is not None else None
    return _Ahead(basis, stage_json(path, entries, durable=durable, at=d), ids)
