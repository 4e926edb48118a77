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
server whose panes run teammates) has this checkout's shims of both first on PATH
(`exomonad.clis.launchers.write_shims`).

Latencies of every hop are printed (`-s`) for docs/performance.md. These tests never
skip: a missing CLI or tmux is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from exomonad.clis.env import VENV_BIN
from exomonad.clis.launchers import write_gemini_launcher
from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from exomonad.scripted.gemini import RecordedRequest as GeminiRequest
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.teams.protocol import ShutdownApproved
from exomonad.util.probe import Probe
from exomonad.util.waiting import WaitTimeout, retry_until
from tests.e2e.claude_cli import CLAUDE_330, tmux_install_problem
from tests.e2e.claude_team import (
    LEAD,
    READY,
    STEP,
    Lead,
    Project,
    approvals,
    delta,
    find_teammate,
    fmt_hops,
    has_text,
    inbox,
    last_tool,
    open_project,
    start_lead,
)
from tests.e2e.gemini_cli import (
    GeminiHome,
    GeminiPane,
    gemini_install_problem,
    start_gemini_in_tmux,
)
from tests.e2e.gemini_cli import prepare_home as prepare_gemini_home
from tests.e2e.harness import fail_if_missing, pid_alive
from tests.support.agents import proc_children
from tests.support.git import git

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WORKER = "gemini-1"


# ---------------------------------------------------------------------------- helpers


def _require_installed() -> None:
    """Fail (never skip) when a pinned CLI or tmux is missing; says how to fix it."""
    fail_if_missing(CLAUDE_330.install_problem, gemini_install_problem, tmux_install_problem)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """`exomonad init` on the lead's workspace (`tests.e2e.claude_team.open_project`)."""
    with open_project(tmp_path) as p:
        yield p


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
    sent = model.wait_for_request(last_tool("SendMessage"), STEP, since=first.index)
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
        lead = start_lead(project, model, probe)
        gpane = _start_roster_gemini(project, lead, gemini, tmp_path / "gem")
        probe.watch("task in worker inbox", has_text(lead.paths.inbox(WORKER), task))
        probe.watch("report in lead inbox", has_text(lead.paths.inbox(LEAD), report))
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
            assert not has_text(lead.paths.inbox(LEAD), report)()  # no second showing
        [answer] = [r for r in run.g2.function_responses()
                    if r.get("name") == "mcp_exo_notify_parent"]  # fmt: skip
        assert f"delivered to {LEAD}'s inbox" in json.dumps(answer.get("response")), answer
        assert (counters["delivered"], counters["notify_inbox"]) == (1, 1), counters
        assert counters["tool:notify_parent"] == 1, counters
        assert sum(f"[from {LEAD}] {task}" in t for t in run.g2.user_texts()) == 1  # typed once
        assert not inbox(lead.paths.inbox(WORKER))  # delivered and pruned
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
        ("SendMessage reply → worker inbox entry seen", delta(sent_at, t_task)),
        ("worker inbox entry → Gemini model request (watcher)",
         delta(t_task, run.g1.received_at)),
        ("SendMessage reply → Gemini model request", run.g1.received_at - sent_at),
        ("notify_parent functionCall reply → lead inbox entry",
         delta(run.g1.received_at, t_report)),
        (f"lead inbox entry → lead model request ({path})",
         delta(t_report, run.back.received_at)),
        ("SendMessage reply → lead request with the report", run.back.received_at - sent_at),
    ]  # fmt: skip
    how = "the lead's poller" if via_poller else "[lead] poll_grace typing into the lead's pane"
    print(f"\n[claude-330 mode A] team {lead.team}; the report reached the lead via {how}\n"
          f"{fmt_hops(hops)}")  # fmt: skip


# ---------------------------------------------------------------------------- (B)


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
    spawned = model.wait_for_request(last_tool("Agent"), STEP)
    result = dict(spawned.newest_tool_results())["Agent"]
    assert "Spawned successfully" in result, result
    member = project.members(lead.team)[WORKER]  # Claude Code registers it itself
    assert (member["backendType"], member["agentType"]) == ("tmux", "gemini-worker"), member
    typed = f"[from {LEAD}] {script.task}"
    g1 = gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), READY)
    assert "mcp_exo_notify_parent" in g1.tool_names(), sorted(g1.tool_names())
    pid = find_teammate(agent_id)
    assert pid is not None, f"no `exomonad teammate ... {agent_id}` process"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")
    assert argv[1] == str(VENV_BIN / "exomonad-teammate"), argv  # the console script, on PATH
    assert argv[argv.index("--agent-type") + 1] == "gemini-worker", argv
    assert argv[argv.index("--team-name") + 1] == lead.team, argv
    children = proc_children(pid)
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
    model.wait_for_request(last_tool("SendMessage"), STEP, since=since)
    typed = f"[from {LEAD}] {script.followup}"
    g2 = gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), STEP,
                                 since=spawned.g1.index + 1)  # fmt: skip
    back = model.wait_for_teammate_message(WORKER, report, STEP, since=since)
    [msg] = [m for m in back.teammate_messages() if m.teammate_id == WORKER and report in m.text]
    assert msg.text == f"[from: {WORKER}] success: {report}"
    assert msg.attrs.get("summary") == f"Agent update: {WORKER}"
    g3 = gemini.wait_for_request(lambda r: r.is_agent_turn and bool(r.function_responses()),
                                 STEP, since=g2.index + 1)  # fmt: skip
    retry_until(lambda: not has_text(lead.paths.inbox(LEAD), report)(), timeout=STEP,
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
        seen.extend(approvals(lead.paths))
        return bool(seen)

    probe.watch("shutdown_approved", approved)
    probe.watch("member removed", lambda: WORKER not in project.members(lead.team))
    probe.watch(
        "pane closed", lambda: spawned.worker_pane not in {p["id"] for p in project.tmux.panes()}
    )
    since = model.next_index
    lead.pane.type_message(script.stop)
    stopped = model.wait_for_request(last_tool("SendMessage"), STEP, since=since)
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
        launcher = write_gemini_launcher(
            prepare_gemini_home(tmp_path / "gem"), gemini.url, project.bin_dir
        )
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
        lead = start_lead(project, model, probe)
        probe.watch("teammate process", lambda: find_teammate(f"{WORKER}@{lead.team}") is not None)
        probe.watch("report in lead inbox", has_text(lead.paths.inbox(LEAD), report))
        probe.watch("followup in worker inbox", has_text(lead.paths.inbox(WORKER), followup))
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
        assert not [e for e in inbox(lead.paths.inbox(WORKER)) if not e.get("read")]
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
        ("Agent reply → exomonad teammate process seen", delta(marks["agent"], t_proc)),
        ("Agent reply → Gemini request with the spawn prompt",
         spawned.g1.received_at - marks["agent"]),
        ("lead Enter → SendMessage tool_use reply", marks["send_message"] - talked.entered),
        ("SendMessage reply → worker inbox entry seen", delta(marks["send_message"], t_follow)),
        ("worker inbox entry → Gemini request (exomonad teammate)",
         delta(t_follow, talked.g2.received_at)),
        ("notify_parent functionCall reply → lead inbox entry",
         delta(talked.g2.received_at, t_report)),
        ("lead inbox entry → lead request with <teammate-message>",
         delta(t_report, talked.back.received_at)),
        ("shutdown SendMessage reply → shutdown_approved in lead inbox",
         stopped.approved_at - marks["shutdown"]),
        ("shutdown SendMessage reply → teammate exited", stopped.exited_at - marks["shutdown"]),
        ("shutdown_approved → member removed from config.json",
         stopped.removed_at - stopped.approved_at),
        ("shutdown_approved → teammate pane closed",
         delta(stopped.approved_at, stopped.pane_closed_at)),
    ]  # fmt: skip
    pane = "closed" if stopped.pane_closed_at is not None else "left open"
    print(f"\n[claude-330 mode B] team {lead.team}; teammate argv "
          f"{shlex.join(spawned.teammate_argv[1:])}\n"
          f"  shutdown result: {stopped.result[:140]!r}; member removed, worker pane "
          f"{spawned.worker_pane} {pane} by Claude Code\n"
          f"  teammate messages the lead's model saw: {seen_by_lead}\n"
          f"{fmt_hops(hops)}")  # fmt: skip
