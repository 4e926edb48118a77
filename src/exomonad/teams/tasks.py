"""Claude Code's shared task list, ``tasks/<list>/<id>.json``, kept exactly as Claude Code keeps it.

Layout of ``tasks/<list>/`` (``<list>`` = ``$CLAUDE_CODE_TASK_LIST_ID`` or the team name):

* ``<id>.json``: one task, written like ``JSON.stringify(task, null, 2)``; ids are the
  strings ``"1"``, ``"2"``, ...
* ``.lock``: an empty file, the *target* of the list lock; the lock itself is the
  proper-lockfile directory ``.lock.lock``. Create (and here delete) run under it.
* ``.highwatermark``: a bare integer, the largest id ever handed out, so ids are never
  reused after deletes or after Claude Code resets the list.

Create: mkdir -p, touch ``.lock``, lock it, id = max(largest numeric ``*.json`` stem,
``.highwatermark``) + 1 (numbers parsed like JavaScript's ``parseInt``), write
``<id>.json`` atomically, write ``.highwatermark``. Update (the 2.1.330 way): lock
``<id>.json.lock``, re-read, merge, temp + rename. Claim refuses a task owned by someone
else, a completed task, or one blocked by a task that is not completed; a blocker whose
file is missing or unreadable counts as resolved, because Claude Code's own listing
skips such files.

Differences from Claude Code, on purpose: unknown top-level keys of a task survive our
rewrites (Claude Code strips them, so keep custom data in ``metadata``); a corrupt task
file is never overwritten (:class:`~exomonad.errors.CorruptFileError`), and
:meth:`TaskStore.list` skips it and records it in :attr:`TaskStore.problems`.

The task list does not need a team ``config.json``: Claude Code keys it by name only.
Every operation works relative to ``tasks/<list>/`` opened without following symlinks
(:meth:`TeamPaths.open_dir`): a symlinked ``tasks/`` or list directory raises
:class:`~exomonad.errors.SymlinkedDirectoryError`.
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, get_args

from exomonad.errors import CorruptFileError, TaskError
from exomonad.teams.atomic import write_json_atomic
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import FileLock
from exomonad.teams.models import Task, TaskStatus
from exomonad.teams.paths import validate_name
from exomonad.teams.taskread import HIGHWATERMARK, LIST_LOCK, TaskReader, parse_int

__all__ = ["HIGHWATERMARK", "LIST_LOCK", "TASK_STATUSES", "ClaimRefusedError", "TaskStore"]

#: Valid task statuses, in workflow order.
TASK_STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)

_STANDARD = (
    "id",
    "subject",
    "description",
    "activeForm",
    "owner",
    "status",
    "blocks",
    "blockedBy",
    "metadata",
)


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET = _Unset.UNSET
_Change = Callable[[dict[str, Any], Task], bool]


def _normalise(raw: dict[str, Any]) -> dict[str, Any]:
    """Standard fields first in Claude Code's order (all of them), unknown keys after."""
    out: dict[str, Any] = {
        "id": raw["id"],
        "subject": raw["subject"],
        "description": raw.get("description", ""),
    }
    for key in ("activeForm", "owner"):
        if raw.get(key) is not None:
            out[key] = raw[key]
    out["status"] = raw.get("status", "pending")
    out["blocks"] = list(raw.get("blocks", []))
    out["blockedBy"] = list(raw.get("blockedBy", []))
    if raw.get("metadata") is not None:
        out["metadata"] = raw["metadata"]
    out.update((k, v) for k, v in raw.items() if k not in _STANDARD)
    return out


class ClaimRefusedError(TaskError):
    """A claim was refused; ``reason`` is Claude Code's code for why.

    ``reason`` is one of ``already_claimed``, ``already_resolved`` or ``blocked``;
    ``blocked_by`` lists the open blockers when blocked.
    """

    def __init__(
        self, task_id: str, reason: str, message: str, blocked_by: Iterable[str] = ()
    ) -> None:
        super().__init__(f"cannot claim task {task_id}: {message}")
        self.task_id = task_id
        self.reason = reason
        self.blocked_by = list(blocked_by)


class TaskStore(TaskReader):
    """The task list of one team (or of ``$CLAUDE_CODE_TASK_LIST_ID``), read and written.

    Reading is :class:`~exomonad.teams.taskread.TaskReader`'s; the writes here take
    Claude Code's locks.

    Parameters
    ----------
    paths:
        The team's paths; the directory is ``paths.tasks_dir``, read once here.
    lock:
        Retry settings for our side of the proper-lockfile locks.
    durable:
        fsync each write (default); off, writes are still atomic for readers.

    Attributes
    ----------
    problems:
        The :class:`~exomonad.errors.CorruptFileError` of every task file the last
        :meth:`list` call had to skip (empty when all files were readable).

    >>> import tempfile
    >>> from exomonad.teams.paths import TeamPaths
    >>> store = TaskStore(TeamPaths("demo", root=tempfile.mkdtemp()))
    >>> store.create("write the parser").id, store.create("test it", blocked_by=["1"]).id
    ('1', '2')
    >>> store.get("1").blocks
    ['2']
    """

    # -- locked files --------------------------------------------------------------------

    def _write(self, raw: dict[str, Any], d: SafeDir) -> Task:
        raw = _normalise(raw)
        task = Task.from_json(raw)  # never write what we could not read back
        write_json_atomic(self.path(task.id), raw, durable=self.durable, at=d)
        return task

    def _set_highwatermark(self, value: int, d: SafeDir) -> None:
        write_json_atomic(self.dir / HIGHWATERMARK, value, durable=self.durable, at=d)

    @contextlib.contextmanager
    def _list_lock(self) -> Iterator[SafeDir]:
        """mkdir -p the list dir, touch ``.lock``, hold the list lock; yields the dir."""
        with self._open(create=True) as d:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            with contextlib.suppress(FileExistsError):
                os.close(os.open(LIST_LOCK, flags, 0o644, dir_fd=d.fd))
            with FileLock(self.dir / LIST_LOCK, self.lock, at=d):
                yield d

    def _mutate(self, task_id: str, change: _Change) -> Task:
        """Run ``change`` on the raw task under ``<id>.json.lock``; write if it returns True."""
        path = self.path(task_id)
        with self._open_existing(task_id) as d:
            if not d.exists(path.name):
                raise TaskError(f"task {task_id} not found in {self.dir}")
            with FileLock(path, self.lock, at=d):
                raw, task = self._read(task_id, d)
                if not change(raw, task):
                    return task
                raw["id"] = task_id
                return self._write(raw, d)

    # -- writing -------------------------------------------------------------------------

    def create(
        self,
        subject: str,
        description: str = "",
        *,
        active_form: str | None = None,
        owner: str | None = None,
        blocked_by: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Task:
        """Create a pending task with the next id and return it.

        Each of ``blocked_by`` must exist; it gets the new id added to its ``blocks``.
        """
        if not isinstance(subject, str) or not subject.strip():
            raise TaskError("a task needs a non-empty subject")
        blockers = list(dict.fromkeys(blocked_by))
        for b in blockers:
            self.get(b)
        raw: dict[str, Any] = {
            "subject": subject,
            "description": description,
            "activeForm": active_form,
            "owner": owner,
            "status": "pending",
            "blocks": [],
            "blockedBy": blockers,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        with self._list_lock() as d:
            new_id = self._next_id(d)
            task = self._write({"id": new_id, **raw}, d)
            self._set_highwatermark(int(new_id), d)
        for b in blockers:
            self._mutate(b, _adder("blocks", [new_id]))
        return task

    def update(
        self,
        task_id: str,
        *,
        subject: str | _Unset = _UNSET,
        description: str | _Unset = _UNSET,
        active_form: str | _Unset | None = _UNSET,
        status: TaskStatus | _Unset = _UNSET,
        owner: str | _Unset | None = _UNSET,
        metadata: Mapping[str, Any] | _Unset | None = _UNSET,
        add_blocks: Iterable[str] = (),
        add_blocked_by: Iterable[str] = (),
        owned_by: str | None = None,
    ) -> Task:
        """Merge changes into task ``task_id`` under its lock and return the result.
        ``owned_by``: refuse (:class:`TaskError`) unless the task is that agent's.

        Only the arguments given change. ``owner=None`` / ``active_form=None`` remove the
        field. ``metadata`` is merged into the existing dict (a ``None`` value deletes that
        key; ``metadata=None`` deletes all of it). ``add_blocks`` / ``add_blocked_by``
        link tasks both ways: ``A.blocks`` holds ``B`` exactly when ``B.blockedBy`` holds ``A``.
        """
        if status is not _UNSET and status not in TASK_STATUSES:
            raise TaskError(f"status must be one of {', '.join(TASK_STATUSES)}, not {status!r}")
        if isinstance(subject, str) and not subject.strip():
            raise TaskError("a task needs a non-empty subject")
        blocks, blocked_by = list(dict.fromkeys(add_blocks)), list(dict.fromkeys(add_blocked_by))
        for other in (*blocks, *blocked_by):
            if other == task_id:
                raise TaskError(f"task {task_id} cannot block itself")
            self.get(other)
        fields: dict[str, Any] = {
            k: v
            for k, v in (
                ("subject", subject),
                ("description", description),
                ("activeForm", active_form),
                ("status", status),
                ("owner", owner),
            )
            if v is not _UNSET
        }

        def change(raw: dict[str, Any], task: Task) -> bool:
            if owned_by is not None and task.owner != owned_by:
                whose = f"{task.owner!r}'s" if task.owner else "nobody's (claim it first)"
                raise TaskError(f"task {task_id} is {whose}: only its owner or the lead "
                                "may update it")  # fmt: skip
            before = dict(raw)
            for key, value in fields.items():
                if value is None:
                    raw.pop(key, None)
                else:
                    raw[key] = value
            if metadata is None:
                raw.pop("metadata", None)
            elif not isinstance(metadata, _Unset):
                merged = dict(raw.get("metadata") or {})
                for key, value in metadata.items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                raw["metadata"] = merged
            _adder("blocks", blocks)(raw, task)
            _adder("blockedBy", blocked_by)(raw, task)
            return raw != before

        result = self._mutate(task_id, change)
        for other in blocks:
            self._mutate(other, _adder("blockedBy", [task_id]))
        for other in blocked_by:
            self._mutate(other, _adder("blocks", [task_id]))
        return result

    def claim(self, task_id: str, owner: str) -> Task:
        """Make ``owner`` the owner of task ``task_id`` and set it ``in_progress``.

        Raises :class:`ClaimRefusedError` if someone else owns it, it is completed, or a
        task in its ``blockedBy`` is not completed. Claiming your own task is idempotent.
        """
        validate_name(owner, "owner")

        def change(raw: dict[str, Any], task: Task) -> bool:
            if task.owner and task.owner != owner:
                raise ClaimRefusedError(
                    task_id, "already_claimed", f"already owned by {task.owner!r}"
                )
            if task.status == "completed":
                raise ClaimRefusedError(task_id, "already_resolved", "it is already completed")
            open_ids = {t.id for t in self._scan()[0] if t.status != "completed"}
            blockers = [b for b in task.blocked_by if b in open_ids]
            if blockers:
                raise ClaimRefusedError(
                    task_id, "blocked", f"blocked by open task(s) {', '.join(blockers)}", blockers
                )
            if task.owner == owner and task.status == "in_progress":
                return False
            raw.update(owner=owner, status="in_progress")
            return True

        return self._mutate(task_id, change)

    def delete(self, task_id: str) -> None:
        """Delete task ``task_id`` and remove its id from every other task's links.

        Under the list lock the high-water mark is raised to the id first, so the id is
        never handed out again. The file goes even if it is corrupt (that is the way to
        remove one); :class:`TaskError` if it does not exist.
        """
        name = self.path(task_id).name
        with self._list_lock() as d:
            if not d.exists(name):
                raise TaskError(f"task {task_id} not found in {self.dir}")
            n = parse_int(task_id)
            if n is not None and n > self._highwatermark(d):
                self._set_highwatermark(n, d)
            os.unlink(name, dir_fd=d.fd)
        for task in self._scan()[0]:
            if task_id in task.blocks or task_id in task.blocked_by:
                try:
                    self._mutate(task.id, _remover(task_id))
                except (TaskError, CorruptFileError):
                    continue  # deleted meanwhile, or unreadable: nothing of ours to fix


def _adder(key: str, ids: list[str]) -> _Change:
    """A change that appends the missing ``ids`` to list field ``key``."""

    def change(raw: dict[str, Any], task: Task) -> bool:
        current = list(raw.get(key, []))
        missing = [i for i in ids if i not in current]
        if missing:
            raw[key] = current + missing
        return bool(missing)

    return change


def _remover(task_id: str) -> _Change:
    """A change that removes ``task_id`` from ``blocks`` and ``blockedBy``."""

    def change(raw: dict[str, Any], task: Task) -> bool:
        before = (raw.get("blocks"), raw.get("blockedBy"))
        for key in ("blocks", "blockedBy"):
            raw[key] = [i for i in raw.get(key, []) if i != task_id]
        return (raw["blocks"], raw["blockedBy"]) != before

    return change
