"""Run the real Codex CLI (pinned in tests/e2e/codex/package.json) offline.

What the demo needs too (the pinned CLI, its offline home and config, environment,
the processes it leaves behind) is :mod:`exomonad.clis.codex`, imported (and
re-exported) here, with what it takes to run offline. The rest is the tests':

* `run_exec(home, prompt)`: `codex exec` to completion (stdin closed), with timing.
* `start_codex_in_tmux(...)`: the interactive TUI in a private tmux server.
* `stub_mcp_server`, `command_hook`, `probe_command`: a stand-in MCP server and hook
  probes (`exo_mcp_stub.py`, `codex_hook_probe.py`) and what they recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.clis.codex import (
    API_KEY_ENV,
    BLOCKING_DIALOGS,
    CODEX_BIN,
    CODEX_VERSION,
    DEAD_PROXY,
    DEFAULT_MODEL,
    PROVIDER_ID,
    READY_MARKER,
    SETUP_HINT,
    CodexHome,
    CodexNotInstalled,
    codex_env,
    codex_install_problem,
    codex_processes,
    kill_codex_processes,
    offline_config,
    prepare_home,
    provider_config,
    require_codex,
)
from exomonad.clis.env import write_launcher as harness_write_launcher
from tests.e2e.tmux import PaneError, TmuxPane, tmux_binary, tmux_problem
from tests.e2e.tmux import Tmux as BaseTmux

E2E_DIR = Path(__file__).resolve().parent
HOOK_PROBE = E2E_DIR / "codex_hook_probe.py"
MCP_STUB = E2E_DIR / "exo_mcp_stub.py"


def tmux_install_problem() -> str | None:
    return tmux_problem(SETUP_HINT)


def require_tmux() -> str:
    return tmux_binary(SETUP_HINT, CodexNotInstalled)


def stub_mcp_server(calls_log: Path, *, python: str | None = None) -> dict[str, Any]:
    """`[mcp_servers.exo]` running `exo_mcp_stub.py` (tool `notify_parent`), its calls
    appended to `calls_log`; approval mode `approve` so no dialog asks."""
    return {
        "command": python or sys.executable,
        "args": [str(MCP_STUB), str(calls_log)],
        "startup_timeout_sec": 20,
        "tool_timeout_sec": 30,
        "default_tools_approval_mode": "approve",
    }


def command_hook(
    command: str,
    *,
    matcher: str | None = None,
    timeout: int | None = None,
    status_message: str | None = None,
) -> dict[str, Any]:
    """One matcher group `{matcher?, hooks: [{type: "command", command, ...}]}`."""
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    if status_message is not None:
        handler["statusMessage"] = status_message
    group: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def probe_command(log: Path, mode: str = "record", reason: str | None = None) -> str:
    """The shell command of a `codex_hook_probe.py` hook (see that module for modes)."""
    argv = [sys.executable, str(HOOK_PROBE), str(log), mode, *([reason] if reason else [])]
    return shlex.join(argv)


def exec_command(
    prompt: str, *, bypass: bool = True, json_events: bool = False, extra_args: Sequence[str] = ()
) -> list[str]:
    """`codex exec [--dangerously-bypass-approvals-and-sandbox] [--json] ... <prompt>`."""
    cmd = [str(require_codex()), "exec", "--skip-git-repo-check"]
    if bypass:
        cmd.append("--dangerously-bypass-approvals-and-sandbox")
    if json_events:
        cmd.append("--json")
    return [*cmd, *extra_args, "--", prompt]


@dataclass(frozen=True)
class ExecResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    started_at: float  # time.monotonic() at launch
    elapsed: float

    def output(self) -> str:
        return f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"

    def events(self) -> list[dict[str, Any]]:
        """The JSONL events of `--json` mode."""
        out = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                ev = json.loads(line)
                if isinstance(ev, dict):
                    out.append(ev)
        return out


def run_exec(
    home: CodexHome,
    prompt: str,
    *,
    timeout: float = 90.0,
    bypass: bool = True,
    json_events: bool = False,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> ExecResult:
    """Run `codex exec` in `home.workspace` to completion (stdin closed: exec would
    otherwise read it and append it to the prompt). On timeout its whole process group
    is killed and TimeoutError carries its output."""
    argv = exec_command(prompt, bypass=bypass, json_events=json_events, extra_args=extra_args)
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=home.workspace,
        env=codex_env(home, extra=extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the node launcher and the native binary: one group
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise TimeoutError(
            f"codex exec did not finish within {timeout:.0f}s\n--- stdout ---\n{stdout}"
            f"\n--- stderr ---\n{stderr}"
        ) from None
    return ExecResult(argv, proc.returncode, stdout, stderr, started, time.monotonic() - started)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if isinstance(r, dict)]


def hook_calls(log: Path, event: str | None = None) -> list[dict[str, Any]]:
    """What `codex_hook_probe.py` recorded in `log` (every call, or those of `event`)."""
    return [r for r in _jsonl(log) if event is None or r.get("event") == event]


def mcp_calls(log: Path) -> list[dict[str, Any]]:
    """The `tools/call` requests `exo_mcp_stub.py` recorded in `log`."""
    return [r for r in _jsonl(log) if r.get("event") == "call"]


# ---------------------------------------------------------------------------- tmux


class Tmux(BaseTmux):
    """A private tmux server (`tmux -L exo-codex-<hex>`); `kill()` ends it and its panes."""

    socket_prefix = "exo-codex"
    default_width = 160

    def require_tmux(self) -> str:
        return require_tmux()


@dataclass
class CodexPane(TmuxPane[CodexHome]):
    """The Codex TUI in a pane; ready when the empty composer (`READY_MARKER`) shows."""

    program = "Codex CLI"
    blocking_dialogs = BLOCKING_DIALOGS
    enter_delay = 0.3

    def is_ready(self, screen: str) -> bool:
        return READY_MARKER in screen


def tui_command(*, bypass: bool = True, extra_args: Sequence[str] = ()) -> list[str]:
    cmd = [str(require_codex())]
    if bypass:
        cmd.append("--dangerously-bypass-approvals-and-sandbox")
    return [*cmd, *extra_args]


def start_codex_in_tmux(
    tmux: BaseTmux,
    home: CodexHome,
    *,
    bypass: bool = True,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    session: str = "codex",
    width: int = 160,
    height: int = 50,
    ready_timeout: float = 60.0,
    wait_ready: bool = True,
) -> CodexPane:
    """Launch the pinned Codex TUI in a new tmux session and wait for its composer."""
    argv = tui_command(bypass=bypass, extra_args=extra_args)
    launcher = harness_write_launcher(
        home.root / "launch-codex.sh", home.workspace, codex_env(home, extra=extra_env), argv
    )
    started = time.monotonic()
    pane_id, pid = tmux.new_session(
        session, shlex.quote(str(launcher)), cwd=home.workspace, width=width, height=height
    )
    pane = CodexPane(tmux=tmux, pane_id=pane_id, pane_pid=pid, home=home, started_at=started)
    if wait_ready:
        pane.wait_until_ready(ready_timeout)
    return pane


__all__ = [
    "API_KEY_ENV",
    "BLOCKING_DIALOGS",
    "CODEX_BIN",
    "CODEX_VERSION",
    "DEAD_PROXY",
    "DEFAULT_MODEL",
    "HOOK_PROBE",
    "MCP_STUB",
    "PROVIDER_ID",
    "READY_MARKER",
    "SETUP_HINT",
    "CodexHome",
    "CodexNotInstalled",
    "CodexPane",
    "ExecResult",
    "PaneError",
    "Tmux",
    "codex_env",
    "codex_install_problem",
    "codex_processes",
    "command_hook",
    "exec_command",
    "hook_calls",
    "kill_codex_processes",
    "mcp_calls",
    "offline_config",
    "prepare_home",
    "probe_command",
    "provider_config",
    "require_codex",
    "require_tmux",
    "run_exec",
    "start_codex_in_tmux",
    "stub_mcp_server",
    "tmux_install_problem",
    "tui_command",
]
