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

#: At most this many strings are taken as paths, and this deep; beyond either, an unknown
#: path is assumed (found probing: 32 decoys in the worktree hid a 33rd path in the
#: lead's ``.git/hooks``, and a path nested 20 deep was not looked at).
MAX_PATHS = 32
_MAX_DEPTH = 16
_MAX_PATH = 4096


class _Unknown:
    """A value that may hold a path we do not read: the worst is assumed."""


def _path_of(text: str) -> str | _Unknown | None:
    """The path ``text`` may be, an unknown one, or None for text that names none: a
    bare word (``hello``, ``README.md``) or a URL. A relative path with spaces, a bare
    dotfile (``.mcp.json``, ``.git``, ``..``) and ``file://`` URLs are paths (found
    probing); one too long or with control characters is an unknown path."""
    text = text.strip(" ")
    if text.startswith("file://"):
        text = text[len("file://") :] or "/"
    elif "://" in text:
        return None
    pathish = "/" in text or text.startswith((".", "~")) or ".exomonad" in text
    if not pathish:
        return None
    if len(text) > _MAX_PATH or any(ord(c) < 32 or c == "\x7f" for c in text):
        return _Unknown()
    return text


def _strings(value: Any, depth: int = 0) -> list[str | _Unknown]:
    if depth > _MAX_DEPTH:
        return [_Unknown()] if isinstance(value, (Mapping, list, tuple, str)) else []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def possible_writes(tool_input: Mapping[str, Any], cwd: str | None) -> list[WriteFile]:
    """A :class:`WriteFile` for each path-like string in ``tool_input`` (resolved against
    ``cwd``; ``~`` expanded); an unknown one (``WriteFile(None)``) for what cannot be
    read: too deep, too many, too long."""
    out: list[WriteFile] = []
    for item in _strings(tool_input):
        found = _path_of(item) if isinstance(item, str) else item
        if found is None:
            continue
        if len(out) >= MAX_PATHS or isinstance(found, _Unknown):
            out.append(WriteFile(None))  # where, we cannot tell: the worst is assumed
            break
        path = posixpath.expanduser(found)
        if not path.startswith("/"):
            if cwd is None:
                out.append(WriteFile(None))
                continue
            path = posixpath.join(cwd, path)
        out.append(WriteFile(posixpath.normpath(path)))
    return out
