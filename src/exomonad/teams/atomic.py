"""Atomic JSON files: temp file in the same dir, fsync, rename, fsync the dir.

Files are read with ``O_NOFOLLOW`` (:func:`read_bytes`): a symlink or anything but a
regular file raises :class:`~exomonad.errors.SymlinkRefusedError` and is never read, so
never rewritten either. Writes never follow a link: the temp file is created with
``O_EXCL`` and the rename replaces the directory entry, not what it points to.

Directories: every function takes ``at``, the file's directory opened with
:meth:`SafeDir.open <exomonad.teams.dirs.SafeDir.open>` (no symlink at or below
``teams/`` / ``tasks/``), and then works relative to it (``openat``, ``renameat``).
Without ``at`` the file's directory is opened as the path says, links and all: the
caller vouches for it. Team code always passes ``at`` (see :meth:`TeamPaths.open_dir`).

Output is byte-identical to Node's ``JSON.stringify(value, null, 2)`` (orjson's
``OPT_INDENT_2``), the format Claude Code writes, for every value parsed from JSON that
JavaScript wrote, with two deviations that change spelling, not value: integers between
2**64 and 1e21 (JavaScript writes them in full; orjson reads them as floats and writes
``1e+20``), and Python floats with integral values (``1.0`` where JavaScript writes ``1``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from exomonad.errors import CorruptFileError, SymlinkRefusedError
from exomonad.teams.dirs import SafeDir

__all__ = [
    "Staged",
    "commit_staged",
    "discard_staged",
    "dump_json",
    "parse_json_array",
    "read_bytes",
    "read_bytes_or_empty",
    "read_json",
    "read_json_array",
    "stage_bytes",
    "stage_json",
    "write_json_atomic",
]


def dump_json(value: Any) -> bytes:
    """Serialise like ``JSON.stringify(value, null, 2)``.

    >>> dump_json({"a": [1]}).decode()
    '{\\n  "a": [\\n    1\\n  ]\\n}'
    """
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def read_bytes(path: Path, *, at: SafeDir | None = None) -> bytes:
    """The bytes of the regular file ``path``, never through a symlink.

    Raises :class:`SymlinkRefusedError` for a symlink (dangling or not) or a special
    file (a FIFO would block the reader), ``FileNotFoundError`` if it is missing and
    ``IsADirectoryError`` for a directory, like :meth:`Path.read_bytes`.
    """
    if at is None:
        with SafeDir.trusting(path.parent) as d:
            return _read_at(d, path.name, path)
    return _read_at(at, at.name_of(path), path)


def _read_at(d: SafeDir, name: str, path: Path) -> bytes:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=d.fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefusedError(path) from None
        if exc.filename is None:  # name it: the fd-relative call left it out
            exc.filename = str(path)
        raise
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise SymlinkRefusedError(path, "is not a regular file; refusing to read it")
        return fh.read()


def read_json(path: Path, *, at: SafeDir | None = None) -> Any:
    """Parse ``path``; raise :class:`CorruptFileError` (naming the file) on bad JSON,
    :class:`SymlinkRefusedError` for a symlink."""
    data = read_bytes(path, at=at)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CorruptFileError(path, f"not valid JSON ({exc})") from exc


def read_json_array(path: Path, *, at: SafeDir | None = None) -> list[dict[str, Any]]:
    """Read an inbox-style file: a JSON array of objects.

    A missing or whitespace-only file is an empty list (nothing in it to lose). Anything
    else that is not an array of objects raises :class:`CorruptFileError`, so the caller
    never overwrites bytes it could not understand.
    """
    return parse_json_array(path, read_bytes_or_empty(path, at=at))


def read_bytes_or_empty(path: Path, *, at: SafeDir | None = None) -> bytes:
    """:func:`read_bytes`, a missing file read as empty (nothing in it to lose)."""
    try:
        return read_bytes(path, at=at)
    except FileNotFoundError:
        return b""


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
    path: Path,
    value: Any,
    *,
    durable: bool = True,
    sync_dir: bool = True,
    at: SafeDir | None = None,
) -> int:
    """Write ``value`` to ``path`` atomically (``<path>.tmp.<8 hex>`` then rename).

    With ``durable`` the temp file is fsynced before the rename and (``sync_dir``) the
    directory after, so the new content survives a power cut; without it the write is
    still atomic for readers, just not crash-durable. A caller holding a lock may pass
    ``sync_dir=False`` and fsync the directory (:meth:`SafeDir.fsync`) after releasing
    it. Returns the inode of the file written, so a caller can check the rename put
    *its* file in place.
    """
    if at is None:
        with SafeDir.trusting(path.parent) as d:
            return _write_at(d, path, value, durable, sync_dir)
    return _write_at(at, path, value, durable, sync_dir)


def _write_at(d: SafeDir, path: Path, value: Any, durable: bool, sync_dir: bool) -> int:
    inode = commit_staged(stage_json(path, value, durable=durable, at=d), at=d)
    if durable and sync_dir:
        d.fsync()
    return inode


@dataclass(frozen=True)
class Staged:
    """A temp file written beside its target (fsynced if durable), not yet renamed."""

    #: The temp file's name in the target's directory (``<target>.tmp.<8 hex>``).
    name: str
    #: The target's name in that directory.
    target: str
    #: The temp file's inode: what the target is once :func:`commit_staged` renamed it.
    inode: int
    #: What the temp file holds.
    payload: bytes


def stage_json(path: Path, value: Any, *, durable: bool, at: SafeDir) -> Staged:
    """The first half of :func:`write_json_atomic`: ``value`` serialised into a new
    temp file beside ``path`` (fsynced with ``durable``); :func:`commit_staged` puts it
    in place, :func:`discard_staged` removes it. No directory fsync."""
    return stage_bytes(path, dump_json(value), durable=durable, at=at)


def stage_bytes(path: Path, payload: bytes, *, durable: bool, at: SafeDir) -> Staged:
    """:func:`stage_json` of bytes serialised already."""
    name = at.name_of(path)
    tmp = f"{name}.tmp.{secrets.token_hex(4)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o644, dir_fd=at.fd)
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
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=at.fd)
        raise
    return Staged(tmp, name, inode, payload)


def commit_staged(staged: Staged, *, at: SafeDir) -> int:
    """Rename ``staged`` over its target (removing the temp file if that fails); returns
    its inode."""
    try:
        os.replace(staged.name, staged.target, src_dir_fd=at.fd, dst_dir_fd=at.fd)
    except BaseException:
        discard_staged(staged, at=at)
        raise
    return staged.inode


def discard_staged(staged: Staged, *, at: SafeDir) -> None:
    """Remove ``staged``'s temp file (gone already: nothing to do)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(staged.name, dir_fd=at.fd)
