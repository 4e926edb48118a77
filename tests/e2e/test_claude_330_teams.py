"""Real Claude Code 2.1.330 (interactive, in tmux) + the real ExoMonad server + the real
Gemini CLI 0.61.0, both models scripted: the two ways a Gemini worker joins a lead's team.

The project is set up by `exomonad init <workspace>` (the workspace is the lead's cwd):
Claude Code reads the project's `.claude/settings.json` (hooks → `exomonad hook ...`,
`CLAUDE_CODE_TEAMMATE_COMMAND`, `teammateMode`), `.claude/agents/gemini-worker.md` and
`.mcp.json`; Gemini CLI, started in the same workspace, reads `.gemini/settings.json`
(the `exo` MCP server and hooks). The harness adds only what running offline needs: the
seeded Claude config dir (plus `enableAllProjectMcpServers`, so `.mcp.json` opens no
dialog) and a Gemini HOME with the offline settings.

* (A) Mode A, roster member: the lead's SessionStart hook lets the server adopt the
  session team; Gemini runs in its own tmux pane and is added with `exomonad team
  add-member --synthetic --pane`. The lead's SendMessage reaches Gemini's model through
  the server's watcher; Gemini's `mcp_exo_notify_parent` lands in the lead's inbox. A
  2.1.330 lead with only roster members does not poll that inbox, so `[lead] poll_grace`
  types the message into the lead's pane (the test accepts the poller too, and says
  which path it saw).
* (B) Mode B, teammate command: `Agent(name="gemini-1", subagent_type="gemini-worker")`
  makes Claude Code split a pane and run `exomonad teammate`, which runs Gemini CLI
  (through a launcher that sets its offline env), feeds it the spawn prompt and later
  messages, and answers a shutdown_request; Claude Code's poller (on because a teammate
  was spawned) shows the worker's notify_parent as a `<teammate-message>`.

Observed with 2.1.330 (and asserted): the lead's SessionStart hook carries TMUX_PANE, so
the server knows the lead's pane; with only a roster member the report arrives through
the poll_grace fallback, typed into that pane; teammate messages reach the model as
`Another Claude session sent a message: <teammate-message ...>` (idle notifications
and shutdown_approved included); on `shutdown_approved` Claude Code removes the member
from config.json and kills the teammate's pane (paneId) within ~0.1-0.8 s.

What running this needed besides `exomonad init` (both fixed in src/): the value of
CLAUDE_CODE_TEAMMATE_COMMAND is run as one shell-quoted program, so `init` sets it to the
console script `exomonad-teammate`; `exomonad teammate` typed its first message into a
still-busy Gemini CLI with an Enter that became a newline, so it now waits for the
typed text's echo, and it consumes a shutdown_request before approving it (Claude Code
kills the pane as soon as it reads the approval).

`init` writes portable files: `exomonad ...` and `exomonad-teammate` found on PATH. So
every environment here (the `exomonad` commands, Claude Code, Gemini CLI, the tmux
server whose panes run teammates) has the venv's bin dir first on PATH
(`tests.e2e.harness.scrubbed_env`).

Latencies of every hop are printed (`-s`) for docs/performance.md. These tests never
skip: a missing CLI or tmux is a failure.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.server.pidfile import read_server_info
from exomonad.teams import Mailbox, TeamPaths
from exomonad.teams.protocol import ShutdownApproved, decode
from exomonad.util.waiting import WaitTimeout, retry_until
from tests.e2e.claude_cli import (
    CLAUDE_330,
    ClaudeHome,
    ClaudePane,
    Tmux,
    read_json_file,
    start_claude_in_tmux,
    tmux_install_problem,
    wait_for_session_team,
)
from tests.e2e.claude_cli import prepare_home as prepare_claude_home
from tests.e2e.claude_model import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from tests.e2e.gemini_cli import (
    GeminiHome,
    GeminiPane,
    gemini_command,
    gemini_env,
    gemini_install_problem,
    start_gemini_in_tmux,
)
from tests.e2e.gemini_cli import prepare_home as prepare_gemini_home
from tests.e2e.gemini_model import RecordedRequest as GeminiRequest
from tests.e2e.gemini_model import ScriptedGemini
from tests.e2e.harness import ExomonadServe, fail_if_missing, pid_alive
from tests.support.git import GIT_ENV, git

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

STEP = 60.0  # one hop on a loaded 2-core box (idle: 1-5 s)
READY = 90.0  # a CLI's first prompt
WORKER = "gemini-1"
LEAD = "team-lead"
VENV_BIN = Path(sys.executable).parent


# ---------------------------------------------------------------------------- helpers


def _require_installed() -> None:
    """Fail (never skip) when a pinned CLI or tmux is missing; says how to fix it."""
    fail_if_missing(CLAUDE_330.install_problem, gemini_install_problem, tmux_install_problem)


class Probe:
    """Polls named conditions every 20 ms in a thread; records when each first held.

    Used for on-disk hops (an inbox entry appearing) that no process reports.
    """

    def __init__(self) -> None:
        self.checks: dict[str, Callable[[], bool]] = {}
        self.seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="probe", daemon=True)
        self._thread.start()

    def watch(self, name: str, check: Callable[[], bool]) -> None:
        with self._lock:
            self.checks[name] = check

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            with self._lock:
                pending = [(n, c) for n, c in self.checks.items() if n not in self.seen]
            for name, check in pending:
                with contextlib.suppress(Exception):
                    if check():
                        self.seen[name] = time.monotonic()

    def at(self, name: str, timeout: float = STEP) -> float:
        """When `name` first held (waits for it)."""
        retry_until(lambda: name in self.seen, timeout=timeout, interval=0.02,
                    message=f"probe {name!r} never held")  # fmt: skip
        return self.seen[name]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _inbox(path: Path) -> list[dict[str, Any]]:
    data = read_json_file(path)
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _has_text(path: Path, needle: str) -> Callable[[], bool]:
    return lambda: any(needle in str(e.get("text", "")) for e in _inbox(path))


def _proc_children(pid: int) -> list[int]:
    try:
        raw = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in raw.split()]


def _find_teammate(agent_id: str) -> int | None:
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


def _fmt(hops: list[tuple[str, float | None]]) -> str:
    return "\n".join(f"    {name:<62} {'n/a' if v is None else f'{v:6.2f}s'}" for name, v in hops)


# ---------------------------------------------------------------------------- project


@dataclass
class Project:
    """A workspace set up by `exomonad init`, its server, and one private tmux server."""

    claude: ClaudeHome  # config dir (teams/) + workspace (the project root)
    state: Path  # <workspace>/.exomonad
    tmux: Tmux  # lead, Gemini / teammate panes, and the server's pane backend
    env: dict[str, str]  # for `exomonad ...` commands and the server
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
        cfg = read_json_file(self.team(team).config_file) or {}
        return {m["name"]: m for m in cfg.get("members", []) if isinstance(m, dict)}

    def wait_adopted(self, team: str) -> float:
        """Until the server's current team is `team`; returns when (monotonic)."""
        registry = self.state / "teams.json"

        def adopted() -> bool:
            data = read_json_file(registry)
            return isinstance(data, dict) and data.get("current") == team

        retry_until(adopted, timeout=STEP, interval=0.02,
                    message=f"the server did not adopt {team}:\n{self.server_log()}")  # fmt: skip
        return time.monotonic()

    def lead_session(self) -> dict[str, Any]:
        data = read_json_file(self.state / "teams.json") or {}
        leads = [s for s in data.get("sessions", {}).values() if s.get("role") == "tl"]
        assert len(leads) == 1, data
        lead: dict[str, Any] = leads[0]
        return lead


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """`exomonad init` on the lead's workspace; the server is started by each test (after
    it adds its own config). Teardown: tmux first (Claude, teammates, Gemini, MCP
    bridges), then the server."""
    claude = prepare_claude_home(tmp_path / "claude", teammate_mode="tmux",
                                 settings={"enableAllProjectMcpServers": True})  # fmt: skip
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("EXOMONAD_", "CLAUDE", "TMUX"))}  # fmt: skip
    # PATH with the venv first: the hooks, MCP servers and teammate command `init` writes
    # name `exomonad` / `exomonad-teammate` and rely on PATH.
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    state = claude.workspace / ".exomonad"
    env.update(CLAUDE_CONFIG_DIR=str(claude.config_dir), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    p = Project(claude=claude, state=state, tmux=Tmux(), env=env)
    done = p.exo("init", str(claude.workspace), "--json")
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


def _gemini_home(project: Project, root: Path) -> GeminiHome:
    """A Gemini HOME with the offline settings; the workspace is the lead's, so Gemini
    reads the project's `.gemini/settings.json` (exo MCP server + hooks) from `init`."""
    home = prepare_gemini_home(root)
    return replace(home, workspace=project.workspace)


def _dump(project: Project, lead: ScriptedClaude, gemini: ScriptedGemini) -> str:
    """Every pane, both models' requests, the server's log and status."""
    greqs = [
        f"#{r.index} tools={r.has_tools} last_user={r.last_user_texts()[-1:]!r} "
        f"responses={json.dumps(r.function_responses())[:200]}"
        for r in gemini.requests
    ]
    panes = "\n".join(
        f"--- pane {p['id']} ({p['command']}, dead={p['dead']}) ---\n"
        + project.tmux.run("capture-pane", "-p", "-J", "-t", p["id"], check=False)
        for p in project.tmux.panes()
    )
    return (
        f"{panes}\n--- lead requests ---{lead.describe()}\n--- gemini requests ---\n"
        + "\n".join(greqs)
        + f"\n--- server log ---\n{project.server_log()}"
        + f"\n--- status ---\n{project.exo('status', '--json').stdout[-2500:]}"
    )


@contextlib.contextmanager
def _diagnosed(project: Project, lead: ScriptedClaude, gemini: ScriptedGemini) -> Iterator[None]:
    """A failed wait or check fails the test with every pane, request and log attached."""
    try:
        yield
    except (TimeoutError, WaitTimeout, AssertionError) as e:
        pytest.fail(f"{e}\n{_dump(project, lead, gemini)}", pytrace=False)


def _current_team(state: Path) -> str | None:
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


def _start_lead(project: Project, model: ScriptedClaude, probe: Probe) -> Lead:
    """Claude Code in the project's workspace; the server adopts its session team."""
    probe.watch("team adopted", lambda: (_current_team(project.state) or "").startswith("s"))
    pane = start_claude_in_tmux(project.tmux, project.claude, model.url, ready_timeout=READY)
    team, config = wait_for_session_team(project.claude, STEP)
    project.wait_adopted(team)
    # The SessionStart hook reached the server with the lead's session and pane.
    session = project.lead_session()
    assert session["session_id"] == config["leadSessionId"], session
    assert session["pane"] == pane.pane_id, session
    assert project.status()["team"] == team
    adopted = probe.at("team adopted") - pane.started_at
    return Lead(pane=pane, team=team, paths=project.team(team), adopted_after=adopted)


def _last_tool(name: str) -> Callable[[RecordedRequest], bool]:
    """An agent turn answering exactly one tool call, `name`."""
    return lambda r: r.is_agent_turn and [n for n, _ in r.newest_tool_results()] == [name]


# ---------------------------------------------------------------------------- (A)


class ScriptA:
    """Scripted lead for mode A: prompt → SendMessage → 'sent'; anything else: default."""

    def __init__(self, tag: str, task: str) -> None:
        self.tag, self.task = tag, task
        self.prompt = f"hand alpha to gemini-1 {tag}"
        self.marks: dict[str, float] = {}

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        names = [n for n, _ in req.newest_tool_results()]
        if names == ["SendMessage"]:
            return f"sent {self.tag}"
        if not names and any(self.prompt in t for t in req.last_user_texts()):
            self.marks["send_message"] = time.monotonic()
            return tool_reply("SendMessage", {"to": WORKER, "summary": f"task {self.tag}",
                                              "message": self.task})  # fmt: skip
        return None


def _start_roster_gemini(project: Project, lead: Lead, gemini: ScriptedGemini,
                         root: Path) -> GeminiPane:  # fmt: skip
    """Gemini CLI in its own pane with a worker token, added as a synthetic member."""
    token = project.post("/teammate/token", {"name": WORKER, "team": lead.team,
                                             "parent": LEAD})["token"]  # fmt: skip
    env = {"EXOMONAD_TOKEN": token, "EXOMONAD_DIR": str(project.state),
           "EXOMONAD_NAME": WORKER, "EXOMONAD_TEAM": lead.team,
           "CLAUDE_CONFIG_DIR": str(project.claude.config_dir)}  # fmt: skip
    gpane = start_gemini_in_tmux(project.tmux.socket, _gemini_home(project, root), gemini.url,
                                 yolo=True, session="gemini", ready_timeout=READY,
                                 extra_env=env)  # fmt: skip
    added = project.exo("team", "add-member", lead.team, WORKER, "--synthetic", "--pane",
                        gpane.pane_id, "--agent-type", "gemini", "--json")  # fmt: skip
    assert added.returncode == 0, added.stderr
    return gpane


@dataclass
class RunA:
    entered: float  # Enter of the lead's prompt
    first: RecordedRequest  # the lead's turn for it
    g1: GeminiRequest  # Gemini's turn with the task (answered with notify_parent)
    back: RecordedRequest  # the lead's turn carrying the report
    g2: GeminiRequest  # Gemini's turn with the functionResponse


def _round_trip_a(lead: Lead, gpane: GeminiPane, model: ScriptedClaude, gemini: ScriptedGemini,
                  script: ScriptA, report: str) -> RunA:  # fmt: skip
    entered = lead.pane.type_message(script.prompt)
    first = model.wait_for_user_text(script.prompt, STEP)
    sent = model.wait_for_request(_last_tool("SendMessage"), STEP, since=first.index)
    result = dict(sent.newest_tool_results())["SendMessage"]
    assert f"Message sent to {WORKER}'s inbox" in result, result
    typed = f"[from {LEAD}] {script.task}"
    g1 = gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), STEP)
    assert typed in g1.last_user_texts()[-1]
    assert "mcp_exo_notify_parent" in g1.tool_names(), sorted(g1.tool_names())
    want = f"[from: {WORKER}] success: {report}"
    back = model.wait_for_request(
        lambda r: r.is_agent_turn and (
            any(m.teammate_id == WORKER and report in m.text for m in r.teammate_messages())
            or any(want in t for t in r.last_user_texts())),
        STEP, since=sent.index + 1)  # fmt: skip
    g2 = gemini.wait_for_request(lambda r: r.is_agent_turn and bool(r.function_responses()),
                                 STEP, since=g1.index + 1)  # fmt: skip
    gpane.wait_for_text(f"reported {script.tag}", STEP)
    lead.pane.wait_for_text("scripted default reply", STEP)  # the lead answered the report
    return RunA(entered, first, g1, back, g2)


def test_mode_a_roster_member_gemini_pane(project: Project, tmp_path: Path) -> None:
    _require_installed()
    tag = os.urandom(4).hex()
    task, report = f"review module alpha {tag}", f"alpha reviewed, 3 issues {tag}"
    want = f"[from: {WORKER}] success: {report}"
    project.configure("[lead]\npoll_grace = 2.0\n")
    project.start_server()
    script = ScriptA(tag, task)
    with (
        ScriptedClaude(responder=script) as model,
        ScriptedGemini() as gemini,
        Probe() as probe,
        _diagnosed(project, model, gemini),
    ):
        gemini.add_function_call("mcp_exo_notify_parent", {"status": "success",
                                                           "message": report})  # fmt: skip
        gemini.add_text(f"reported {tag}")
        lead = _start_lead(project, model, probe)
        gpane = _start_roster_gemini(project, lead, gemini, tmp_path / "gem")
        probe.watch("task in worker inbox", _has_text(lead.paths.inbox(WORKER), task))
        probe.watch("report in lead inbox", _has_text(lead.paths.inbox(LEAD), report))
        run = _round_trip_a(lead, gpane, model, gemini, script, report)
        counters = project.status()["counters"]

        via_poller = any(m.teammate_id == WORKER for m in run.back.teammate_messages())
        if via_poller:
            [msg] = [m for m in run.back.teammate_messages() if m.teammate_id == WORKER]
            assert msg.text == want
            assert counters.get("lead_pane_fallback", 0) == 0, counters
        else:  # typed into the lead's pane by the poll_grace fallback, then pruned
            assert any(t.strip() == want for t in run.back.last_user_texts())
            assert counters["lead_pane_fallback"] == 1, counters
            assert not _has_text(lead.paths.inbox(LEAD), report)()  # no second showing
        [answer] = [r for r in run.g2.function_responses()
                    if r.get("name") == "mcp_exo_notify_parent"]  # fmt: skip
        assert f"delivered to {LEAD}'s inbox" in json.dumps(answer.get("response")), answer
        assert (counters["delivered"], counters["notify_inbox"]) == (1, 1), counters
        assert counters["tool:notify_parent"] == 1, counters
        assert sum(f"[from {LEAD}] {task}" in t for t in run.g2.user_texts()) == 1  # typed once
        assert not _inbox(lead.paths.inbox(WORKER))  # delivered and pruned
        member = project.members(lead.team)[WORKER]
        assert (member["backendType"], member["exomonadPane"]) == ("exomonad", gpane.pane_id)

    sent_at = script.marks["send_message"]
    t_task = probe.seen.get("task in worker inbox")
    t_report = probe.seen.get("report in lead inbox")
    path = "poller" if via_poller else "poll_grace"
    hops = [
        ("claude launch → prompt ready", lead.pane.ready_after),
        ("claude launch → server adopted the session team", lead.adopted_after),
        ("gemini launch → prompt ready", gpane.ready_after),
        ("lead Enter → lead model request", run.first.received_at - run.entered),
        ("SendMessage reply → worker inbox entry seen", _delta(sent_at, t_task)),
        ("worker inbox entry → Gemini model request (watcher)",
         _delta(t_task, run.g1.received_at)),
        ("SendMessage reply → Gemini model request", run.g1.received_at - sent_at),
        ("notify_parent functionCall reply → lead inbox entry",
         _delta(run.g1.received_at, t_report)),
        (f"lead inbox entry → lead model request ({path})",
         _delta(t_report, run.back.received_at)),
        ("SendMessage reply → lead request with the report", run.back.received_at - sent_at),
    ]  # fmt: skip
    how = "the lead's poller" if via_poller else "[lead] poll_grace typing into the lead's pane"
    print(f"\n[claude-330 mode A] team {lead.team}; the report reached the lead via {how}\n"
          f"{_fmt(hops)}")  # fmt: skip


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


# ---------------------------------------------------------------------------- (B)


LAUNCHER = """#!/bin/sh
# Gemini CLI for `exomonad teammate`: the offline env, plus what the teammate passes on.
exec env -i TERM="${{TERM:-xterm-256color}}" \\
  EXOMONAD_TOKEN="${{EXOMONAD_TOKEN}}" EXOMONAD_DIR="${{EXOMONAD_DIR}}" \\
  EXOMONAD_NAME="${{EXOMONAD_NAME}}" EXOMONAD_TEAM="${{EXOMONAD_TEAM}}" \\
  CLAUDE_CONFIG_DIR="${{CLAUDE_CONFIG_DIR}}" TMUX_PANE="${{TMUX_PANE}}" \\
  {assigns} {argv}
"""


def _write_gemini_launcher(home: GeminiHome, base_url: str) -> Path:
    """The `[[teammate.routes]] command`: Gemini's offline env (HOME with its settings,
    GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_CLI_TRUST_WORKSPACE, ...), nothing
    else from the pane but TERM and what `exomonad teammate` sets."""
    env = gemini_env(home, base_url)
    assigns = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))
    argv = " ".join(shlex.quote(a) for a in gemini_command(yolo=True))
    path = home.root / "gemini-teammate.sh"
    path.write_text(LAUNCHER.format(assigns=assigns, argv=argv), "utf-8")
    path.chmod(0o755)
    return path


class ScriptB:
    """Scripted lead for mode B, by the newest user turn (teammate messages and idle
    notifications may add turns at any time): spawn → Agent, nudge → SendMessage,
    stop → SendMessage(shutdown_request); any tool result → a short text."""

    def __init__(self, tag: str, task: str, followup: str) -> None:
        self.tag, self.task, self.followup = tag, task, followup
        self.spawn, self.nudge, self.stop = (f"spawn gemini-1 {tag}", f"nudge gemini-1 {tag}",
                                             f"stop gemini-1 {tag}")  # fmt: skip
        self.marks: dict[str, float] = {}

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        names = [n for n, _ in req.newest_tool_results()]
        if names:
            return f"{names[0]} done {self.tag}"
        last = "\n".join(req.last_user_texts())
        if self.spawn in last:
            self.marks["agent"] = time.monotonic()
            args = {"description": "gemini worker", "prompt": self.task, "name": WORKER,
                    "subagent_type": "gemini-worker"}  # fmt: skip
            return tool_reply("Agent", args)
        if self.nudge in last:
            self.marks["send_message"] = time.monotonic()
            return tool_reply("SendMessage", {"to": WORKER, "summary": f"more {self.tag}",
                                              "message": self.followup})  # fmt: skip
        if self.stop in last:
            self.marks["shutdown"] = time.monotonic()
            stop = {"type": "shutdown_request", "reason": f"all done {self.tag}"}
            return tool_reply("SendMessage", {"to": WORKER, "message": stop})
        return None


def _approvals(paths: TeamPaths) -> list[ShutdownApproved]:
    out = []
    for e in Mailbox(paths).read_raw(LEAD):
        msg = decode(str(e.get("text", "")))
        if isinstance(msg, ShutdownApproved):
            out.append(msg)
    return out


@dataclass
class Spawned:
    entered: float
    worker_pane: str  # the pane Claude Code split for the teammate
    teammate_pid: int
    teammate_argv: list[str]
    gemini_pids: list[int]
    g1: GeminiRequest  # Gemini's turn with the spawn prompt


def _spawn_b(project: Project, lead: Lead, model: ScriptedClaude, gemini: ScriptedGemini,
             script: ScriptB) -> Spawned:  # fmt: skip
    """Agent → a split pane running `exomonad teammate` → Gemini ← the spawn prompt."""
    agent_id = f"{WORKER}@{lead.team}"
    entered = lead.pane.type_message(script.spawn)
    spawned = model.wait_for_request(_last_tool("Agent"), STEP)
    result = dict(spawned.newest_tool_results())["Agent"]
    assert "Spawned successfully" in result, result
    member = project.members(lead.team)[WORKER]  # Claude Code registers it itself
    assert (member["backendType"], member["agentType"]) == ("tmux", "gemini-worker"), member
    typed = f"[from {LEAD}] {script.task}"
    g1 = gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), READY)
    assert "mcp_exo_notify_parent" in g1.tool_names(), sorted(g1.tool_names())
    pid = _find_teammate(agent_id)
    assert pid is not None, f"no `exomonad teammate ... {agent_id}` process"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")
    assert argv[1] == str(VENV_BIN / "exomonad-teammate"), argv  # the console script, on PATH
    assert argv[argv.index("--agent-type") + 1] == "gemini-worker", argv
    assert argv[argv.index("--team-name") + 1] == lead.team, argv
    children = _proc_children(pid)
    assert children, "exomonad teammate runs no child (Gemini)"
    lead.pane.wait_for_text(f"Agent done {script.tag}", STEP)
    return Spawned(entered, member["tmuxPaneId"], pid, argv, children, g1)


@dataclass
class Talked:
    entered: float
    g2: GeminiRequest  # Gemini's turn with the follow-up (answered with notify_parent)
    back: RecordedRequest  # the lead's turn with the <teammate-message>
    g3: GeminiRequest  # Gemini's turn with the functionResponse


def _talk_b(lead: Lead, model: ScriptedClaude, gemini: ScriptedGemini, script: ScriptB,
            spawned: Spawned, report: str) -> Talked:  # fmt: skip
    """SendMessage → the teammate types it → notify_parent → the lead's poller."""
    since = model.next_index
    entered = lead.pane.type_message(script.nudge)
    model.wait_for_request(_last_tool("SendMessage"), STEP, since=since)
    typed = f"[from {LEAD}] {script.followup}"
    g2 = gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), STEP,
                                 since=spawned.g1.index + 1)  # fmt: skip
    back = model.wait_for_teammate_message(WORKER, report, STEP, since=since)
    [msg] = [m for m in back.teammate_messages() if m.teammate_id == WORKER and report in m.text]
    assert msg.text == f"[from: {WORKER}] success: {report}"
    assert msg.attrs.get("summary") == f"Agent update: {WORKER}"
    g3 = gemini.wait_for_request(lambda r: r.is_agent_turn and bool(r.function_responses()),
                                 STEP, since=g2.index + 1)  # fmt: skip
    retry_until(lambda: not _has_text(lead.paths.inbox(LEAD), report)(), timeout=STEP,
                message="the lead did not prune its inbox")  # fmt: skip
    lead.pane.wait_for_text("scripted default reply", STEP)
    return Talked(entered, g2, back, g3)


@dataclass
class Stopped:
    result: str  # SendMessage(shutdown_request)'s tool result
    approved: ShutdownApproved
    approved_at: float
    exited_at: float
    removed_at: float
    pane_closed_at: float | None  # None: the pane stayed


def _stop_b(project: Project, lead: Lead, model: ScriptedClaude, script: ScriptB,
            spawned: Spawned, probe: Probe) -> Stopped:  # fmt: skip
    """shutdown_request → shutdown_approved → Claude Code drops the member (and pane)."""
    seen: list[ShutdownApproved] = []

    def approved() -> bool:
        seen.extend(_approvals(lead.paths))
        return bool(seen)

    probe.watch("shutdown_approved", approved)
    probe.watch("member removed", lambda: WORKER not in project.members(lead.team))
    probe.watch(
        "pane closed", lambda: spawned.worker_pane not in {p["id"] for p in project.tmux.panes()}
    )
    since = model.next_index
    lead.pane.type_message(script.stop)
    stopped = model.wait_for_request(_last_tool("SendMessage"), STEP, since=since)
    result = dict(stopped.newest_tool_results())["SendMessage"]
    assert f"Shutdown request sent to {WORKER}" in result, result
    approved_at = probe.at("shutdown_approved")
    retry_until(lambda: not pid_alive(spawned.teammate_pid), timeout=STEP,
                message="exomonad teammate did not exit")  # fmt: skip
    exited_at = time.monotonic()
    removed_at = probe.at("member removed")
    with contextlib.suppress(WaitTimeout):
        probe.at("pane closed", timeout=15)
    return Stopped(result, seen[0], approved_at, exited_at, removed_at,
                   probe.seen.get("pane closed"))  # fmt: skip


def test_mode_b_teammate_command_runs_gemini(project: Project, tmp_path: Path) -> None:
    _require_installed()
    # `init` made CLAUDE_CODE_TEAMMATE_COMMAND one program (Claude Code runs the value as
    # a single shell word): the `exomonad-teammate` console script, found on PATH.
    assert not (project.state / "bin").exists()
    settings = json.loads((project.workspace / ".claude" / "settings.json").read_text("utf-8"))
    assert settings["env"]["CLAUDE_CODE_TEAMMATE_COMMAND"] == "exomonad-teammate"
    tag = os.urandom(4).hex()
    task, followup = f"port the lexer {tag}", f"also port the parser {tag}"
    report = f"lexer and parser ported {tag}"
    script = ScriptB(tag, task, followup)
    with (
        ScriptedClaude(responder=script) as model,
        ScriptedGemini() as gemini,
        Probe() as probe,
        _diagnosed(project, model, gemini),
    ):
        launcher = _write_gemini_launcher(prepare_gemini_home(tmp_path / "gem"), gemini.url)
        # poll_grace far beyond the poller's 1 s: a fallback here would mean no poller.
        project.configure(
            '[lead]\npoll_grace = 20.0\n\n[[teammate.routes]]\nagent_type = "gemini*"\n'
            f'runtime = "gemini"\ncommand = {json.dumps(str(launcher))}\n'
        )
        project.start_server()
        gemini.add_text(f"started {tag}")
        gemini.add_function_call("mcp_exo_notify_parent", {"status": "success",
                                                           "message": report})  # fmt: skip
        gemini.add_text(f"reported {tag}")
        lead = _start_lead(project, model, probe)
        probe.watch("teammate process", lambda: _find_teammate(f"{WORKER}@{lead.team}") is not None)
        probe.watch("report in lead inbox", _has_text(lead.paths.inbox(LEAD), report))
        probe.watch("followup in worker inbox", _has_text(lead.paths.inbox(WORKER), followup))
        spawned = _spawn_b(project, lead, model, gemini, script)
        # The teammate runs Gemini in the worker's own worktree, on its own branch.
        worktree = project.workspace / ".worktrees" / WORKER
        assert {os.readlink(f"/proc/{p}/cwd") for p in spawned.gemini_pids
                if pid_alive(p)} == {str(worktree)}  # fmt: skip
        assert git(worktree, "branch", "--show-current").strip() == f"exo/{WORKER}"
        talked = _talk_b(lead, model, gemini, script, spawned, report)
        stopped = _stop_b(project, lead, model, script, spawned, probe)
        counters = project.status()["counters"]

        ok = stopped.approved
        assert (ok.from_, ok.pane_id, ok.backend_type) == (WORKER, spawned.worker_pane, "tmux")
        assert ok.request_id in stopped.result  # Claude Code's own request id, echoed
        assert not [p for p in spawned.gemini_pids if pid_alive(p)], "Gemini outlived its teammate"
        assert WORKER not in project.members(lead.team)  # no ghost member
        assert not worktree.exists()  # nothing in it to lose: removed on shutdown
        assert counters.get("lead_pane_fallback", 0) == 0, counters  # the poller delivered
        assert counters["tool:notify_parent"] == 1, counters
        for text in (task, followup):  # each typed exactly once
            assert sum(f"[from {LEAD}] {text}" in t for t in talked.g3.user_texts()) == 1
        assert not [e for e in _inbox(lead.paths.inbox(WORKER)) if not e.get("read")]
        seen_by_lead = sorted({m.text[:60] for r in model.agent_requests()
                               for m in r.teammate_messages()})  # fmt: skip

    _report_b(lead, script, spawned, talked, stopped, probe, seen_by_lead)


def _report_b(lead: Lead, script: ScriptB, spawned: Spawned, talked: Talked, stopped: Stopped,
              probe: Probe, seen_by_lead: list[str]) -> None:  # fmt: skip
    marks = script.marks
    t_proc = probe.seen.get("teammate process")
    t_follow = probe.seen.get("followup in worker inbox")
    t_report = probe.seen.get("report in lead inbox")
    hops = [
        ("claude launch → prompt ready", lead.pane.ready_after),
        ("claude launch → server adopted the session team", lead.adopted_after),
        ("lead Enter → Agent tool_use reply", marks["agent"] - spawned.entered),
        ("Agent reply → exomonad teammate process seen", _delta(marks["agent"], t_proc)),
        ("Agent reply → Gemini request with the spawn prompt",
         spawned.g1.received_at - marks["agent"]),
        ("lead Enter → SendMessage tool_use reply", marks["send_message"] - talked.entered),
        ("SendMessage reply → worker inbox entry seen", _delta(marks["send_message"], t_follow)),
        ("worker inbox entry → Gemini request (exomonad teammate)",
         _delta(t_follow, talked.g2.received_at)),
        ("notify_parent functionCall reply → lead inbox entry",
         _delta(talked.g2.received_at, t_report)),
        ("lead inbox entry → lead request with <teammate-message>",
         _delta(t_report, talked.back.received_at)),
        ("shutdown SendMessage reply → shutdown_approved in lead inbox",
         stopped.approved_at - marks["shutdown"]),
        ("shutdown SendMessage reply → teammate exited", stopped.exited_at - marks["shutdown"]),
        ("shutdown_approved → member removed from config.json",
         stopped.removed_at - stopped.approved_at),
        ("shutdown_approved → teammate pane closed",
         _delta(stopped.approved_at, stopped.pane_closed_at)),
    ]  # fmt: skip
    pane = "closed" if stopped.pane_closed_at is not None else "left open"
    print(f"\n[claude-330 mode B] team {lead.team}; teammate argv "
          f"{shlex.join(spawned.teammate_argv[1:])}\n"
          f"  shutdown result: {stopped.result[:140]!r}; member removed, worker pane "
          f"{spawned.worker_pane} {pane} by Claude Code\n"
          f"  teammate messages the lead's model saw: {seen_by_lead}\n{_fmt(hops)}")  # fmt: skip
