"""Inboxes: append, read, mark read (both dialects) and compact, under Claude Code's lock.

Every change is one locked read-modify-write (:func:`exomonad.teams.inbox_io.mutate`):
lock, re-read, change, write (temp + rename), verify, unlock, relative to the inbox
directory opened without following a symlink. Appends from threads of one process go
through a group commit (:mod:`exomonad.teams.groupcommit`): those that queue while one
is being written share the next write. After writing, still under the lock, the entries
are verified: a message reported as sent is on disk. Failures retry with backoff and end
in :class:`~exomonad.errors.DeliveryError`: a message is never dropped silently.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from exomonad.errors import CorruptFileError, DeliveryError, LockError, UnknownRecipientError
from exomonad.teams.atomic import parse_json_array, read_bytes, read_json_array
from exomonad.teams.config import load_config
from exomonad.teams.dialects import Dialect, get_dialect
from exomonad.teams.dirs import SafeDir
from exomonad.teams.groupcommit import Pending, Take, queue_for
from exomonad.teams.inbox_io import Appends, Change, mutate
from exomonad.teams.lock import DEFAULT_LOCK, FileLock, LockSettings
from exomonad.teams.models import InboxMessage, message_identity, now_iso
from exomonad.teams.paths import TeamPaths, validate_name
from exomonad.util.futures import then

__all__ = ["CompactionResult", "Mailbox", "new_entry"]

#: Recipients that are never members but always valid.
_ALWAYS_VALID = frozenset({"user"})


@dataclass(frozen=True)
class CompactionResult:
    """What :meth:`Mailbox.compact` did."""

    kept: int
    archived: int
    archive: Path | None


def new_entry(sender: str, text: str, summary: str | None = None, color: str | None = None,
              **extra: Any) -> dict[str, Any]:  # fmt: skip
    """A new inbox entry from ``sender``, stamped with the time now (no message id yet:
    :meth:`Mailbox.prepare` gives it one)."""
    entry: dict[str, Any] = {"from": sender, "text": text, "timestamp": now_iso()}
    if summary is not None:
        entry["summary"] = summary
    if color is not None:
        entry["color"] = color
    entry.update(extra)
    return entry


class Mailbox:
    """The inboxes of one team.

    Parameters
    ----------
    paths:
        The team's paths (:class:`TeamPaths`).
    dialect:
        Which Claude Code version's conventions to write and mark read with.
    durable:
        fsync each write (default). Off, writes are still atomic, just not crash-durable.
    lock:
        Lock retry settings for our side (we never drop a message on lock exhaustion).
    attempts:
        How many times :meth:`append` tries before raising :class:`DeliveryError`.
    on_append:
        Called with the recipient and the entry after each verified :meth:`append`
        (the server publishes its events this way).
    """

    def __init__(
        self,
        paths: TeamPaths,
        *,
        dialect: Dialect | None = None,
        durable: bool = True,
        lock: LockSettings = DEFAULT_LOCK,
        attempts: int = 5,
        on_append: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.paths = paths
        self.on_append = on_append
        self.dialect = dialect or get_dialect()
        self.durable = durable
        self.lock = lock
        self.attempts = attempts
        #: member → (inode, mtime_ns, size) of the inbox as our last write left it,
        #: taken under the lock (see :meth:`unchanged_since_our_write`).
        self._our_version: dict[str, tuple[int, int, int]] = {}

    # -- helpers -----------------------------------------------------------------------

    def _mutate(
        self,
        member: str,
        change: Change,
        *,
        create: bool = True,
        remember: Callable[[], bool] | None = None,
    ) -> None:
        """Run ``change`` on ``member``'s entries under lock (:func:`inbox_io.mutate`); a
        write that ``remember`` approves is remembered for :meth:`unchanged_since_our_write`.
        """
        done = mutate(
            self.paths, member, change, lock=self.lock, durable=self.durable, create=create
        )
        if done.wrote:
            if remember is not None and remember() and done.version is not None:
                self._our_version[member] = done.version
            else:
                self._our_version.pop(member, None)

    def unchanged_since_our_write(self, member: str) -> bool:
        """True if ``member``'s inbox is exactly as this mailbox's last write left it.

        Only :meth:`mark_read` writes that leave no unseen entry are remembered, so a
        reader can skip the wake-up its own write caused. Any later write that adds an
        entry changes the size (and our own appends forget the version), so this can
        never hide a new message.
        """
        ours = self._our_version.get(member)
        if ours is None:
            return False
        path = self.paths.inbox(member)
        try:
            with self.paths.open_dir(path.parent) as d:
                st = d.lstat(path.name)
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_mtime_ns, st.st_size) == ours

    def check_recipient(self, to: str) -> None:
        """Refuse a recipient that is not a member of the team (``user`` is always valid).

        The config is parsed once per version of ``config.json`` (:func:`load_config`).
        """
        validate_name(to, "recipient")
        if to in _ALWAYS_VALID:
            return
        names = load_config(self.paths).member_names()
        if to not in names:
            raise UnknownRecipientError(
                f"{to!r} is not a member of team {self.paths.team!r} "
                f"(members: {', '.join(sorted(names))}); refusing to write a phantom inbox"
            )

    # -- writing -----------------------------------------------------------------------

    def send(
        self,
        to: str,
        *,
        sender: str,
        text: str,
        summary: str | None = None,
        color: str | None = None,
        check_member: bool = True,
        **extra: Any,
    ) -> str:
        """Append a new message to ``to``'s inbox and return its message id."""
        entry = new_entry(sender, text, summary, color, **extra)
        return self.append(to, entry, check_member=check_member)

    def append(
        self, to: str, entry: dict[str, Any] | InboxMessage, *, check_member: bool = True
    ) -> str:
        """Append ``entry`` (stamped with a ``messageId``), verify it landed, return the id.

        Appends from other threads of this process that queue meanwhile share the write
        (:mod:`~exomonad.teams.groupcommit`, written with the settings of whichever
        mailbox leads the group). Idempotent by message id: an entry whose id is in the
        inbox already is not added again. Raises :class:`UnknownRecipientError` for
        non-members, :class:`CorruptFileError` if the inbox cannot be parsed (its bytes
        are left alone), and :class:`DeliveryError` once every attempt failed.
        """
        pending = self.prepare(to, entry, check_member=check_member)
        queue_for(self.paths.inbox(to), self.durable).submit(
            pending, lambda take: self.write_group(to, take)
        )
        return self.delivered(to, pending)

    def append_later(self, to: str, entry: dict[str, Any]) -> Future[str]:
        """:meth:`append`, returning at once: the future gives the message id once the
        entry is verified on disk, or :meth:`append`'s error. A bad entry or an unknown
        recipient raises here, before anything is queued. For an event loop: the write
        happens in a thread of the group commit's own (one per group, not per caller)."""
        pending = self.prepare(to, entry)
        written = self.commit_later(to, pending)
        return then(written, lambda _: self.delivered(to, pending))

    def commit_later(self, to: str, pending: Pending) -> Future[None]:
        """Queue ``pending`` (from :meth:`prepare`) for ``to``'s inbox in this process's
        group commit; the future completes once it is verified on disk."""
        return queue_for(self.paths.inbox(to), self.durable).submit_later(
            pending, lambda take: self.write_group(to, take)
        )

    def prepare(
        self, to: str, entry: dict[str, Any] | InboxMessage, *, check_member: bool = True
    ) -> Pending:
        """``entry`` checked and stamped for the group commit (the first half of
        :meth:`append`): raises as :meth:`append` does for a bad entry or recipient."""
        raw = entry.to_json() if isinstance(entry, InboxMessage) else dict(entry)
        for key in ("from", "text", "timestamp"):
            if not isinstance(raw.get(key), str):
                raise DeliveryError(f"entry needs a string {key!r}; Claude Code would delete it")
        if check_member:
            self.check_recipient(to)
        has_id = any(isinstance(raw.get(k), str) and raw[k] for k in ("msg_id", "messageId"))
        message_id = message_identity(raw) if has_id else self.dialect.new_message_id()
        return Pending(message_id, self.dialect.stamp(raw, message_id))

    def delivered(self, to: str, pending: Pending) -> str:
        """After ``pending`` was verified on disk: tell who listens (the last half of
        :meth:`append`); its message id."""
        self._our_version.pop(to, None)
        if self.on_append is not None:
            self.on_append(to, pending.entry)
        return pending.message_id

    def write_group(
        self, member: str, take: Take, *, before_lock: Callable[[], None] | None = None
    ) -> float:
        """Write the appends ``take`` hands out in one locked rewrite, retrying with
        backoff; return how long the file lock was held (the group commit's ``write``).
        ``before_lock``: called once, the write prepared, before the lock is taken."""
        group: list[Pending] = []

        def new(present: set[str]) -> list[dict[str, Any]]:
            # Idempotent: a retry after a write that did land must not add a second copy.
            group[:] = take()
            added = []
            for p in group:
                if p.message_id not in present:
                    added.append(p.entry)
                    present.add(p.message_id)
            return added

        last: Exception | None = None
        delay = 0.01
        for _ in range(self.attempts):
            try:
                done = mutate(
                    self.paths,
                    member,
                    Appends(new),
                    lock=self.lock,
                    durable=self.durable,
                    verify=lambda: [p.message_id for p in group],
                    ahead=True,
                    before_lock=before_lock,
                )
                before_lock = None
                if done.verified:
                    return done.held
                last = DeliveryError(
                    f"message(s) {', '.join(p.message_id for p in group)} not found after writing"
                )
            except CorruptFileError:
                raise
            except (LockError, OSError) as exc:
                last = exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        raise DeliveryError(
            f"could not deliver to {self.paths.inbox(member)} after {self.attempts} attempts: "
            f"{last}"
        ) from last

    # -- reading -----------------------------------------------------------------------

    def read_raw(self, member: str) -> list[dict[str, Any]]:
        """All entries as raw dicts.

        Lock-free when the file reads whole (writers that rename never expose a partial
        file). Claude Code 2.1.112 rewrites in place (truncate, then write), so an empty
        or unparsable read is retried once under the writers' lock; only a file that is
        still unreadable then is corrupt. Every strict prefix of a JSON array is invalid
        JSON, so a torn read can never pass for a shorter inbox.
        """
        path = self.paths.inbox(member)
        try:
            d = self.paths.open_dir(path.parent)
        except FileNotFoundError:
            return []
        with d:
            try:
                data = read_bytes(path, at=d)
            except FileNotFoundError:
                return []
            if data:
                try:
                    return parse_json_array(path, data)
                except CorruptFileError:
                    pass
            if not d.exists(path.name):
                return []
            with FileLock(path, self.lock, at=d):
                return read_json_array(path, at=d)

    def read(self, member: str, *, unread_only: bool = False) -> list[InboxMessage]:
        """All (or only unread) entries, as models; malformed entries are skipped."""
        out = []
        for e in self.read_raw(member):
            if not all(isinstance(e.get(k), str) for k in ("from", "text", "timestamp")):
                continue
            try:
                msg = InboxMessage.from_json(e)
            except ValidationError:  # e.g. "summary": 5; Claude Code would not show it either
                continue
            if not (unread_only and msg.is_read):
                out.append(msg)
        return out

    def mark_read(
        self, member: str, ids: Iterable[str], *, seen: Iterable[str] | None = None
    ) -> int:
        """Mark entries delivered, the way the dialect does; returns how many matched.

        ``flag`` sets ``read: true`` and keeps them; ``prune`` deletes them. A reader that
        passes ``seen`` (the identities it has read) lets :meth:`unchanged_since_our_write`
        recognise this write, but only when every entry left in the file was seen: an
        entry appended after the reader's read must wake it again.
        """
        wanted = set(ids)
        known = set(seen) if seen is not None else None
        count = 0
        all_seen = False

        def change(entries: list[dict[str, Any]], _: SafeDir) -> bool:
            nonlocal count, all_seen
            keep = []
            for e in entries:
                if message_identity(e) in wanted:
                    count += 1
                    if self.dialect.mark_read == "flag":
                        e["read"] = True
                        keep.append(e)
                else:
                    keep.append(e)
            entries[:] = keep
            all_seen = known is not None and all(message_identity(e) in known for e in keep)
            return count > 0

        self._mutate(member, change, create=False, remember=lambda: all_seen)
        return count

    # -- compaction --------------------------------------------------------------------

    def compact(
        self, member: str, *, max_entries: int = 200, max_bytes: int = 256 * 1024
    ) -> CompactionResult:
        """Bound the inbox: archive the oldest *read* entries beyond the limits.

        Unread entries are never removed. Removed entries are appended (and fsynced) to
        ``<member>.archive.jsonl`` before the inbox is rewritten, so a crash in between
        can only duplicate an archived line, never lose an entry.
        """
        archive = self.paths.archive(member)
        moved: list[dict[str, Any]] = []
        kept = 0

        def change(entries: list[dict[str, Any]], d: SafeDir) -> bool:
            nonlocal kept
            size = len(orjson.dumps(entries, option=orjson.OPT_INDENT_2))
            excess = len(entries) - max_entries
            keep: list[dict[str, Any]] = []
            for e in entries:
                over = excess > 0 or size > max_bytes
                if over and e.get("read") is True:
                    moved.append(e)
                    excess -= 1
                    size -= len(orjson.dumps(e, option=orjson.OPT_INDENT_2)) + 4
                else:
                    keep.append(e)
            kept = len(keep)
            if not moved:
                return False
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(d.name_of(archive), flags, 0o644, dir_fd=d.fd)  # ELOOP on a link
            with os.fdopen(fd, "ab") as fh:
                fh.write(b"".join(orjson.dumps(e) + b"\n" for e in moved))
                fh.flush()
                os.fsync(fh.fileno())
            entries[:] = keep
            return True

        self._mutate(member, change, create=False)
        return CompactionResult(kept=kept, archived=len(moved), archive=archive if moved else None)
