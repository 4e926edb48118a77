"""Run the real Gemini CLI (pinned in tests/e2e/package.json) offline, in a tmux pane.

What the demo needs too (the pinned CLI, its offline home, environment and command) is
:mod:`exomonad.clis.gemini`, imported (and re-exported) here, with what it takes to reach
the prompt offline. The rest is the tests':

* `Tmux` (a private tmux server on its own `-L` socket) and `start_gemini_in_tmux(...)`,
  which launches the CLI interactively in a new session and waits, by polling
  `capture-pane` against a deadline, until the input prompt (`READY_MARKER`) shows.
* `GeminiPane.type_message(text)`: `send-keys -l text`, ~150 ms pause, `send-keys Enter`.
* `worker_launcher(home, base_url)`: a `[workers] command` for `spawn_workers`.

An Enter processed within 30 ms of a typed character is taken as a newline (paste
heuristics). Right after the prompt appears the CLI is still busy, so text and a 150 ms
later Enter can be read as one chunk: `type_message` waits for the typed text to show in
the pane before the pause and the Enter.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from exomonad.clis.env import write_launcher as harness_write_launcher
from exomonad.clis.gemini import (
    BLOCKING_DIALOGS,
    GEMINI_BIN,
    GEMINI_VERSION,
    OFFLINE_SETTINGS,
    READY_MARKER,
    SETUP_HINT,
    GeminiHome,
    GeminiNotInstalled,
    build_settings,
    gemini_command,
    gemini_env,
    gemini_install_problem,
    prepare_home,
    require_gemini,
)
from exomonad.clis.launchers import EXOMONAD_WORKER_ENV
from tests.e2e.tmux import PaneError, TmuxPane, tmux_binary, tmux_problem
from tests.e2e.tmux import Tmux as BaseTmux


def tmux_install_problem() -> str | None:
    """None when tmux is on PATH, else what is missing and how to fix it."""
    return tmux_problem(SETUP_HINT)


def require_tmux() -> str:
    return tmux_binary(SETUP_HINT, GeminiNotInstalled)


class Tmux(BaseTmux):
    """A private tmux server (`tmux -L exo-e2e-<hex>`); `kill()` ends it and its panes.

    The tmux binary is resolved lazily (run() raises GeminiNotInstalled), so fixtures
    can build one without failing before the test body reports a setup problem. tmux
    runs with the caller's environment; sessions are 160 columns wide.
    """

    socket_prefix = "exo-e2e"
    default_width = 160

    def require_tmux(self) -> str:
        return require_tmux()


@dataclass
class GeminiPane(TmuxPane[GeminiHome]):
    """Gemini CLI in a pane; ready when the empty input box (`READY_MARKER`) shows.

    `type_message` pauses 150 ms before the Enter: Gemini CLI turns an Enter that it
    *processes* within 30 ms of a typed character into a newline (no-bracketed-paste
    heuristic). Timing the keys 150 ms apart is not enough while the CLI's event loop is
    busy (the first seconds after the prompt appears): both writes then sit in the pty
    and are read as one chunk (`"text\r"`), the Enter becomes a newline and the message
    is never sent. So by default it waits until the typed text is rendered in the pane
    (the CLI has consumed it) before the pause and the Enter.
    """

    program = "Gemini CLI"
    blocking_dialogs = BLOCKING_DIALOGS
    enter_delay = 0.15

    def is_ready(self, screen: str) -> bool:
        return READY_MARKER in screen


def write_launcher(
    home: GeminiHome,
    env: Mapping[str, str],
    argv: Sequence[str],
    *,
    name: str = "launch-gemini.sh",
) -> Path:
    """A /bin/sh script that runs `argv` in `home.workspace` with exactly `env`.

    TERM is taken from the pane (tmux sets it); nothing else from outside gets in.
    """
    return harness_write_launcher(home.root / name, home.workspace, env, argv)


def worker_launcher(home: GeminiHome, base_url: str, *, name: str = "gemini-worker.sh",
                    extra_env: Mapping[str, str] | None = None) -> Path:  # fmt: skip
    """A `[workers] command` for ExoMonad: Gemini CLI (`--yolo`) against the scripted
    model, run where ExoMonad starts it (the worker's worktree), keeping the identity
    ExoMonad gives it in the pane's environment."""
    env = gemini_env(home, base_url, extra=extra_env)
    return harness_write_launcher(home.root / name, None, env, gemini_command(yolo=True),
                                  from_pane=EXOMONAD_WORKER_ENV)  # fmt: skip


def start_gemini_in_tmux(
    tmux: BaseTmux | str,
    home: GeminiHome,
    base_url: str,
    *,
    yolo: bool = False,
    model: str | None = None,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    session: str = "gemini",
    width: int = 160,
    height: int = 50,
    ready_timeout: float = 60.0,
    wait_ready: bool = True,
) -> GeminiPane:
    """Launch the pinned Gemini CLI interactively in a new tmux session and wait for
    its input prompt. `tmux` is a `Tmux` or a socket name (a server of that name is
    used or started; the caller then owns killing it)."""
    server = tmux if isinstance(tmux, BaseTmux) else Tmux(tmux)
    argv = gemini_command(yolo=yolo, model=model, extra_args=extra_args)
    env = gemini_env(home, base_url, extra=extra_env)
    launcher = write_launcher(home, env, argv)
    started = time.monotonic()
    pane_id, pid = server.new_session(
        session, shlex.quote(str(launcher)), cwd=home.workspace, width=width, height=height
    )
    pane = GeminiPane(tmux=server, pane_id=pane_id, pane_pid=pid, home=home, started_at=started)
    if wait_ready:
        pane.wait_until_ready(ready_timeout)
    return pane


__all__ = [
    "BLOCKING_DIALOGS",
    "GEMINI_BIN",
    "GEMINI_VERSION",
    "OFFLINE_SETTINGS",
    "READY_MARKER",
    "SETUP_HINT",
    "GeminiHome",
    "GeminiNotInstalled",
    "GeminiPane",
    "PaneError",
    "Tmux",
    "TmuxPane",
    "build_settings",
    "gemini_command",
    "gemini_env",
    "gemini_install_problem",
    "prepare_home",
    "require_gemini",
    "require_tmux",
    "start_gemini_in_tmux",
    "tmux_install_problem",
    "write_launcher",
]
