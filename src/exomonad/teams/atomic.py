"""Atomic JSON files: temp file in the same dir, fsync, rename, fsync the dir.

Files are read with ``O_NOFOLLOW`` (:func:`read_bytes`): a symlink or anything but a
regular file raises :class:`~exomonad.errors.SymlinkRefusedError` and is never read, so
never rewritten either. Writes never follow a link: the temp file is created with
``O_EXCL`` and the rename replaces the directory entry, not what it points to.

Output is byte-identical to Node's ``JSON.stringify(value, null, 2)`` (orjson's
``OPT_INDENT_2``), the format Claude Code writes, for every value parsed from JSON that
JavaScript wrote, with two deviations that change spelling, not value: integers between
2**64 and 1e21 (JavaScript writes them in full; orjson reads them as floats and writes
``1e+20``), and Python floats with integral values (``1.0`` where JavaScript writes ``1``).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import orjson

from exomonad.errors import CorruptFileError, SymlinkRefusedError

__all__ = [
    "dump_json",
    "fsync_dir",
    "parse_json_array",
    "read_bytes",
    "read_json",
    "read_json_array",
    "write_json_atomic",
]


def dump_json(value: Any) -> bytes:
    """Serialise like ``JSON.stringify(value, null, 2)``.

    >>> dump_json({"a": [1]}).decode()
    '{\\n  "a": [\\n    1\\n  ]\\n}'
    """
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``, never through a symlink.

    Raises :class:`SymlinkRefusedError` for a symlink (dangling or not) or a special
    file (a FIFO would block the reader), ``FileNotFoundError`` if it is missing and
    ``IsADirectoryError`` for a directory, like :meth:`Path.read_bytes`.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefusedError(path) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise SymlinkRefusedError(path, "is not a regular file; refusing to read it")
        return fh.read()


def read_json(path: Path) -> Any:
    """Parse ``path``; raise :class:`CorruptFileError` (naming the file) on bad JSON,
    :class:`SymlinkRefusedError` for a symlink."""
    data = read_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CorruptFileError(path, f"not valid JSON ({exc})") from exc


def read_json_array(path: Path) -> list[dict[str, Any]]:
    """Read an inbox-style file: a JSON array of objects.

    A missing or whitespace-only file is an empty list (nothing in it to lose). Anything
    else that is not an array of objects raises :class:`CorruptFileError`, so the caller
    never overwrites bytes it could not understand.
    """
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    return parse_json_array(path, data)


def parse_json_array(path: Path, data: bytes) -> list[dict[str, Any]]:
    """Parse ``data`` (read from ``path``) as :func:`read_json_array` does."""
    if not data.strip():
        return []
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CorruptFileError(path, f"not valid JSON ({exc})") from exc
    if not isinstance(value, list):
        raise CorruptFileError(path, f"top level is {type(value).__name__}, not an array")
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise CorruptFileError(path, f"entry {i} is {type(entry).__name__}, not an object")
    return value


def write_json_atomic(
    path: Path, value: Any, *, durable: bool = True, sync_dir: bool = True
) -> int:
    """Write ``value`` to ``path`` atomically (``<path>.tmp.<8 hex>`` then rename).

    With ``durable`` the temp file is fsynced before the rename and (``sync_dir``) the
    directory after, so the new content survives a power cut; without it the write is
    still atomic for readers, just not crash-durable. A caller holding a lock may pass
    ``sync_dir=False`` and call :func:`fsync_dir` after releasing it. Returns the inode of
    the file written, so a caller can check the rename put *its* file in place.
    """
    tmp = path.with_name(f"{path.name}.tmp.{secrets.token_hex(4)}")
    payload = dump_json(value)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
            inode = os.fstat(fd).st_ino
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable and sync_dir:
        fsync_dir(path.parent)
    return inode


def fsync_dir(directory: Path) -> None:
    """fsync a directory, making a rename in it durable."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
