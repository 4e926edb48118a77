"""ExoMonad's own commands on PATH, and the launchers ``exomonad teammate`` routes to.

* :func:`write_shims`: ``exomonad`` and ``exomonad-teammate`` (and the hook client's
  shell front ``exomonad-hook``) in a directory, running
  this very installation (its console scripts, with the source tree it was imported
  from first on ``PYTHONPATH``). Put first on PATH, they make every hook, MCP server
  and teammate command that ``exomonad init``'s files name run the same code as the
  process that wrote them.
* :func:`write_gemini_launcher`, :func:`write_codex_launcher`: a ``[[teammate.routes]]
  command`` each: the CLI with exactly its prepared environment, plus the identity
  ``exomonad teammate`` passes on (``EXOMONAD_WORKER_ENV``).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

import exomonad
from exomonad.clis.codex import CodexHome, codex_env, require_codex
from exomonad.clis.env import VENV_BIN, write_launcher
from exomonad.clis.gemini import GeminiHome, gemini_command, gemini_env
from exomonad.runtimes import CODEX
from exomonad.util.selfexec import HOOK_FRONT

__all__ = [
    "EXOMONAD_WORKER_ENV",
    "LAUNCHER",
    "SRC",
    "write_codex_launcher",
    "write_gemini_launcher",
    "write_shims",
]

#: The source tree this installation imports ``exomonad`` from (a checkout's ``src/``).
SRC = Path(exomonad.__file__).resolve().parents[1]
#: What ExoMonad puts in a worker's environment, passed through by the launchers.
EXOMONAD_WORKER_ENV = (
    "EXOMONAD_TOKEN",
    "EXOMONAD_DIR",
    "EXOMONAD_NAME",
    "EXOMONAD_TEAM",
    "CLAUDE_CONFIG_DIR",
    "GIT_CONFIG_PARAMETERS",
)


def write_shims(bin_dir: Path) -> Path:
    """``exomonad`` and ``exomonad-teammate`` in ``bin_dir`` that run the console scripts
    next to this interpreter with ``SRC`` first on PYTHONPATH (argv stays ``python
    <bin>/<script> ...``), and a link to the installed ``exomonad-hook`` beside them
    (so ``exomonad init`` writes hooks through it); returns ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)
    for name in ("exomonad", "exomonad-teammate"):
        shim = bin_dir / name
        shim.write_text(
            f"#!/bin/sh\nPYTHONPATH={shlex.quote(path)} exec {shlex.quote(sys.executable)} "
            f'{shlex.quote(str(VENV_BIN / name))} "$@"\n',
            "utf-8",
        )
        shim.chmod(0o755)
    front = bin_dir / HOOK_FRONT  # the hook client's shell front (no Python: no shim)
    front.unlink(missing_ok=True)
    front.symlink_to(VENV_BIN / HOOK_FRONT)
    return bin_dir


LAUNCHER = """#!/bin/sh
# Gemini CLI for `exomonad teammate`: its prepared env, plus what the teammate passes on.
exec env -i TERM="${{TERM:-xterm-256color}}" \\
  EXOMONAD_TOKEN="${{EXOMONAD_TOKEN}}" EXOMONAD_DIR="${{EXOMONAD_DIR}}" \\
  EXOMONAD_NAME="${{EXOMONAD_NAME}}" EXOMONAD_TEAM="${{EXOMONAD_TEAM}}" \\
  CLAUDE_CONFIG_DIR="${{CLAUDE_CONFIG_DIR}}" TMUX_PANE="${{TMUX_PANE}}" \\
  {assigns} {argv}
"""


def write_gemini_launcher(
    home: GeminiHome, base_url: str, bin_dir: Path, *, extra_env: Mapping[str, str] | None = None
) -> Path:
    """Gemini CLI (``--yolo``: ExoMonad's hooks are the gate) with its prepared
    environment (HOME with its settings, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY,
    GEMINI_CLI_TRUST_WORKSPACE, ...) plus ``extra_env``, nothing else from the pane but
    TERM and what ``exomonad teammate`` sets; ``bin_dir`` first on PATH."""
    env = gemini_env(home, base_url, extra=extra_env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    assigns = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))
    argv = " ".join(shlex.quote(a) for a in gemini_command(yolo=True))
    path = home.root / "gemini-teammate.sh"
    path.write_text(LAUNCHER.format(assigns=assigns, argv=argv), "utf-8")
    path.chmod(0o755)
    return path


def write_codex_launcher(
    home: CodexHome, bin_dir: Path, *extra: str, extra_env: Mapping[str, str] | None = None
) -> Path:
    """Codex's TUI as ExoMonad runs a Codex worker (``--no-daemon``, bypass: the hooks
    are the gate) with its prepared environment plus ``extra_env``, ``bin_dir`` first on
    PATH; the identity and the ``CODEX_HOME`` the server checked the hooks' trust in
    come from what ``exomonad teammate`` sets. ``extra``: more arguments for Codex."""
    env = codex_env(home, extra=extra_env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    argv = [str(require_codex()), *shlex.split(CODEX.worker_command or "")[1:], *extra]
    return write_launcher(
        home.root / "codex-teammate.sh",
        None,
        env,
        argv,
        from_pane=(*EXOMONAD_WORKER_ENV, "CODEX_HOME"),
    )
