"""How ExoMonad is started: by name from PATH in committed files, isolated when it starts itself.

Files people commit (``.claude/settings.json``, ``.mcp.json``, ``.gemini/settings.json``)
name the console scripts :data:`EXOMONAD` and :data:`TEAMMATE` and let PATH find them, so
a colleague's clone runs *their* install. A console script runs with its own directory
first on ``sys.path``, never the working directory, so a package an agent plants in its
cwd (``exomonad/__main__.py``) cannot take over a hook. ``python -m exomonad`` would put
the cwd first: when ExoMonad starts itself it runs ``python -I -m exomonad`` (isolated
mode: no cwd, no ``PYTHONPATH``, no user site; site-packages and its ``.pth`` files, hence
editable installs, still apply).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EXOMONAD",
    "HOOK_FRONT",
    "TEAMMATE",
    "OnPath",
    "hook_front",
    "locate",
    "path_fix",
    "self_argv",
    "self_command",
]

#: The main console script, as committed files name it.
EXOMONAD = "exomonad"
#: The console script ``CLAUDE_CODE_TEAMMATE_COMMAND`` names (Claude Code runs it as one word).
TEAMMATE = "exomonad-teammate"
#: The hook client's shell front (``scripts/exomonad-hook``), installed beside
#: :data:`EXOMONAD`: hook commands start it with the client's command after it.
HOOK_FRONT = "exomonad-hook"


def self_argv() -> list[str]:
    """The argv that runs this very install of ExoMonad, never importing from the cwd.

    >>> self_argv()[1:]
    ['-I', '-m', 'exomonad']
    """
    return [sys.executable, "-I", "-m", "exomonad"]


def self_command() -> str:
    """:func:`self_argv` as one shell-quoted command line."""
    return shlex.join(self_argv())


@dataclass(frozen=True)
class OnPath:
    """Where PATH finds a console script, and whether it is the running install.

    ``ours`` is None when that cannot be told (not a Python console script).
    """

    program: str
    found: str | None
    ours: bool | None

    @property
    def ok(self) -> bool:
        """Found, and not known to be another install."""
        return self.found is not None and self.ours is not False


def _interpreter(script: Path) -> str | None:
    """The Python a console script runs (its ``#!`` line), if it is one."""
    try:
        with script.open("rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return None  # `#!/usr/bin/env python`: whichever python PATH has; cannot tell
    return words[0] if "python" in os.path.basename(words[0]) else None


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(os.path.dirname(a)) == os.path.realpath(os.path.dirname(b))


def locate(program: str = EXOMONAD, path: str | None = None) -> OnPath:
    """Find ``program`` on ``path`` (default ``$PATH``); tell whether it is this install."""
    found = shutil.which(program, path=path)
    if found is None:
        return OnPath(program, None, None)
    found = os.path.abspath(found)
    if _same_dir(found, sys.executable):
        return OnPath(program, found, True)
    python = _interpreter(Path(found))
    if python is None:
        return OnPath(program, found, None)
    return OnPath(program, found, _same_dir(python, sys.executable))


def hook_front(exo: str) -> str | None:
    """How a hook command starts :data:`HOOK_FRONT` before ``exo hook ...``, or None (the
    client is started directly).

    Only beside the very program ``exo`` names, never another install's: for a name found
    on PATH (the committed form), the front's name if PATH finds both in one directory;
    for a path, the front in that path's directory, if it is there.
    """
    words = shlex.split(exo)
    if len(words) != 1:
        return None  # `python -I -m exomonad`, a shell snippet: nothing to stand beside
    if "/" not in words[0]:
        main, front = shutil.which(words[0]), shutil.which(HOOK_FRONT)
        return HOOK_FRONT if main and front and _same_dir(main, front) else None
    front = os.path.join(os.path.dirname(os.path.expanduser(words[0])), HOOK_FRONT)
    return shlex.quote(front) if os.path.isfile(front) and os.access(front, os.X_OK) else None


def path_fix(program: str = EXOMONAD) -> str:
    """The command that puts this install's ``program`` first on PATH (or installs one)."""
    here = Path(sys.executable).parent
    if (here / program).exists():
        return f'export PATH="{here}:$PATH"'
    return "pipx install exomonad"
