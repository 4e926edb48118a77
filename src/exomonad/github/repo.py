"""Which GitHub repository a project is, and which branch a checkout is on.

>>> parse_remote("git@github.com:octo/demo.git")
'octo/demo'
>>> parse_remote("https://ghe.example.com/octo/demo")
'octo/demo'
>>> parse_remote("/srv/git/demo.git") is None
True
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["current_branch", "origin_repo", "parse_remote"]

#: ``git@host:owner/name(.git)``, ``ssh://git@host(:port)/owner/name``, ``https://host/owner/name``.
_REMOTE = re.compile(
    r"^(?:[\w.+-]+://(?:[^@/]+@)?[^/]+/|[\w.-]+@[^:/]+:)"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


def parse_remote(url: str) -> str | None:
    """``owner/name`` of a remote URL on a GitHub host, else None (a local path)."""
    found = _REMOTE.match(url.strip())
    return f"{found['owner']}/{found['name']}" if found else None


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def origin_repo(project: Path) -> str | None:
    """``owner/name`` of the project's ``origin`` remote, if it is on a GitHub host."""
    url = _git(project, "remote", "get-url", "origin")
    return parse_remote(url) if url else None


def current_branch(checkout: Path) -> str | None:
    """The branch ``checkout`` is on (None: detached, or not a repository)."""
    return _git(checkout, "branch", "--show-current")
