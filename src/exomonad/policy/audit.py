"""The audit log: one JSON line per decision in ``.exomonad/audit.jsonl`` (append-only).

Each line: ``ts`` (epoch seconds), ``agent``, ``role``, ``runtime``, ``tool``,
``actions`` (typed, as dicts), ``decision`` (``allow``/``deny``/``tl``/``human``),
``reason``, ``policy_id``, ``latency_ms``. Lines are written with one ``write`` on an
``O_APPEND`` descriptor, so concurrent writers (threads or processes) do not interleave.
Past ``max_bytes`` (default 64 MiB) the file is rotated to ``audit.jsonl.1`` (older ones
to ``.2`` ... ``.<keep>``), so the log never grows without bound.

>>> import tempfile, pathlib
>>> log = AuditLog(pathlib.Path(tempfile.mkdtemp()) / "audit.jsonl")
>>> log.record({"agent": "d1", "decision": "allow"})
>>> log.tail(1)[0]["agent"]
'd1'
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from pathlib import Path
from typing import Any, Protocol

import orjson

__all__ = ["AuditLog", "AuditSink"]

#: One compact line per entry (dict keys of any type written as strings, as ``json``).
_ORJSON = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS


class AuditSink(Protocol):
    """Where the engine sends one record per decision."""

    def record(self, entry: dict[str, Any]) -> None:
        """Store one entry (must not raise for I/O trouble)."""
        ...


class AuditLog:
    """An :class:`AuditSink` writing JSON lines to ``path``."""

    def __init__(self, path: Path, *, max_bytes: int = 64 << 20, keep: int = 3) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        #: Entries that could not be written (disk full, permissions...).
        self.dropped = 0

    def record(self, entry: dict[str, Any]) -> None:
        """Append ``entry`` as one line; counts (never raises) on I/O errors."""
        try:
            line = orjson.dumps(entry, default=str, option=_ORJSON)
        except (orjson.JSONEncodeError, TypeError):  # a lone surrogate, a huge int...
            line = (json.dumps(entry, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                    self._size = os.fstat(self._fd).st_size
                os.write(self._fd, line)
                self._size += len(line)
                if self._size >= self.max_bytes:
                    self._rotate()
            except OSError:
                self.dropped += 1

    def _rotate(self) -> None:
        """``audit.jsonl`` → ``.1`` → ``.2`` ... dropping the oldest beyond ``keep``."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        for n in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{n + 1}"))
        if self.keep > 0:
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink(missing_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._size = 0

    def tail(self, n: int = 50) -> list[dict[str, Any]]:
        """The last ``n`` entries, reaching into ``.1`` after a rotation (unparsable lines
        are skipped)."""
        lines: deque[bytes] = deque(maxlen=n)
        for path in (self.path.with_name(f"{self.path.name}.1"), self.path):
            try:
                with path.open("rb") as fh:
                    lines.extend(fh)
            except OSError:  # missing or unreadable: nothing to show from it
                continue
        out = []
        for raw in lines:
            try:
                out.append(json.loads(raw))
            except ValueError:
                continue
        return out

    def close(self) -> None:
        """Close the file descriptor (reopened on the next record)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
