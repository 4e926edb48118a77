"""Pieces the real-CLI harnesses (`claude_cli`, `gemini_cli`) and their tests share.

* From the package (:mod:`exomonad.clis.env`, what the demo uses too): `PASSTHROUGH_ENV`,
  `scrubbed_env()`, `deep_merge()`, `write_launcher()`, `VENV_BIN`; `pid_alive()` is
  :mod:`exomonad.util.proc`'s.
* `fail_if_missing()`: fail (never skip) a test whose pinned CLI or tmux is missing.
* `ExomonadServe`: `python -m exomonad serve --tmux-socket ...` with its output in a log.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

import pytest

from exomonad.clis.env import (
    PASSTHROUGH_ENV,
    VENV_BIN,
    deep_merge,
    scrubbed_env,
    write_launcher,
)
from exomonad.errors import SandboxError
from exomonad.sandbox import require_bwrap
from exomonad.util.proc import pid_alive
from exomonad.util.waiting import retry_until


def fail_if_missing(*checks: Callable[[], str | None]) -> None:
    """Fail (never skip) at the first check that reports a problem (a pinned CLI or tmux
    is missing); the problem says how to fix it."""
    for check in checks:
        problem = check()
        if problem is not None:
            pytest.fail(problem, pytrace=False)


def bwrap_problem() -> str | None:
    """Why no working ``bwrap`` is here (for :func:`fail_if_missing`), or None."""
    try:
        require_bwrap()
    except SandboxError as exc:
        return f"{exc} (`make setup` installs it)"
    return None


class ExomonadServe:
    """`python -m exomonad serve --tmux-socket <socket>`, stdout+stderr in `log_path`."""

    def __init__(
        self,
        *,
        state: Path,
        env: Mapping[str, str],
        tmux_socket: str,
        log_path: Path,
        cwd: Path | None = None,
        args: Sequence[str] = (),
    ) -> None:
        self.state = state  # EXOMONAD_DIR: the server is up once server.sock exists
        self.args = list(args)  # more `exomonad serve` options
        self.env = dict(env)
        self.tmux_socket = tmux_socket
        self.log_path = log_path
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(
        self, timeout: float = 30.0, *, message: str = "exomonad serve did not start"
    ) -> None:
        """Start the server and wait for its socket; AssertionError with the log if it
        exits first."""
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", self.tmux_socket,
             *self.args],
            env=self.env, cwd=self.cwd, stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        proc = self.proc
        sock = self.state / "server.sock"

        def up() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"exomonad serve exited early:\n{self.log()}")
            return sock.exists()

        retry_until(up, timeout=timeout, interval=0.05, message=message)

    def stop(self) -> None:
        """SIGTERM, SIGKILL after 20 s; closes the log."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def lead_creates_team(self, team: str) -> None:
        """What the lead's Claude Code reports after `TeamCreate` (its PostToolUse hook,
        tokenless as the lead's): the server adopts `team`."""
        hook = {"session_id": "lead-1", "tool_name": "TeamCreate",
                "tool_input": {"team_name": team}}  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "exomonad", "hook", "post-tool-use"],
                              input=json.dumps(hook), env=self.env, capture_output=True,
                              text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr

    def log(self, tail: int = 4000) -> str:
        """The last `tail` characters of the server's output."""
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text("utf-8", "replace")[-tail:]


__all__ = [
    "PASSTHROUGH_ENV",
    "VENV_BIN",
    "ExomonadServe",
    "deep_merge",
    "fail_if_missing",
    "pid_alive",
    "scrubbed_env",
    "write_launcher",
]
