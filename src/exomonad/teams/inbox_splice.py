"""Appending to an inbox's bytes without parsing all of them.

An inbox is a JSON array of objects, written whole by Claude Code and by ExoMonad in
one format, ``JSON.stringify(entries, null, 2)`` (:func:`~exomonad.teams.atomic.dump_json`).
Under a full team it holds up to a second's messages (Claude Code polls once a second):
hundreds of KB, which a group write parsed and serialised again for every few entries
it added, and which took more time than the write (issue 14). Two facts spare that:

* :func:`splice`: entries appended to such an array are a few more items before its
  closing bracket;
* :func:`appended`: a file that is the bytes this process last wrote with items added
  before the closing bracket (what Claude Code's writers do between two of our writes)
  holds our entries and those items, which alone need parsing.

Each works only on bytes of the shape it relies on, checked, and says so otherwise (the
caller then parses the whole file). Neither is trusted with the file's state: what they
compute from is the *basis* of a write, and the read under the lock compares every byte
of the file with it before the write is put in place (:func:`exomonad.teams.inbox_io.mutate`).
:class:`LastWrites` keeps, per inbox, what this process's last append left in it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from exomonad.teams.atomic import dump_json

__all__ = ["KEEP_MAX", "LastWrites", "Written", "appended", "message_ids", "splice"]

#: The keys an entry's message id is under (ours, and Claude Code 2.1.330's).
_ID_KEYS = ("msg_id", "messageId")
#: The largest inbox whose bytes are kept to splice the next append onto.
KEEP_MAX = 16 * 1024 * 1024
#: How a pretty array of objects ends (the last object's brace, the array's bracket).
_END = b"}\n]"


def message_ids(entries: list[dict[str, Any]]) -> set[str]:
    """Every message id the entries carry, under either key."""
    return {v for e in entries for k in _ID_KEYS if isinstance(v := e.get(k), str)}


def splice(data: bytes, added: list[dict[str, Any]]) -> bytes:
    """The array ``data`` (a pretty JSON array of objects) with ``added`` appended, as
    ``dump_json`` writes the whole list, without parsing ``data``; ``ValueError`` when
    ``data`` does not end as such an array does.

    >>> splice(dump_json([]), [{"a": 1}]) == dump_json([{"a": 1}])
    True
    >>> splice(dump_json([{"a": 1}]), [{"b": [2]}, {}]) == dump_json([{"a": 1}, {"b": [2]}, {}])
    True
    """
    if not added:
        return data
    items = b",\n".join(b"  " + dump_json(e).replace(b"\n", b"\n  ") for e in added)
    if data == b"[]":
        return b"[\n" + items + b"\n]"
    if not data.endswith(_END):
        raise ValueError("not a pretty JSON array of objects")
    return b"".join((memoryview(data)[:-2], b",\n", items, b"\n]"))  # one copy of data


def appended(before: bytes, data: bytes) -> list[dict[str, Any]] | None:
    """The objects ``data`` holds after those of ``before``, when ``data`` is ``before``
    (a pretty JSON array of objects) with one or more objects inserted before its
    closing bracket; None when it is anything else (the caller parses it whole).

    >>> old = dump_json([{"a": 1}])
    >>> appended(old, dump_json([{"a": 1}, {"b": 2}]))
    [{'b': 2}]
    >>> appended(old, dump_json([{"b": 2}])) is None  # not an extension of it
    True
    """
    if before == b"[]":
        start = 2
        if not data.startswith(b"[\n"):
            return None
    else:
        if not before.endswith(_END):
            return None
        start = len(before)  # past the ",\n" that replaces the closing "\n]"
        if data[start - 2 : start] != b",\n" or not data.startswith(memoryview(before)[:-2]):
            return None  # (a memoryview: no copy of a few hundred KB to compare)
    if len(data) <= start + 2 or not data.endswith(b"\n]"):
        return None
    try:
        more = orjson.loads(b"[" + data[start:-2] + b"]")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(more, list) or not more or not all(isinstance(e, dict) for e in more):
        return None  # empty: data would end in a trailing comma, not JSON
    return [e for e in more if isinstance(e, dict)]


@dataclass(frozen=True)
class Written:
    """An inbox as this process's last append left it."""

    #: (inode, mtime_ns, size), taken under the lock right after the rename.
    version: tuple[int, int, int]
    data: bytes
    #: Its entries' message ids (never changed once kept: copy it to add to it).
    ids: set[str]


class LastWrites:
    """Per inbox, what this process's last append left in it (thread-safe)."""

    def __init__(self) -> None:
        self._kept: dict[Path, Written] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> Written | None:
        """What our last append left in ``path``, if kept."""
        with self._lock:
            return self._kept.get(path)

    def remember(self, path: Path, version: tuple[int, int, int] | None, data: bytes,
                 ids: set[str] | None) -> None:  # fmt: skip
        """Keep what an append of ours left in ``path``; forget it when that is not
        known exactly (no version or ids) or too large to keep."""
        with self._lock:
            if version is None or ids is None or len(data) > KEEP_MAX:
                self._kept.pop(path, None)
            else:
                self._kept[path] = Written(version, data, ids)
