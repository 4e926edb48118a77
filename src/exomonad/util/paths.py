"""A path with its symbolic links followed, for judging it: never an error.

``os.path.realpath`` raises where a part of the path cannot be looked at
(``/proc/1/root`` of another user's process: ``PermissionError``); the policy's
judgement of a path then failed as a whole, escalating a read of
``/proc/1/root/p/.exomonad/lead.token`` to a person as a "policy error" instead of
refusing it by its name. Such a path is judged as it is written.

>>> real_path("/nonexistent/a/../b")
'/nonexistent/b'
"""

from __future__ import annotations

import os
import posixpath

__all__ = ["real_path"]


def real_path(path: str) -> str:
    """``path`` with its links followed as far as the system lets us look; else the path
    as written, normalised."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return posixpath.normpath(path)
