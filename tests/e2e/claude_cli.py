"""Run the real Claude Code (both pinned versions, tests/e2e/claude) offline.

What the demo needs too (versions, homes, environments, commands, launchers) is
:mod:`exomonad.clis.claude`, imported (and re-exported) here; the rest is the tests'.

Both versions are installed side by side in `tests/e2e/claude/node_modules` under npm
aliases (one package name cannot be installed twice):

* `claude-code-112` = `@anthropic-ai/claude-code@2.1.112`: a `cli.js` run with `node`.
  Teams work headless (`-p`): TeamCreate, SendMessage, and after the turn the lead keeps
  polling its inbox (see `HeadlessClaude`).
* `claude-code-330` = `@anthropic-ai/claude-code@2.1.330`: a native binary from the
  platform's optional dependency (`@anthropic-ai/claude-code-linux-x64/claude`; the
  wrapper's postinstall hard-links it over `claude-code-330/bin/claude.exe`). Teams only
  exist in the interactive client: drive it in a tmux pane (`start_claude_in_tmux`).

Pieces, usable separately:

* `CLAUDE_112`, `CLAUDE_330` (`ClaudeVersion`): where each lives, its argv prefix and
  `install_problem()` (None, or what is missing and how to fix it).
* `prepare_home(root, ...)`: an isolated HOME + CLAUDE_CONFIG_DIR + workspace, with the
  global config (`<config>/.claude.json`) pre-seeded so no first-run dialog blocks:
  `hasCompletedOnboarding`, the workspace's `hasTrustDialogAccepted` and the API key
  pre-approved in `customApiKeyResponses.approved` (its last 20 characters), and
  `<config>/settings.json` with `skipDangerousModePermissionPrompt` (bypass-mode
  disclaimer) and optionally `teammateMode`.
* `claude_env(home, base_url)`: a scrubbed environment built from scratch.
* `claude_command(version, ...)`: the argv (headless `-p` or interactive).
* `HeadlessClaude` / `start_headless(...)`: a `-p` run with stream-json output parsed
  into events (and optionally `--input-format stream-json` turns written to stdin).
* `Tmux`, `ClaudePane`, `start_claude_in_tmux(...)`: interactive in a private tmux
  server (`-L exo-e2e-claude-<hex>`), ready when the empty prompt (`PROMPT_GLYPH`) shows.
* `wait_for_session_team(home, ...)`: the `session-<8 hex>` team 2.1.330 creates.

What it takes to reach 2.1.330's prompt offline, as root, with no key press, and the
pieces that prepare it: :mod:`exomonad.clis.claude` (the demo uses them too).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from exomonad.clis.claude import (
    BLOCKING_DIALOGS,
    CLAUDE_112,
    CLAUDE_330,
    CLAUDE_NPM_DIR,
    DEFAULT_API_KEY,
    PROMPT_GLYPH,
    SETUP_HINT,
    VERSIONS,
    ClaudeHome,
    ClaudeNotInstalled,
    ClaudeVersion,
    claude_command,
    claude_env,
    global_config_seed,
    is_ready_screen,
    prepare_home,
    write_launcher,
)
from exomonad.clis.env import scrubbed_env
from tests.e2e.tmux import PaneError, TmuxPane, tmux_binary, tmux_problem
from tests.e2e.tmux import Tmux as BaseTmux


def tmux_install_problem() -> str | None:
    """None when tmux is on PATH, else what is missing and how to fix it."""
    return tmux_problem(SETUP_HINT)


def require_tmux() -> str:
    return tmux_binary(SETUP_HINT, ClaudeNotInstalled)


def user_turn_line(content: str | Sequence[Mapping[str, Any]]) -> str:
    """One `--input-format stream-json` user turn: a JSON line (newline included).

    `{"type": "user", "message": {"role": "user", "content": <str | blocks>}}` is all
    2.1.112 needs (no session_id / parent_tool_use_id).
    """
    body: Any = content if isinstance(content, str) else [dict(b) for b in content]
    return json.dumps({"type": "user", "message": {"role": "user", "content": body}}) + "\n"


# ---------------------------------------------------------------------------- processes


@dataclass
class HeadlessClaude:
    """A running `claude -p ... --output-format stream-json --verbose`.

    stdout is parsed line by line into `events` (dicts) by a reader thread; stderr goes
    to `stderr_path`. The process runs in its own process group; `close()` ends it.
    """

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    stderr_path: Path
    stream_input: bool = False
    proc: subprocess.Popen[str] | None = None
    started_at: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    event_times: list[float] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _reader: threading.Thread | None = None
    _stderr: IO[str] | None = None

    def start(self) -> HeadlessClaude:
        self._stderr = self.stderr_path.open("w", encoding="utf-8")
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.PIPE if self.stream_input else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="claude-stdout", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self.proc is not None
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.raw_lines.append(line)
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                if isinstance(event, dict):
                    self.events.append(event)
                    self.event_times.append(time.monotonic())
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise RuntimeError("not started")
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def session_id(self) -> str | None:
        with self._cond:
            for e in self.events:
                if e.get("type") == "system" and e.get("subtype") == "init":
                    sid = e.get("session_id")
                    return sid if isinstance(sid, str) else None
        return None

    def results(self) -> list[dict[str, Any]]:
        """The `type: result` events (one per completed turn)."""
        with self._cond:
            return [e for e in self.events if e.get("type") == "result"]

    def wait_for_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float, *, since: int = 0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self.events[since:]:
                    if predicate(e):
                        return e
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (not self.running() and self._reader_done()):
                    kinds = [f"{e.get('type')}/{e.get('subtype', '')}" for e in self.events]
                    raise TimeoutError(
                        f"no matching stream-json event within {timeout:.0f}s "
                        f"(running={self.running()}); events: {kinds}\n"
                        f"stderr: {self.stderr_tail()}"
                    )
                self._cond.wait(min(remaining, 0.5))

    def _reader_done(self) -> bool:
        return self._reader is None or not self._reader.is_alive()

    def wait_for_results(self, count: int, timeout: float) -> list[dict[str, Any]]:
        """Block until at least `count` `result` events (completed turns) arrived."""
        # the condition's lock is reentrant: results() may be called under it
        self.wait_for_event(lambda _e: len(self.results()) >= count, timeout)
        return self.results()

    def send_turn(self, content: str | Sequence[Mapping[str, Any]]) -> float:
        """Write one stream-json user turn to stdin; returns time.monotonic()."""
        if self.proc is None or self.proc.stdin is None:
            raise RuntimeError("started without stream_input: stdin is not a pipe")
        self.proc.stdin.write(user_turn_line(content))
        self.proc.stdin.flush()
        return time.monotonic()

    def close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def wait(self, timeout: float) -> int:
        """Wait for exit; TimeoutError (the process keeps running) if it does not."""
        if self.proc is None:
            raise RuntimeError("not started")
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                f"Claude Code (pid {self.proc.pid}) still running after {timeout:.0f}s"
            ) from None

    def stderr_tail(self, n: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-n:]
        return ""

    def close(self, grace: float = 5.0) -> int | None:
        """SIGTERM the process group, SIGKILL after `grace` s; returns the exit code."""
        proc = self.proc
        if proc is None:
            return None
        self.close_stdin()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        else:
            # the leader is gone; make sure nothing it started in its group lingers
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        return proc.returncode

    def __enter__(self) -> HeadlessClaude:
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_headless(
    version: ClaudeVersion,
    home: ClaudeHome,
    base_url: str,
    *,
    prompt: str | None = None,
    stream_input: bool = False,
    debug: bool = True,
    nonessential_traffic: bool = False,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> HeadlessClaude:
    """Start a headless run in `home.workspace` (a prompt argument or stdin turns)."""
    if prompt is None and not stream_input:
        raise ValueError("give a prompt or stream_input=True")
    argv = claude_command(
        version, prompt=prompt, stream_input=stream_input, debug=debug, extra_args=extra_args
    )
    env = claude_env(home, base_url, nonessential_traffic=nonessential_traffic, extra=extra_env)
    run = HeadlessClaude(
        argv=argv,
        env=env,
        cwd=home.workspace,
        stderr_path=home.root / f"headless-{secrets.token_hex(3)}.stderr",
        stream_input=stream_input,
    )
    return run.start()


# ---------------------------------------------------------------------------- tmux


class Tmux(BaseTmux):
    """A private tmux server (`tmux -L exo-e2e-claude-<hex>`); `kill()` ends it.

    The server's (global) environment is the env of the client that starts it; panes
    Claude Code splits off inherit it, so by default it is scrubbed (the caller's HOME
    etc. stay out). Sessions are 200 columns wide; focus-events on silences Claude
    Code's focus-events hint.
    """

    socket_prefix = "exo-e2e-claude"
    default_width = 200
    global_options = (("focus-events", "on"),)
    env: dict[str, str]  # never None: default_env() is scrubbed

    def default_env(self) -> dict[str, str]:
        env = scrubbed_env()
        env["SHELL"] = "/bin/sh"
        return env

    def require_tmux(self) -> str:
        return require_tmux()


class ClaudePane(TmuxPane[ClaudeHome]):
    """Claude Code in a pane; ready when the empty prompt (`PROMPT_GLYPH`) shows."""

    program = "Claude Code"
    blocking_dialogs = BLOCKING_DIALOGS
    enter_delay = 0.3

    def is_ready(self, screen: str) -> bool:
        return is_ready_screen(screen)


def start_claude_in_tmux(
    tmux: Tmux,
    home: ClaudeHome,
    base_url: str,
    *,
    version: ClaudeVersion = CLAUDE_330,
    permission_mode: str | None = "bypassPermissions",
    teammate_mode: str | None = None,
    debug: bool = True,
    nonessential_traffic: bool = False,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    session: str = "lead",
    pane_env: bool = True,
    width: int = 200,
    height: int = 50,
    ready_timeout: float = 60.0,
    wait_ready: bool = True,
) -> ClaudePane:
    """Launch Claude Code interactively in a new session of `tmux`; wait for the prompt.

    `pane_env` also makes the client's env the tmux session's environment, so panes
    Claude Code splits for teammates inherit it (HOME, CLAUDE_CONFIG_DIR, ...); with
    False they get only the server's scrubbed env plus what Claude Code passes itself.
    """
    argv = claude_command(
        version,
        permission_mode=permission_mode,
        teammate_mode=teammate_mode,
        debug=debug,
        extra_args=extra_args,
    )
    env = claude_env(home, base_url, nonessential_traffic=nonessential_traffic, extra=extra_env)
    launcher = write_launcher(home, env, argv)
    started = time.monotonic()
    pane_id, pid = tmux.new_session(
        session,
        shlex.quote(str(launcher)),
        cwd=home.workspace,
        width=width,
        height=height,
        env=env if pane_env else None,
    )
    pane = ClaudePane(tmux=tmux, pane_id=pane_id, pane_pid=pid, home=home, started_at=started)
    if wait_ready:
        pane.wait_until_ready(ready_timeout)
    return pane


def wait_for_session_team(
    home: ClaudeHome,
    timeout: float = 30.0,
    *,
    lead_pid: int | None = None,
    poll: float = 0.1,
) -> tuple[str, dict[str, Any]]:
    """The team 2.1.330's interactive client creates at start (`session-<8 hex>`, with
    `leadProcess`); (name, config). `lead_pid` picks the one whose leadProcess.pid matches."""
    deadline = time.monotonic() + timeout
    while True:
        for name, cfg in home.team_configs().items():
            proc = cfg.get("leadProcess")
            if not isinstance(proc, dict):
                continue
            if lead_pid is None or proc.get("pid") == lead_pid:
                return name, cfg
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"no session team with leadProcess under {home.teams_dir} after {timeout:.0f}s: "
                f"{sorted(home.team_configs())}"
            )
        time.sleep(poll)


def wait_for_path(
    condition: Callable[[], bool], timeout: float, *, what: str, poll: float = 0.05
) -> float:
    """Poll a file-system condition (another process writes it); seconds waited."""
    start = time.monotonic()
    deadline = start + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(poll)
    return time.monotonic() - start


def read_json_file(path: Path) -> Any:
    """Parsed JSON, or None if missing / mid-write."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


__all__ = [
    "BLOCKING_DIALOGS",
    "CLAUDE_112",
    "CLAUDE_330",
    "CLAUDE_NPM_DIR",
    "DEFAULT_API_KEY",
    "PROMPT_GLYPH",
    "SETUP_HINT",
    "VERSIONS",
    "ClaudeHome",
    "ClaudeNotInstalled",
    "ClaudePane",
    "ClaudeVersion",
    "HeadlessClaude",
    "PaneError",
    "Tmux",
    "TmuxPane",
    "claude_command",
    "claude_env",
    "global_config_seed",
    "is_ready_screen",
    "prepare_home",
    "read_json_file",
    "require_tmux",
    "start_claude_in_tmux",
    "start_headless",
    "tmux_install_problem",
    "user_turn_line",
    "wait_for_path",
    "wait_for_session_team",
    "write_launcher",
]
