"""Real Claude Code 2.1.330 lead (interactive, in tmux) + the real ExoMonad server + the
real Codex CLI 0.169 (and Gemini CLI 0.61.0) as teammates, every model scripted.

The project is set up by `exomonad init --trust-codex-hooks` (the user's consent: the
server records trust of ExoMonad's own hooks for a Codex worker's checkout) and committed,
with a bare `origin`. The lead calls `Agent(name="codex-1", subagent_type="codex-worker")`;
Claude Code splits a pane and runs `exomonad-teammate` (CLAUDE_CODE_TEAMMATE_COMMAND),
which routes `codex*` to Codex: a worker token and worktree from the server (the hooks'
trust checked there for the CODEX_HOME the worker gets), Codex's TUI on a pty, the spawn
prompt typed once its composer shows. Asserted:

* the spawn prompt reaches Codex's model;
* Codex's `git push --force origin main` is blocked by the policy through its PreToolUse
  hook, the reason is the tool output Codex's model gets, and the bare remote's `main`
  is unmoved;
* Codex finds `notify_parent` through `tool_search`, calls it on the `exo` MCP server,
  and the lead's next model request carries it as a `<teammate-message>`;
* on the lead's shutdown_request: shutdown_approved, the member gone from config.json,
  no `exomonad-teammate`, Codex, MCP server or hook process left (/proc), the clean
  worktree removed;
* a mixed team: a Codex and a Gemini teammate under one lead both report back, and both
  leave nothing behind.

Codex shows its composer before its MCP servers are up, and a `tool_search` made then
finds no ExoMonad tool (`tools: []`; seen in 1 of 3 runs of the mixed team before the
fix). So the teammate types the task only once the agent's MCP client has reached the
server (`Runtime.waits_for_mcp`, `/teammate/mcp-ready`); in the mixed test,
`tool_search` is Codex's very first call.

Every `exomonad` here is this checkout's (`exomonad.clis.launchers.write_shims`); the test
checks the teammate's and Codex's environments to prove it. Hop latencies are printed
(`-s`). These tests never skip: a missing CLI or tmux is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from exomonad.clis.env import VENV_BIN
from exomonad.clis.launchers import SRC, write_gemini_launcher
from exomonad.runtimes.codex import WORKER_INSTRUCTIONS
from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.scripted.openai import ScriptedCodex, mcp_reply, shell_reply, tool_search_reply
from exomonad.server.gateprobe import PROBE_MARK
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
    find_teammate,
    fmt_hops,
    has_text,
    last_tool,
    open_project,
    start_lead,
    write_codex_launcher,
)
from tests.e2e.codex_cli import CodexHome, codex_install_problem, codex_processes, prepare_home
from tests.e2e.gemini_cli import gemini_install_problem
from tests.e2e.gemini_cli import prepare_home as prepare_gemini_home
from tests.e2e.harness import fail_if_missing, pid_alive
from tests.support.agents import proc_children
from tests.support.git import git

pytestmark = [pytest.mark.integration, pytest.mark.timeout(360)]

CODEX = "codex-1"
GEMINI = "gemini-1"
FORCE = "git commit -q --allow-empty -m evil && git push --force origin HEAD:main"
BLOCKED = ("Command blocked by PreToolUse hook: force push to a protected branch: "
           "git push --force origin main. Command: git commit")  # fmt: skip
POLICY = '[policy]\napproval_timeout = 3.0\non_timeout = "deny"\npopup = false\n'


@dataclass
class CodexProject:
    project: Project
    codex: ScriptedCodex
    home: CodexHome
    remote: Path

    def remote_main(self) -> list[str]:
        return git(self.remote, "log", "--format=%s", "main").split("\n")[:-1]


@pytest.fixture
def cproject(tmp_path: Path) -> Iterator[CodexProject]:
    """`exomonad init --trust-codex-hooks` (CODEX_HOME: an offline home on the scripted
    Responses server), committed and pushed to a bare `origin`."""
    fail_if_missing(CLAUDE_330.install_problem, codex_install_problem, tmux_install_problem)
    with ScriptedCodex() as codex:
        home = prepare_home(tmp_path / "codex", codex.base_url)
        env = {"CODEX_HOME": str(home.codex_home)}
        with open_project(tmp_path, init_args=["--trust-codex-hooks"], env=env) as p:
            remote = tmp_path / "remote.git"
            git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
            git(p.workspace, "remote", "add", "origin", str(remote))
            git(p.workspace, "push", "-q", "origin", "main")
            try:
                yield CodexProject(p, codex, home, remote)
            finally:
                p.tmux.kill()  # Claude Code, the teammates and Codex go with their panes
                retry_until(lambda: not codex_processes(home), timeout=STEP,
                            message="Codex processes outlived the test's tmux server")  # fmt: skip


def _route(agent_type: str, runtime: str, command: Path) -> str:
    return (f'[[teammate.routes]]\nagent_type = "{agent_type}"\nruntime = "{runtime}"\n'
            f"command = {json.dumps(str(command))}\n")  # fmt: skip


class LeadScript:
    """The lead, by the newest user turn: `spawn <name> <tag>` → Agent, `stop <name>
    <tag>` → SendMessage(shutdown_request); any tool result → a short text."""

    def __init__(self, tag: str, workers: dict[str, tuple[str, str]]) -> None:
        self.tag, self.workers = tag, workers  # name → (subagent_type, task)
        self.marks: dict[str, float] = {}

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        names = [n for n, _ in req.newest_tool_results()]
        if names:
            return f"{names[0]} done {self.tag}"
        last = "\n".join(req.last_user_texts())
        for name, (agent_type, task) in self.workers.items():
            if f"spawn {name} {self.tag}" in last:
                self.marks[f"agent {name}"] = time.monotonic()
                return tool_reply("Agent", {"description": f"{name} worker", "prompt": task,
                                            "name": name, "subagent_type": agent_type})  # fmt: skip
            if f"stop {name} {self.tag}" in last:
                self.marks[f"shutdown {name}"] = time.monotonic()
                stop = {"type": "shutdown_request", "reason": f"all done {self.tag}"}
                return tool_reply("SendMessage", {"to": name, "message": stop})
        return None


@dataclass
class Teammate:
    name: str
    pane: str  # the pane Claude Code split for it
    pid: int  # exomonad-teammate
    argv: list[str]
    children: list[int]  # the worker CLI (Codex / Gemini launcher)
    entered: float


def _spawn(p: Project, lead: Lead, model: ScriptedClaude, script: LeadScript,
           name: str) -> Teammate:  # fmt: skip
    """Agent → Claude Code splits a pane running `exomonad-teammate` for `name`."""
    since = model.next_index
    entered = lead.pane.type_message(f"spawn {name} {script.tag}")
    spawned = model.wait_for_request(last_tool("Agent"), STEP, since=since)
    result = dict(spawned.newest_tool_results())["Agent"]
    assert "Spawned successfully" in result, result
    agent_type = script.workers[name][0]
    member = p.members(lead.team)[name]  # Claude Code registers it itself
    assert (member["backendType"], member["agentType"]) == ("tmux", agent_type), member
    agent_id = f"{name}@{lead.team}"
    retry_until(lambda: find_teammate(agent_id) is not None, timeout=STEP,
                message=f"no `exomonad-teammate ... {agent_id}` process")  # fmt: skip
    pid = find_teammate(agent_id)
    assert pid is not None
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")
    assert argv[1] == str(VENV_BIN / "exomonad-teammate"), argv  # the console script...
    env = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
    assert f"PYTHONPATH={SRC}" in {e.split(os.pathsep)[0] for e in env}, "not this checkout"
    assert argv[argv.index("--agent-type") + 1] == agent_type, argv
    retry_until(lambda: bool(proc_children(pid)), timeout=READY,
                message=f"exomonad-teammate runs no child for {name}")  # fmt: skip
    children = proc_children(pid)
    lead.pane.wait_for_text(f"Agent done {script.tag}", STEP)
    return Teammate(name, member["tmuxPaneId"], pid, argv, children, entered)


def _live_children(mate: Teammate) -> list[int]:
    """The teammate's children that run now (its first child seen may have been a
    short-lived one)."""
    return [c for c in {*mate.children, *proc_children(mate.pid)} if pid_alive(c)]


def _stop(p: Project, lead: Lead, model: ScriptedClaude, script: LeadScript,
          mate: Teammate) -> tuple[ShutdownApproved, float]:  # fmt: skip
    """shutdown_request → shutdown_approved → the member, its process and pane gone;
    returns the approval and the seconds from the lead's SendMessage to the member gone."""
    since = model.next_index
    lead.pane.type_message(f"stop {mate.name} {script.tag}")
    stopped = model.wait_for_request(last_tool("SendMessage"), STEP, since=since)
    result = dict(stopped.newest_tool_results())["SendMessage"]
    assert f"Shutdown request sent to {mate.name}" in result, result
    mine: list[ShutdownApproved] = []

    def approved() -> bool:
        mine[:] = [a for a in approvals(lead.paths) if a.from_ == mate.name]
        return bool(mine)

    retry_until(approved, timeout=STEP, message=f"no shutdown_approved from {mate.name}")
    retry_until(lambda: mate.name not in p.members(lead.team), timeout=STEP,
                message=f"{mate.name} is still a member")  # fmt: skip
    gone = time.monotonic() - script.marks[f"shutdown {mate.name}"]
    retry_until(lambda: not pid_alive(mate.pid), timeout=STEP,
                message=f"exomonad-teammate of {mate.name} did not exit")  # fmt: skip
    retry_until(lambda: not _live_children(mate), timeout=STEP,
                message=f"the worker CLI of {mate.name} outlived its teammate")  # fmt: skip
    ok = mine[0]
    assert (ok.pane_id, ok.backend_type) == (mate.pane, "tmux"), ok
    assert ok.request_id in result  # Claude Code's own request id, echoed
    assert find_teammate(f"{mate.name}@{lead.team}") is None
    return ok, gone


def _dump(p: Project, model: ScriptedClaude, codex: ScriptedCodex,
          gemini: ScriptedGemini | None) -> str:  # fmt: skip
    panes = "\n".join(
        f"--- pane {x['id']} ({x['command']}, dead={x['dead']}) ---\n"
        + p.tmux.run("capture-pane", "-p", "-J", "-t", x["id"], check=False)
        for x in p.tmux.panes()
    )
    served = [(i, src, json.dumps(r.items)[:300]) for i, r, src in codex.served()]
    gem = gemini.describe() if gemini is not None else ""
    return (f"{panes}\n--- lead requests ---{model.describe()}\n--- codex ---"
            f"{codex.describe()}\nserved: {served}\n--- gemini ---{gem}\n"
            f"--- server log ---\n{p.server_log()}")  # fmt: skip


@contextlib.contextmanager
def _diagnosed(p: Project, model: ScriptedClaude, codex: ScriptedCodex,
               gemini: ScriptedGemini | None = None) -> Iterator[None]:  # fmt: skip
    try:
        yield
    except (TimeoutError, WaitTimeout, AssertionError) as e:
        pytest.fail(f"{e}\n{_dump(p, model, codex, gemini)}", pytrace=False)


def test_codex_teammate_of_a_claude_lead(cproject: CodexProject) -> None:
    p, codex, home = cproject.project, cproject.codex, cproject.home
    tag = os.urandom(4).hex()
    task, report = f"port the lexer {tag}", f"lexer ported, force push refused {tag}"
    note = {"status": "success", "message": report}
    force, search = shell_reply(FORCE), tool_search_reply("notify parent")
    notify = mcp_reply("exo", "notify_parent", note)
    for reply in (force, search, notify, f"reported {tag}"):
        codex.add_reply(reply)
    script = LeadScript(tag, {CODEX: ("codex-worker", task)})
    with (
        ScriptedClaude(responder=script) as model,
        Probe() as probe,
        _diagnosed(p, model, codex),
    ):
        p.configure(f"[lead]\npoll_grace = 20.0\n\n{POLICY}\n"
                    + _route("codex*", "codex", write_codex_launcher(home, p.bin_dir)))  # fmt: skip
        p.start_server()
        lead = start_lead(p, model, probe)
        probe.watch("report in lead inbox", has_text(lead.paths.inbox(LEAD), report))
        mate = _spawn(p, lead, model, script, CODEX)
        worktree = p.workspace / ".worktrees" / CODEX
        # The spawn prompt reaches Codex's model, typed by the teammate.
        typed = f"[from {LEAD}] {task}"
        c1 = codex.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), READY)
        # ...and the worker instructions (its worker command's developer_instructions)
        # tell its model how to report: notify_parent, found through tool_search.
        assert WORKER_INSTRUCTIONS in c1.developer_text(), c1.developer_text()[-800:]
        # Codex runs in the worker's worktree, with this checkout's `exomonad` on PATH.
        retry_until(lambda: len(_live_children(mate)) == 1, timeout=STEP,
                    message="one live child of the teammate (the Codex launcher)")  # fmt: skip
        [cpid] = _live_children(mate)
        assert os.readlink(f"/proc/{cpid}/cwd") == str(worktree)
        codex_env = Path(f"/proc/{cpid}/environ").read_bytes().decode().split("\0")
        assert f"PATH={p.bin_dir}" in {e.split(os.pathsep)[0] for e in codex_env}
        assert f"CODEX_HOME={home.codex_home}" in codex_env
        # The force push: blocked through Codex's PreToolUse hook, the reason to the model.
        [force_id] = force.call_ids()
        seen = codex.wait_for_output(force_id, STEP).output_text(force_id) or ""
        assert seen.startswith(BLOCKED), seen
        assert "evil" not in git(worktree, "log", "--format=%s")  # the command never ran
        assert cproject.remote_main() == ["exomonad init"]
        # notify_parent (found through tool_search) → the lead's next model request.
        back = model.wait_for_teammate_message(CODEX, report, STEP)
        [msg] = [m for m in back.teammate_messages() if m.teammate_id == CODEX and report in m.text]
        assert msg.text == f"[from: {CODEX}] success: {report}"
        [notify_id] = notify.call_ids()
        answer = codex.wait_for_output(notify_id, STEP).output_text(notify_id) or ""
        assert f"delivered to {LEAD}'s inbox" in answer, answer
        lead.pane.wait_for_text("scripted default reply", STEP)  # the lead answered it
        ok, gone = _stop(p, lead, model, script, mate)
        retry_until(lambda: not codex_processes(home), timeout=STEP,
                    message="Codex or its MCP server / hooks outlived the teammate")  # fmt: skip
        assert CODEX not in p.members(lead.team)
        assert not worktree.exists()  # nothing in it to lose: removed on shutdown
        assert cproject.remote_main() == ["exomonad init"]
        counters = p.status()["counters"]
        assert counters["tool:notify_parent"] == 1, counters
        assert counters.get("lead_pane_fallback", 0) == 0, counters  # the poller delivered
        assert sum(typed in t for t in codex.requests[-1].user_texts()) == 1  # typed once
        # The teammate proved Codex's gate live before the task: its probe came back
        # through Codex's own prompt hook and never reached the model.
        assert counters["gates_proven"] == 1, counters
        assert not any(PROBE_MARK in t for r in codex.requests for t in r.user_texts())

    t_report = probe.seen.get("report in lead inbox")
    agent_at = script.marks[f"agent {CODEX}"]
    print(f"\n[claude-330 + codex] team {lead.team}; {ok.from_} approved shutdown\n"
          + fmt_hops([
              ("claude launch → prompt ready", lead.pane.ready_after),
              ("Agent reply → Codex request with the spawn prompt", c1.received_at - agent_at),
              ("Agent reply → notify_parent in the lead's inbox",
               None if t_report is None else t_report - agent_at),
              ("Agent reply → lead request with <teammate-message>",
               back.received_at - agent_at),
              ("shutdown SendMessage reply → member removed", gone),
          ]))  # fmt: skip


def test_mixed_team_codex_and_gemini_report_to_one_lead(cproject: CodexProject,
                                                        tmp_path: Path) -> None:  # fmt: skip
    fail_if_missing(gemini_install_problem)
    p, codex, home = cproject.project, cproject.codex, cproject.home
    tag = os.urandom(4).hex()
    tasks = {CODEX: f"port the lexer {tag}", GEMINI: f"port the parser {tag}"}
    reports = {CODEX: f"lexer ported {tag}", GEMINI: f"parser ported {tag}"}
    # tool_search is Codex's very first call: the teammate types the task only once
    # Codex's `exo` MCP client has reached the server (see the module doc).
    search = tool_search_reply("notify parent")
    notify = mcp_reply("exo", "notify_parent", {"status": "success", "message": reports[CODEX]})
    for reply in (search, notify, f"codex reported {tag}"):
        codex.add_reply(reply)
    script = LeadScript(tag, {CODEX: ("codex-worker", tasks[CODEX]),
                              GEMINI: ("gemini-worker", tasks[GEMINI])})  # fmt: skip
    with (
        ScriptedClaude(responder=script) as model,
        ScriptedGemini() as gemini,
        Probe() as probe,
        _diagnosed(p, model, codex, gemini),
    ):
        gemini.add_function_call("mcp_exo_notify_parent", {"status": "success",
                                                           "message": reports[GEMINI]})  # fmt: skip
        gemini.add_text(f"gemini reported {tag}")
        gem = write_gemini_launcher(prepare_gemini_home(tmp_path / "gem"), gemini.url, p.bin_dir)
        p.configure(f"[lead]\npoll_grace = 20.0\n\n{POLICY}\n"
                    + _route("codex*", "codex", write_codex_launcher(home, p.bin_dir))
                    + _route("gemini*", "gemini", gem))  # fmt: skip
        p.start_server()
        lead = start_lead(p, model, probe)
        mates = [_spawn(p, lead, model, script, name) for name in (CODEX, GEMINI)]
        assert set(p.members(lead.team)) == {LEAD, CODEX, GEMINI}  # one team, one lead
        # Each worker's task reached its own model, typed by its own teammate.
        typed = {name: f"[from {LEAD}] {task}" for name, task in tasks.items()}
        codex.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed[CODEX]), READY)
        gemini.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed[GEMINI]), READY)
        # Both report back: each a <teammate-message> in a lead model request.
        backs = {name: model.wait_for_teammate_message(name, reports[name], STEP)
                 for name in (CODEX, GEMINI)}  # fmt: skip
        for name, back in backs.items():
            [msg] = [m for m in back.teammate_messages()
                     if m.teammate_id == name and reports[name] in m.text]  # fmt: skip
            assert msg.text == f"[from: {name}] success: {reports[name]}"
        gone = {mate.name: _stop(p, lead, model, script, mate)[1] for mate in mates}
        retry_until(lambda: not codex_processes(home), timeout=STEP,
                    message="Codex or its MCP server / hooks outlived the teammate")  # fmt: skip
        assert set(p.members(lead.team)) == {LEAD}
        assert not (p.workspace / ".worktrees" / CODEX).exists()
        assert not (p.workspace / ".worktrees" / GEMINI).exists()
        counters = p.status()["counters"]
        assert counters["tool:notify_parent"] == 2, counters
        assert counters.get("lead_pane_fallback", 0) == 0, counters

    hops: list[tuple[str, float | None]] = []
    print(f"\n[claude-330 mixed team] team {lead.team}: {CODEX} + {GEMINI}\n"
          + fmt_hops(hops + [(f"Agent reply → lead request with {name}'s <teammate-message>",
                       backs[name].received_at - script.marks[f"agent {name}"])
                      for name in (CODEX, GEMINI)]
                     + [(f"shutdown SendMessage reply → {name} removed", t)
                        for name, t in gone.items()]))  # fmt: skip


def test_codex_teammate_whose_hooks_do_not_run_is_refused_and_the_lead_told(
    cproject: CodexProject,
) -> None:
    """Trusted hooks that Codex does not run (`-c features.hooks=false` in the route's
    command): the teammate's gate check never comes back, so Codex is stopped before it
    reads its task, its worktree and token are given back, and the lead's next model
    request carries why and how to fix it."""
    p, codex, home = cproject.project, cproject.codex, cproject.home
    tag = os.urandom(4).hex()
    task = f"port the parser {tag}"
    codex.add_text("NO GATE")  # what a model told the probe answers
    script = LeadScript(tag, {CODEX: ("codex-worker", task)})
    launcher = write_codex_launcher(home, p.bin_dir, "-c", "features.hooks=false")
    with ScriptedClaude(responder=script) as model, Probe() as probe, _diagnosed(p, model, codex):
        p.configure(f"[lead]\npoll_grace = 20.0\n\n{POLICY}\n[teammate]\nready_timeout = 30.0\n"
                    + _route("codex*", "codex", launcher))  # fmt: skip
        p.start_server()
        lead = start_lead(p, model, probe)
        mate = _spawn(p, lead, model, script, CODEX)
        back = model.wait_for_teammate_message(CODEX, "not started", READY + STEP)
        [msg] = [m for m in back.teammate_messages() if "not started" in m.text]
        assert "ran none of ExoMonad's hooks" in msg.text, msg.text
        assert "features.hooks" in msg.text, msg.text  # how to fix it
        retry_until(lambda: not pid_alive(mate.pid), timeout=STEP,
                    message="the refused teammate did not exit")  # fmt: skip
        retry_until(lambda: not codex_processes(home), timeout=STEP,
                    message="the refused Codex outlived its teammate")  # fmt: skip
        seen = [t for r in codex.requests for t in r.user_texts()]
        assert any(PROBE_MARK in t for t in seen), seen  # the gate was really off...
        assert not any(task in t for t in seen), seen  # ...and the task never reached it
        assert not (p.workspace / ".worktrees" / CODEX).exists()
        counters = p.status()["counters"]
        assert counters.get("gates_proven", 0) == 0, counters
