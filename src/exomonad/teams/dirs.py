"""Directories below the config root, opened without following any symlink.

Every read and write of a team or task file goes through a :class:`SafeDir`: the config
root is opened as given (it, and anything above it, may be a symlink: dotfile setups
make ``~/.claude`` one), then each component below it, ``teams/`` or ``tasks/``
included, is opened with ``openat(O_DIRECTORY | O_NOFOLLOW)`` relative to the one
before. A component that is a symlink raises
:class:`~exomonad.errors.SymlinkedDirectoryError`; with ``create`` a missing component is
made with ``mkdirat`` and opened the same way, so nothing is ever created through a link.

The files themselves are then opened, created, renamed and locked relative to the open
directory (``dir_fd``), never by path. That closes the race an ``lstat`` check of each
component would leave open: a directory swapped for a link after the walk does not
redirect anything, the work lands in the directory that was checked.

Cost: one ``open`` and one ``close`` per component (four for an inbox:
root, ``teams``, ``<team>``, ``inboxes``), a few microseconds (see docs/performance.md).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from types import TracebackType

from exomonad.errors import InvalidNameError, SymlinkedDirectoryError

__all__ = ["SafeDir"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CHILD_FLAGS = _DIR_FLAGS | os.O_NOFOLLOW
#: Components on the way are only ever a ``dir_fd``: O_PATH opens them ~1 us cheaper.
_WAY_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW


class SafeDir:
    """An open directory (``fd``) at ``path``, reached from ``root`` without symlinks.

    A context manager: leaving it closes the descriptor. Build one with :meth:`open`
    (or :meth:`trusting` for a directory the caller vouches for).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with SafeDir.open(root, root / "teams" / "t", create=True) as d:
    ...     d.path.relative_to(root).as_posix()
    'teams/t'
    """

    __slots__ = ("_str", "fd", "path", "root")

    def __init__(self, fd: int, path: Path, root: Path) -> None:
        self.fd = fd
        self.path = path
        self.root = root
        self._str = str(path)

    @classmethod
    def open(cls, root: Path, path: Path, *, create: bool = False) -> SafeDir:
        """Open ``path``, which must be ``root`` or below it (lexically).

        Raises :class:`SymlinkedDirectoryError` if a component below ``root`` is a
        symlink, ``FileNotFoundError`` naming the first missing component (unless
        ``create``), ``NotADirectoryError`` for a file in the way, and
        :class:`InvalidNameError` for a path outside ``root``.
        """
        parts = _parts_below(root, path)
        if not parts:
            if create:
                root.mkdir(parents=True, exist_ok=True)
            return cls(os.open(root, _DIR_FLAGS), path, root)
        # The first component is opened by its full path: the root's own components are
        # followed, the last one (``teams``/``tasks``) is not (O_NOFOLLOW).
        fd = _open_child(None, os.path.join(root, parts[0]), root, parts, 0, path, create)
        try:
            for i in range(1, len(parts)):
                child = _open_child(fd, parts[i], root, parts, i, path, create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path, root)

    @classmethod
    def trusting(cls, path: Path) -> SafeDir:
        """Open ``path`` following symlinks on the way: the caller vouches for it."""
        return cls(os.open(path, _DIR_FLAGS), path, path)

    def name_of(self, path: Path) -> str:
        """The name of ``path`` in this directory; ``ValueError`` if it lives elsewhere."""
        head, name = os.path.split(str(path))  # strings: Path.parent costs microseconds
        if head != self._str or not name:
            raise ValueError(f"{path} is not in {self.path}")
        return name

    def lstat(self, name: str) -> os.stat_result:
        """``lstat`` of entry ``name``."""
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def exists(self, name: str) -> bool:
        """True if entry ``name`` exists (a symlink counts, dangling or not)."""
        try:
            self.lstat(name)
        except FileNotFoundError:
            return False
        return True

    def listdir(self) -> list[str]:
        """The names in this directory."""
        return os.listdir(self.fd)

    def fsync(self) -> None:
        """fsync the directory, making a rename in it durable."""
        os.fsync(self.fd)

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __enter__(self) -> SafeDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SafeDir({str(self.path)!r}, fd={self.fd})"


def _parts_below(root: Path, path: Path) -> list[str]:
    """The components of ``path`` below ``root`` (lexically); refuse anything else."""
    top, full = str(root).rstrip("/"), str(path)
    if full == top:
        return []
    if not full.startswith(top + "/"):
        raise InvalidNameError(f"{path} is not below the config root {root}")
    parts = full[len(top) + 1 :].split("/")
    if ".." in parts:
        raise InvalidNameError(f"{path} could escape the config root {root}")
    return parts


def _open_child(
    parent: int | None,
    name: str,
    root: Path,
    parts: list[str],
    depth: int,
    target: Path,
    create: bool,
) -> int:
    """``openat(parent, name, O_DIRECTORY | O_NOFOLLOW)`` (``parent`` None: ``name`` is a
    path whose last component is ``parts[depth]``), made first if missing and ``create``."""
    flags = _CHILD_FLAGS if depth == len(parts) - 1 else _WAY_FLAGS
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        here = root.joinpath(*parts[: depth + 1])
        if not create:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(here)) from None
    except OSError as exc:
        # O_NOFOLLOW | O_DIRECTORY on a link fails with ENOTDIR (ELOOP without O_DIRECTORY)
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        here = root.joinpath(*parts[: depth + 1])
        if _is_link(parent, name):
            raise SymlinkedDirectoryError(here, target) from None
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(here)) from None
    if parent is None:  # the root may be missing too (it may be, or be under, a link)
        root.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=parent)  # mkdirat never follows a link in its place
    return _open_child(parent, name, root, parts, depth, target, False)


def _is_link(parent: int | None, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False
