"""The audit log: one JSON line per decision in ``.exomonad/audit.jsonl`` (append-only).

Each line: ``ts`` (epoch seconds), ``agent``, ``role``, ``runtime``, ``tool``,
``actions`` (typed, as dicts), ``decision`` (``allow``/``deny``/``tl``/``human``),
``reason``, ``policy_id``, ``latency_ms``. Lines are written with one ``write`` on an
``O_APPEND`` descriptor, so concurrent writers (threads or processes) do not interleave.

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

__all__ = ["AuditLog", "AuditSink"]


class AuditSink(Protocol):
    """Where the engine sends one record per decision."""

    def record(self, entry: dict[str, Any]) -> None:
        """Store one entry (must not raise for I/O trouble)."""
        ...


class AuditLog:
    """An :class:`AuditSink` writing JSON lines to ``path``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None
        #: Entries that could not be written (disk full, permissions...).
        self.dropped = 0

    def record(self, entry: dict[str, Any]) -> None:
        """Append ``entry`` as one line; counts (never raises) on I/O errors."""
        line = (json.dumps(entry, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                os.write(self._fd, line)
            except OSError:
                self.dropped += 1

    def tail(self, n: int = 50) -> list[dict[str, Any]]:
        """The last ``n`` entries (unparsable lines are skipped)."""
        try:
            with self.path.open("rb") as fh:
                lines = deque(fh, maxlen=n)
        except OSError:  # missing or unreadable: nothing to show
            return []
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
