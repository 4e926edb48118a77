"""The lock-free side of Claude Code's task list: reading ``tasks/<list>/`` (file-cached).

:class:`TaskReader` opens the list directory without following symlinks, reads and
validates task files (each parsed once per version of the file, see
:mod:`exomonad.teams.filecache`), lists them in numeric id order and works out the next
id. The locked writes build on it in :class:`exomonad.teams.tasks.TaskStore`, whose
module describes the layout.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from exomonad.errors import CorruptFileError, TaskError
from exomonad.teams.atomic import read_bytes, read_json
from exomonad.teams.dirs import SafeDir
from exomonad.teams.filecache import FileCache
from exomonad.teams.lock import DEFAULT_LOCK, LockSettings
from exomonad.teams.models import Task
from exomonad.teams.paths import TeamPaths, validate_name

__all__ = ["HIGHWATERMARK", "LIST_LOCK", "TaskReader", "parse_int"]

#: File holding the largest id ever handed out (a bare integer).
HIGHWATERMARK = ".highwatermark"
#: The list lock's target file; the lock directory is ``.lock.lock``.
LIST_LOCK = ".lock"

#: Tasks as read, per version of their file (the lock-free reads: get, list).
_read_tasks: FileCache[Task] = FileCache()
_PARSE_INT = re.compile(r"\s*([+-]?\d+)")
_Problems = list[CorruptFileError]
_Tasks = list[Task]  # the alias keeps ``TaskReader.list`` from shadowing the builtin


def parse_int(text: str) -> int | None:
    """JavaScript ``parseInt(text, 10)``: the leading integer, or None (NaN).

    >>> parse_int(" 12abc"), parse_int("-3"), parse_int("x1")
    (12, -3, None)
    """
    m = _PARSE_INT.match(text)
    return int(m.group(1)) if m else None


def _id_key(task: Task) -> tuple[int, int, str]:
    n = parse_int(task.id)
    return (0, n, task.id) if n is not None else (1, 0, task.id)


class TaskReader:
    """Reads the task list of one team (or of ``$CLAUDE_CODE_TASK_LIST_ID``).

    Parameters
    ----------
    paths:
        The team's paths; the directory is ``paths.tasks_dir``, read once here.
    lock:
        Retry settings for our side of the proper-lockfile locks (used by writers).
    durable:
        fsync each write (used by writers); off, writes are still atomic for readers.

    Attributes
    ----------
    problems:
        The :class:`~exomonad.errors.CorruptFileError` of every task file the last
        :meth:`list` call had to skip (empty when all files were readable).
    """

    def __init__(
        self, paths: TeamPaths, *, lock: LockSettings = DEFAULT_LOCK, durable: bool = True
    ) -> None:
        self.paths = paths
        self.dir: Path = paths.tasks_dir
        self.lock = lock
        self.durable = durable
        self.problems: list[CorruptFileError] = []

    # -- files ---------------------------------------------------------------------------

    def path(self, task_id: str) -> Path:
        """The file of task ``task_id`` (the id is checked so it cannot escape the dir)."""
        return self.dir / f"{validate_name(task_id, 'task id')}.json"

    def _open(self, *, create: bool = False) -> SafeDir:
        """The list directory, opened without following symlinks."""
        return self.paths.open_dir(self.dir, create=create)

    def _open_existing(self, task_id: str) -> SafeDir:
        try:
            return self._open()
        except FileNotFoundError:
            raise TaskError(f"task {task_id} not found in {self.dir}") from None

    def _load(self, path: Path, d: SafeDir) -> tuple[dict[str, Any], Task]:
        """Read and validate one task file; FileNotFoundError if it is gone."""
        raw = read_json(path, at=d)
        if not isinstance(raw, dict):
            raise CorruptFileError(path, f"top level is {type(raw).__name__}, not an object")
        try:
            return raw, Task.from_json(raw)
        except ValidationError as exc:
            errs = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise CorruptFileError(path, f"not a valid task ({errs})") from exc

    def _task(self, path: Path, d: SafeDir) -> Task:
        """:meth:`_load`'s task, parsed once per version of the file (treat as read-only)."""
        st = d.lstat(path.name)
        task = _read_tasks.get(path, st)
        if task is None:
            task = self._load(path, d)[1]
            _read_tasks.put(path, st, task)
        return task

    def _read(self, task_id: str, d: SafeDir) -> tuple[dict[str, Any], Task]:
        try:
            return self._load(self.path(task_id), d)
        except FileNotFoundError:
            raise TaskError(f"task {task_id} not found in {self.dir}") from None

    def _highwatermark(self, d: SafeDir) -> int:
        try:
            n = parse_int(read_bytes(self.dir / HIGHWATERMARK, at=d).decode(errors="replace"))
        except FileNotFoundError:
            return 0
        return n or 0

    # -- reading -------------------------------------------------------------------------

    def list(self) -> _Tasks:
        """All readable tasks sorted by numeric id; unreadable files go to :attr:`problems`."""
        tasks, self.problems = self._scan()
        return tasks

    def _scan(self) -> tuple[_Tasks, _Problems]:
        problems: list[CorruptFileError] = []
        tasks: list[Task] = []
        try:
            d = self._open()
        except FileNotFoundError:
            return tasks, problems
        with d:
            for name in d.listdir():
                if not name.endswith(".json"):
                    continue
                try:
                    tasks.append(self._task(self.dir / name, d))
                except (FileNotFoundError, IsADirectoryError):
                    continue
                except CorruptFileError as exc:
                    problems.append(exc)
        return sorted(tasks, key=_id_key), problems

    def get(self, task_id: str) -> Task:
        """Task ``task_id``; :class:`TaskError` if missing, CorruptFileError if unreadable."""
        path = self.path(task_id)  # a bad id is InvalidNameError, whether the list exists or not
        with self._open_existing(task_id) as d:
            try:
                return self._task(path, d)
            except FileNotFoundError:
                raise TaskError(f"task {task_id} not found in {self.dir}") from None

    def next_id(self) -> str:
        """The id the next create would take (a snapshot; take the list lock to use it)."""
        try:
            d = self._open()
        except FileNotFoundError:
            return "1"
        with d:
            return self._next_id(d)

    def _next_id(self, d: SafeDir) -> str:
        top = 0
        for name in d.listdir():
            if name.endswith(".json"):
                n = parse_int(name[: -len(".json")])
                if n is not None and n > top:
                    top = n
        return str(max(top, self._highwatermark(d)) + 1)
