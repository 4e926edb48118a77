"""Paths in the arguments of other MCP servers' tools, as the writes they may be.

ExoMonad cannot know what ``mcp__filesystem__write_file`` or any other server's tool does
with the paths it is given, so it assumes the worst: every path-like string in the
arguments (looked for at any depth, bounded) may be written. The same rules then apply
as to the agent's own file tools: its worktree is fine, elsewhere goes up the cascade,
and ExoMonad's state, an agent's hook settings and Claude Code's team files are denied.

>>> [a.path for a in possible_writes({"path": "notes/a.md", "opts": {"to": "/etc/x"}}, "/w")]
['/w/notes/a.md', '/etc/x']
>>> possible_writes({"query": "hello world", "n": 3}, "/w")
[]
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from exomonad.policy.actions import WriteFile

__all__ = ["MAX_PATHS", "possible_writes"]

#: At most this many strings are taken as paths, and this deep; beyond, the first ones.
MAX_PATHS = 32
_MAX_DEPTH = 16


def _looks_like_path(text: str) -> bool:
    if not text or len(text) > 4096 or any(c in text for c in "\n\r\t\0"):
        return False
    if text.startswith(("/", "./", "../", "~")) or ".exomonad" in text:
        return True
    return "/" in text and " " not in text and "://" not in text


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def possible_writes(tool_input: Mapping[str, Any], cwd: str | None) -> list[WriteFile]:
    """A :class:`WriteFile` for each path-like string in ``tool_input`` (resolved against
    ``cwd``; ``~`` expanded)."""
    out: list[WriteFile] = []
    for text in _strings(tool_input):
        if not _looks_like_path(text):
            continue
        path = posixpath.expanduser(text)
        if not path.startswith("/"):
            if cwd is None:
                out.append(WriteFile(None))  # where, we cannot tell: the worst is assumed
                continue
            path = posixpath.join(cwd, path)
        out.append(WriteFile(posixpath.normpath(path)))
        if len(out) >= MAX_PATHS:
            break
    return out
