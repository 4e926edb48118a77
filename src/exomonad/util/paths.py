"""A path with its symbolic links followed, for judging it: never an error.

``os.path.realpath`` raises where a part of the path cannot be looked at
(``/proc/1/root`` of another user's process: ``PermissionError``); the policy's
judgement of a path then failed as a whole, escalating a read of
``/proc/1/root/p/.exomonad/lead.token`` to a person as a "policy error" instead of
refusing it by its name. Such a path is judged as it is written.

A path longer than the system lets a program name in one call (``PATH_MAX``, 4096 bytes
on Linux) is judged as written too: no program opens it as it stands, and following its
links cost time growing with the square of its length (``realpath`` looks up every
prefix: 4.7 s for one 320 KB path in a worker's command, found trying the gate).

>>> real_path("/nonexistent/a/../b")
'/nonexistent/b'
>>> real_path("/x" * 5000) == "/x" * 5000
True
"""

from __future__ import annotations

import os
import posixpath

__all__ = ["PATH_MAX", "real_path"]

#: The longest path a program may name in one system call (Linux's ``PATH_MAX``).
PATH_MAX = 4096


def real_path(path: str) -> str:
    """``path`` with its links followed as far as the system lets us look; else the path
    as written, normalised (also when it is longer than :data:`PATH_MAX`)."""
    if len(path) > PATH_MAX:
        return posixpath.normpath(path)
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(path)
