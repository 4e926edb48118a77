"""Serialise writes to one pane across threads *and* processes.

Two deliveries to the same pane must never interleave: text A, text B, Enter, Enter would
submit ``AB`` and an empty line. Every backend call that types into a pane holds an
exclusive :func:`fcntl.flock` on a per-pane file in a lock directory. ``flock`` locks
belong to an open file description, so two threads of one process that each open the file
exclude each other too; the kernel drops the lock when a process dies, so there is no
stale lock to clean up.

The lock directory is, in order: the ``lock_dir`` argument, ``$EXOMONAD_LOCK_DIR``,
``$XDG_RUNTIME_DIR/exomonad/locks``, ``/tmp/exomonad-<uid>/locks``. It is created with
mode 0700 and must belong to the current user.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from exomonad.errors import PaneError
from exomonad.util.waiting import WaitTimeout, retry_until

__all__ = ["DEFAULT_LOCK_TIMEOUT", "LOCK_DIR_ENV", "default_lock_dir", "pane_lock"]

LOCK_DIR_ENV = "EXOMONAD_LOCK_DIR"
"""Environment variable overriding the default lock directory."""

DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds to wait for another delivery to the same pane before giving up."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def runtime_dir() -> Path:
    """ExoMonad's private per-user scratch root: ``$XDG_RUNTIME_DIR/exomonad`` or
    ``/tmp/exomonad-<uid>``."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "exomonad"
    return Path(tempfile.gettempdir()) / f"exomonad-{os.getuid()}"


def default_lock_dir() -> Path:
    """``$EXOMONAD_LOCK_DIR``, else ``<runtime dir>/locks`` (see module docstring)."""
    env = os.environ.get(LOCK_DIR_ENV)
    return Path(env) if env else runtime_dir() / "locks"


def private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) if needed and check it belongs to us."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    owner = path.stat().st_uid
    if owner != os.getuid():
        raise PaneError(f"{path} belongs to uid {owner}, not to us; refusing to use it")
    return path


def lock_path(directory: Path, key: str) -> Path:
    """The lock file for ``key``: a readable slug plus a hash, so any key is a safe name."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    slug = _UNSAFE.sub("_", key)[-40:].strip("_") or "pane"
    return directory / f"{slug}-{digest}.lock"


@contextmanager
def pane_lock(directory: Path, key: str, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[float]:
    """Hold the exclusive lock for ``key``; yields the seconds spent waiting for it.

    Raises:
        PaneError: the lock was not free within ``timeout`` seconds.
    """
    path = lock_path(private_dir(directory), key)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    start = time.monotonic()

    def take() -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    try:
        try:
            retry_until(take, timeout=timeout, interval=0.002)
        except WaitTimeout:
            raise PaneError(
                f"pane {key!r} stayed locked by another delivery for {timeout:.0f}s ({path})"
            ) from None
        yield time.monotonic() - start
    finally:
        os.close(fd)  # closing the last descriptor releases the flock
