"""What the real-Claude-Code team tests share (`test_claude_330_teams`,
`test_claude_330_codex`): a project set up by `exomonad init` with its server and private
tmux server, the lead started in it, and probes of what happens on disk and in /proc.

Every `exomonad` / `exomonad-teammate` these tests start (the server, Claude Code's hooks
and teammate command, the workers' MCP servers and hooks) runs *this checkout's* code:
`write_shims` puts wrappers that set PYTHONPATH first on PATH (the venv's console
scripts would import whatever checkout the venv was installed from).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from exomonad.client import ServerClient
from exomonad.clis import launchers
from exomonad.clis.launchers import write_shims
from exomonad.scripted.anthropic import RecordedRequest, ScriptedClaude
from exomonad.server.pidfile import read_server_info
from exomonad.teams import Mailbox, TeamPaths
from exomonad.teams.protocol import ShutdownApproved, decode
from exomonad.util.probe import Probe
from exomonad.util.waiting import retry_until
from tests.e2e.claude_cli import (
    ClaudeHome,
    ClaudePane,
    Tmux,
    read_json_file,
    start_claude_in_tmux,
    wait_for_session_team,
)
from tests.e2e.claude_cli import prepare_home as prepare_claude_home
from tests.e2e.codex_cli import CodexHome
from tests.e2e.harness import ExomonadServe, pid_alive, scrubbed_env
from tests.support.git import GIT_ENV, git

STEP = 60.0  # one hop on a loaded 2-core box (idle: 1-5 s)
READY = 90.0  # a CLI's first prompt
LEAD = "team-lead"


# ---------------------------------------------------------------------------- probes


def inbox(path: Path) -> list[dict[str, Any]]:
    data = read_json_file(path)
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def has_text(path: Path, needle: str) -> Callable[[], bool]:
    return lambda: any(needle in str(e.get("text", "")) for e in inbox(path))


def find_teammate(agent_id: str) -> int | None:
    """The pid of the `exomonad-teammate` (or `exomonad teammate`) process Claude Code
    started for `agent_id`."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode("utf-8", "replace") for a in argv]
        is_teammate = "teammate" in args or any(a.endswith("/exomonad-teammate") for a in args)
        if is_teammate and agent_id in args and pid_alive(int(d.name)):
            return int(d.name)
    return None


def fmt_hops(hops: list[tuple[str, float | None]]) -> str:
    return "\n".join(f"    {name:<62} {'n/a' if v is None else f'{v:6.2f}s'}" for name, v in hops)


# ---------------------------------------------------------------------------- project


@dataclass
class Project:
    """A workspace set up by `exomonad init`, its server, and one private tmux server."""

    claude: ClaudeHome  # config dir (teams/) + workspace (the project root)
    state: Path  # <workspace>/.exomonad
    tmux: Tmux  # lead, Gemini / teammate panes, and the server's pane backend
    env: dict[str, str]  # for `exomonad ...` commands and the server
    bin_dir: Path  # this checkout's `exomonad` and `exomonad-teammate` (first on PATH)
    init: dict[str, Any] = field(default_factory=dict)  # `exomonad init --json`
    server: ExomonadServe | None = None

    @property
    def workspace(self) -> Path:
        return self.claude.workspace

    def exo(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "exomonad", *args], env=self.env, cwd=self.workspace,
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def configure(self, toml: str) -> None:
        """Append to the commented template `init` wrote (before the server starts)."""
        path = self.state / "config.toml"
        path.write_text(path.read_text("utf-8") + "\n" + toml, "utf-8")

    def start_server(self) -> None:
        self.server = ExomonadServe(
            state=self.state, env=self.env, tmux_socket=self.tmux.socket,
            log_path=self.state.parent.parent / "server.log", cwd=self.workspace,
        )  # fmt: skip
        self.server.start(timeout=30)

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()

    def server_log(self) -> str:
        return self.server.log() if self.server is not None else ""

    def status(self) -> dict[str, Any]:
        done = self.exo("status", "--json")
        assert done.returncode == 0, done.stderr
        data: dict[str, Any] = orjson.loads(done.stdout)
        return data

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to the server over its Unix socket (as `exomonad teammate` does)."""
        info = read_server_info(self.state)
        assert info is not None, "no server"
        assert info.alive, "no server"
        conn = http.client.HTTPConnection("localhost", timeout=30)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(info.socket)
        conn.sock = sock
        conn.request("POST", path, body=orjson.dumps(body),
                     headers={"Content-Type": "application/json"})  # fmt: skip
        data: dict[str, Any] = orjson.loads(conn.getresponse().read())
        conn.close()
        return data

    def team(self, name: str) -> TeamPaths:
        return TeamPaths(name, self.claude.config_dir)

    def members(self, team: str) -> dict[str, dict[str, Any]]:
        """The team's members; a read in the middle of Claude Code's rewrite of
        config.json (not atomic: it can be empty for an instant) is read again."""
        path = self.team(team).config_file
        read: list[Any] = [{}]

        def readable() -> bool:
            read[0] = read_json_file(path) if path.exists() else {}
            return isinstance(read[0], dict)

        retry_until(readable, timeout=10, interval=0.05, message=f"{path} stays unreadable")
        return {m["name"]: m for m in read[0].get("members", []) if isinstance(m, dict)}

    def wait_adopted(self, team: str) -> float:
        """Until the server's current team is `team`; returns when (monotonic)."""
        registry = self.state / "teams.json"

        def adopted() -> bool:
            data = read_json_file(registry)
            return isinstance(data, dict) and data.get("current") == team

        retry_until(adopted, timeout=STEP, interval=0.02,
                    message=f"the server did not adopt {team}:\n{self.server_log()}")  # fmt: skip
        return time.monotonic()

    def counters(self) -> dict[str, int]:
        """The server's counters (``/health``, asked as the lead from the test runner)."""
        found: dict[str, int] = ServerClient.as_lead(self.state).health()["counters"]
        return found

    def lead_session(self) -> dict[str, Any]:
        data = read_json_file(self.state / "teams.json") or {}
        leads = [s for s in data.get("sessions", {}).values() if s.get("role") == "tl"]
        assert len(leads) == 1, data
        lead: dict[str, Any] = leads[0]
        return lead


@contextlib.contextmanager
def open_project(tmp_path: Path, *, init_args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None) -> Iterator[Project]:  # fmt: skip
    """`exomonad init` on the lead's workspace (plus `init_args`, with `env` added to every
    environment); the server is started by each test (after it adds its own config).
    Teardown: tmux first (Claude, teammates, workers, MCP bridges), then the server."""
    claude = prepare_claude_home(tmp_path / "claude", teammate_mode="tmux",
                                 settings={"enableAllProjectMcpServers": True})  # fmt: skip
    bin_dir = write_shims(tmp_path / "bin")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("EXOMONAD_", "CLAUDE", "TMUX"))}  # fmt: skip
    # PATH with this checkout's `exomonad` / `exomonad-teammate` first: the hooks, MCP
    # servers and teammate command `init` writes name them and rely on PATH.
    base["PATH"] = f"{bin_dir}{os.pathsep}{base.get('PATH', '/usr/bin:/bin')}"
    env = {**base, **(env or {})}
    state = claude.workspace / ".exomonad"
    env.update(CLAUDE_CONFIG_DIR=str(claude.config_dir), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    p = Project(claude=claude, state=state, tmux=Tmux(), env=env, bin_dir=bin_dir)
    done = p.exo("init", str(claude.workspace), "--json", *init_args)
    assert done.returncode == 0, done.stderr
    p.init = orjson.loads(done.stdout)
    # A team commits what `init` wrote; workers' worktrees are made from that commit.
    env.update(GIT_ENV)
    git(claude.workspace, "init", "-q", "-b", "main")
    git(claude.workspace, "add", "-A")
    git(claude.workspace, "commit", "-q", "-m", "exomonad init")
    try:
        yield p
    finally:
        p.tmux.kill()  # also unlinks its socket file
        p.stop_server()


def current_team(state: Path) -> str | None:
    data = read_json_file(state / "teams.json")
    team = data.get("current") if isinstance(data, dict) else None
    return team if isinstance(team, str) else None


@dataclass
class Lead:
    """The lead as started: its pane, its session team, when the server adopted it."""

    pane: ClaudePane
    team: str
    paths: TeamPaths
    adopted_after: float  # seconds from launch


def start_lead(project: Project, model: ScriptedClaude, probe: Probe) -> Lead:
    """Claude Code in the project's workspace (this checkout's `exomonad` first on its
    PATH, and on its teammates'; ``EXOMONAD_DIR`` as `exomonad up` gives it); the server
    adopts its session team."""
    probe.watch("team adopted", lambda: (current_team(project.state) or "").startswith("s"))
    path = f"{project.bin_dir}{os.pathsep}{scrubbed_env()['PATH']}"
    env = {"PATH": path, "EXOMONAD_DIR": str(project.state)}
    pane = start_claude_in_tmux(project.tmux, project.claude, model.url, ready_timeout=READY,
                                extra_env=env)  # fmt: skip
    team, config = wait_for_session_team(project.claude, STEP)
    project.wait_adopted(team)
    # The SessionStart hook reached the server with the lead's session and pane, through
    # the shell front (`init` wrote `exomonad-hook ...`), which offered lead.token and had
    # it taken: the lead's own Claude Code (tests/test_hook_front.py for the rest).
    session = project.lead_session()
    assert session["session_id"] == config["leadSessionId"], session
    assert session["pane"] == pane.pane_id, session
    counters = project.counters()
    assert counters.get("hook_front", 0) >= 1, counters
    assert counters.get("lead_claim_declined", 0) == 0, counters
    assert project.status()["team"] == team
    adopted = probe.at("team adopted") - pane.started_at
    return Lead(pane=pane, team=team, paths=project.team(team), adopted_after=adopted)


def last_tool(name: str) -> Callable[[RecordedRequest], bool]:
    """An agent turn answering exactly one tool call, `name`."""
    return lambda r: r.is_agent_turn and [n for n, _ in r.newest_tool_results()] == [name]


# ---------------------------------------------------------------------------- (A)


def delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def approvals(paths: TeamPaths) -> list[ShutdownApproved]:
    out = []
    for e in Mailbox(paths).read_raw(LEAD):
        msg = decode(str(e.get("text", "")))
        if isinstance(msg, ShutdownApproved):
            out.append(msg)
    return out


# ---------------------------------------------------------------------------- workers


def write_codex_launcher(home: CodexHome, bin_dir: Path, *extra: str) -> Path:
    """The `[[teammate.routes]] command` for Codex (`exomonad.clis.launchers`), with the
    tests' git identity; ``extra``: more arguments for Codex."""
    return launchers.write_codex_launcher(home, bin_dir, *extra, extra_env=GIT_ENV)
