"""Pieces the real-CLI harnesses (`claude_cli`, `gemini_cli`) and their tests share.

* `PASSTHROUGH_ENV`, `scrubbed_env()`: the start of every environment built from scratch
  (`VENV_BIN` first on PATH).
* `deep_merge()`: settings / config overrides.
* `write_launcher()`: a /bin/sh script that runs a CLI with exactly a given env.
* `pid_alive()`: a process check that treats zombies as dead (`exomonad.util.proc`'s).
* `fail_if_missing()`: fail (never skip) a test whose pinned CLI or tmux is missing.
* `ExomonadServe`: `python -m exomonad serve --tmux-socket ...` with its output in a log.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from exomonad.util.proc import pid_alive
from exomonad.util.waiting import retry_until

#: Variables copied from the caller's environment; everything else is dropped.
PASSTHROUGH_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ", "TMPDIR")
#: The venv's bin dir (its console scripts `exomonad` and `exomonad-teammate`).
VENV_BIN = Path(sys.executable).parent


def scrubbed_env() -> dict[str, str]:
    """`PASSTHROUGH_ENV` from os.environ, with a default PATH and LANG; the venv's bin dir
    first on PATH, as after `pip install`: the files `exomonad init` writes run
    `exomonad ...` and `exomonad-teammate` from PATH."""
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
    env.setdefault("LANG", "C.UTF-8")
    return env


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, nested dicts merged key by key."""
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


def fail_if_missing(*checks: Callable[[], str | None]) -> None:
    """Fail (never skip) at the first check that reports a problem (a pinned CLI or tmux
    is missing); the problem says how to fix it."""
    for check in checks:
        problem = check()
        if problem is not None:
            pytest.fail(problem, pytrace=False)


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
