"""What was read off a team file, kept while the file is unchanged.

A file's *version* is its ``(device, inode, mtime, ctime, size)``, from the ``lstat``
a reader makes anyway through the directory it opened without following links. A value
read off the file is reused while the version is the same. Timestamps are coarse (one
kernel tick), so a file changed twice within one tick could keep its version: like
git's "racy clean" rule, a value is kept only once the file's ctime is at least
:data:`SETTLED` seconds old, and any later change (rename or in-place write, ``utime``
included) sets a newer ctime. A value stored under a version the file no longer has
is never returned.

>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "f.json"
>>> _ = p.write_text("[]")
>>> cache: FileCache[int] = FileCache()
>>> st = os.lstat(p)
>>> cache.put(p, st, 1, now_ns=st.st_ctime_ns + 10**9)
>>> cache.get(p, os.lstat(p))
1
>>> _ = p.write_text("[1]")
>>> cache.get(p, os.lstat(p)) is None
True
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["SETTLED", "FileCache", "version_of"]

#: Seconds a file must have been unchanged before what was read off it is kept (well
#: above one kernel tick, 1-10 ms).
SETTLED = 0.05

T = TypeVar("T")

Version = tuple[int, int, int, int, int]


def version_of(st: os.stat_result) -> Version:
    """``(device, inode, mtime_ns, ctime_ns, size)`` of a stat result."""
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


class FileCache(Generic[T]):
    """Values keyed by file path, each valid for one version of its file (thread-safe)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._values: dict[Path, tuple[Version, T]] = {}
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, path: Path, st: os.stat_result) -> T | None:
        """The value kept for ``path`` at the version ``st`` describes, if any."""
        with self._lock:
            hit = self._values.get(path)
        return hit[1] if hit is not None and hit[0] == version_of(st) else None

    def put(self, path: Path, st: os.stat_result, value: T, *, now_ns: int | None = None) -> None:
        """Keep ``value``, read off ``path`` after the ``lstat`` that gave ``st``, unless
        the file is not a regular file or changed too recently to tell versions apart."""
        now = time.time_ns() if now_ns is None else now_ns
        if not stat.S_ISREG(st.st_mode) or now - st.st_ctime_ns < SETTLED * 1e9:
            return
        with self._lock:
            if len(self._values) >= self.max_entries and path not in self._values:
                self._values.clear()  # bounded: a server sees a few dozen team files
            self._values[path] = (version_of(st), value)
