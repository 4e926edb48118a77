"""Environments built from scratch, launcher scripts, and process checks.

A CLI driven by ExoMonad's demo or tests gets exactly the environment built for it: it
starts from :func:`scrubbed_env` (a handful of variables from the caller), never from
``os.environ``, so the caller's keys, proxies, ``CI`` or ``TERM_PROGRAM`` cannot leak in.
:func:`write_launcher` writes that environment into a ``/bin/sh`` script a tmux pane
(or ``exomonad teammate``) can run.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "PASSTHROUGH_ENV",
    "VENV_BIN",
    "deep_merge",
    "scrubbed_env",
    "write_launcher",
]

#: Variables copied from the caller's environment; everything else is dropped.
PASSTHROUGH_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ", "TMPDIR")
#: The running interpreter's bin dir (in a venv: its console scripts `exomonad` and
#: `exomonad-teammate`).
VENV_BIN = Path(sys.executable).parent


def scrubbed_env() -> dict[str, str]:
    """`PASSTHROUGH_ENV` from os.environ, with a default PATH and LANG; `VENV_BIN` first
    on PATH, as after `pip install`: the files `exomonad init` writes run `exomonad ...`
    and `exomonad-teammate` from PATH."""
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
    env.setdefault("LANG", "C.UTF-8")
    return env


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, nested dicts merged key by key.

    >>> deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}, "d": 4})
    {'a': {'b': 1, 'c': 3}, 'd': 4}
    """
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def write_launcher(
    path: Path,
    workspace: Path | None,
    env: Mapping[str, str],
    argv: Sequence[str],
    *,
    from_pane: Sequence[str] = (),
) -> Path:
    """A /bin/sh script at `path` that runs `argv` in `workspace` (None: where it is
    started, e.g. the worktree ExoMonad opens a worker's pane in) with exactly `env`.

    TERM is taken from the pane (tmux sets it), and so is every variable named in
    `from_pane` (e.g. TMUX, TMUX_PANE); nothing else from outside gets in.
    """
    inherited = " ".join(f'{k}="${k}"' for k in from_pane)
    skip = {"TERM", *from_pane}
    assigns = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()) if k not in skip)
    script = (
        "#!/bin/sh\n"
        + (f"cd {shlex.quote(str(workspace))} || exit 1\n" if workspace is not None else "")
        + f'exec env -i TERM="${{TERM:-tmux-256color}}" {inherited + " " if inherited else ""}'
        f"{assigns} {' '.join(shlex.quote(a) for a in argv)}\n"
    )
    path.write_text(script, encoding="utf-8")
    path.chmod(0o755)
    return path
