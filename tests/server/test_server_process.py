"""The real server process with real clients: the SDK over `exomonad mcp-stdio`, the hook
client, tmux panes, and the watcher typing a spawned worker's task into its pane."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent

from exomonad.client import ServerClient
from exomonad.policy.approvals import ApprovalStore
from exomonad.server.identity import Identity, TokenStore
from exomonad.server.pidfile import read_server_info
from exomonad.teams import Mailbox, TeamPaths, create_team, load_config, register_synthetic
from exomonad.util.waiting import retry_until
from tests.support.git import make_repo
from tests.support.tmux import READER, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@dataclass
class Project:
    root: Path
    state: Path
    env: dict[str, str]
    proc: subprocess.Popen[str]

    def tokens(self) -> dict[str, Any]:
        data: dict[str, Any] = orjson.loads((self.state / "tokens.json").read_bytes())
        return {v["name"]: t for t, v in data.items()}


def _env(root: Path, state: Path, tmux: TmuxServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_ENTER_DELAY="0.01", EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    return env


def _start(env: dict[str, str], tmux: TmuxServer) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", tmux.socket],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Project]:
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    make_repo(tmp_path / "proj")
    state.mkdir(parents=True)
    (state / "config.toml").write_text(
        f'[workers]\ncommand = "{sys.executable} {READER} {tmp_path}/worker.jsonl"\n'
        'tmux_session = "main"\nready_marker = "ready"\n'
        "allow_ungated = true\n"  # the terminal agent's test: consent to no hooks
    )
    create_team(TeamPaths("proj", root))
    env = _env(root, state, tmux_server)
    proc = _start(env, tmux_server)
    sock = state / "server.sock"
    retry_until(sock.exists, timeout=30, message="server did not start")
    p = Project(root, state, env, proc)
    _hook(p, "post-tool-use", {"session_id": "lead-1", "tool_name": "TeamCreate",
                               "tool_input": {"team_name": "proj"}}, token=None)  # fmt: skip
    yield p
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def _hook(
    p: Project, event: str, payload: dict[str, Any], *, token: str | None, runtime: str = "claude"
) -> subprocess.CompletedProcess[str]:
    env = dict(p.env)
    if token:
        env["EXOMONAD_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "exomonad", "hook", event, "--runtime", runtime],
        input=orjson.dumps(payload).decode(), env=env, capture_output=True, text=True, timeout=30,
        check=False,
    )  # fmt: skip


async def _session(
    p: Project,
    role: str,
    token: str | None,
    calls: list[tuple[str, Any]],
    *,
    as_program: str | None = None,
) -> tuple[list[str], list[tuple[bool, Any]]]:
    """An MCP session through `exomonad mcp-stdio` (run from below a process whose name
    is `as_program`, e.g. `claude`, when given)."""
    env = dict(p.env)
    if token:
        env["EXOMONAD_TOKEN"] = token
    if as_program is not None:
        inner = f"{sys.executable} -m exomonad mcp-stdio --role {role}; exit $?"
        params = StdioServerParameters(
            command="bash", args=["-c", f"exec -a {as_program} bash -c '{inner}'"], env=env
        )
    else:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "exomonad", "mcp-stdio", "--role", role], env=env
        )
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        tools = sorted(t.name for t in (await s.list_tools()).tools)
        results = []
        for name, args in calls:
            res = await s.call_tool(name, args)
            first = res.content[0]
            text = first.text if isinstance(first, TextContent) else repr(first)
            results.append((res.is_error, res.structured_content or text))
        return tools, results


def test_roles_tools_spawn_and_delivery(project: Project, tmux_server: TmuxServer) -> None:
    async def lead() -> tuple[list[str], list[tuple[bool, Any]]]:
        return await _session(project, "tl", None, [
            ("spawn_workers", {"workers": [{"name": "gemini-1", "task": "build the parser"}]}),
            ("task_create", {"subject": "parser"}),
        ], as_program="claude")  # fmt: skip

    async def forger() -> tuple[list[str], list[tuple[bool, Any]]]:
        return await _session(project, "tl", "exo_forged", [
            ("spawn_workers", {"workers": [{"name": "evil", "task": "x"}]}),
            ("team_status", {}),
        ])  # fmt: skip

    async def both() -> list[tuple[list[str], list[tuple[bool, Any]]]]:
        out: list[tuple[list[str], list[tuple[bool, Any]]]] = []

        async def run(f: Any) -> None:
            out.append(await f())

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, lead)
            tg.start_soon(run, forger)
        return out

    results = anyio.run(both)
    by_tools = {len(tools): (tools, res) for tools, res in results}
    lead_tools, lead_res = by_tools[max(by_tools)]
    forged_tools, forged_res = by_tools[min(by_tools)]
    assert "spawn_workers" in lead_tools
    assert forged_tools == ["task_get", "task_list", "team_status"]  # guest: the least role
    assert forged_res[0][0] is True
    assert "not available" in str(forged_res[0][1])
    assert forged_res[1][1]["you"] == "anonymous"
    assert lead_res[0][0] is False, lead_res
    pane = lead_res[0][1]["workers"][0]["pane"]
    # The server's watcher typed the task into the new worker's pane.
    out = project.root.parent / "worker.jsonl"
    retry_until(lambda: out.exists() and "build the parser" in out.read_text(), timeout=30,
                message="task never reached the worker pane")  # fmt: skip
    assert tmux_server.fmt(pane, "#{pane_id}") == pane

    token = project.tokens()["gemini-1"]
    worker_tools, worker_res = anyio.run(_session, project, "worker", token, [
        ("notify_parent", {"status": "success", "message": "parser done", "pr_number": 3}),
        ("task_claim", {"task_id": "1"}),
        ("spawn_workers", {"workers": [{"name": "x", "task": "y"}]}),
    ])  # fmt: skip
    assert "spawn_workers" not in worker_tools
    assert [err for err, _ in worker_res] == [False, False, True]
    inbox = Mailbox(TeamPaths("proj", project.root)).read_raw("team-lead")
    assert inbox[-1]["text"] == "[from: gemini-1] success (PR #3): parser done"

    # Hooks through the real client: the worker goes idle once → one idle notification.
    for _ in range(3):
        done = _hook(project, "after-agent", {"session_id": "w-1"}, token=token, runtime="gemini")
        assert done.returncode == 0, done.stderr
        assert orjson.loads(done.stdout) == {}
    idle = [e for e in Mailbox(TeamPaths("proj", project.root)).read_raw("team-lead")
            if '"idle_notification"' in e["text"]]  # fmt: skip
    assert len(idle) == 1


def test_single_instance_and_clean_shutdown(project: Project, tmux_server: TmuxServer) -> None:
    second = _start(project.env, tmux_server)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 1
    assert "already serves this project" in err
    info = read_server_info(project.state)
    assert info is not None
    assert info.pid == project.proc.pid
    project.proc.send_signal(signal.SIGTERM)
    _, err = project.proc.communicate(timeout=30)
    assert project.proc.returncode == 0, err
    assert not (project.state / "server.sock").exists()
    assert not (project.state / "server.pid").exists()


def test_what_start_up_built_is_left_out_of_full_collections(project: Project) -> None:
    """A full collection of the running server walks only what it made since start: the
    SDK's, pydantic's and the policy's objects are frozen (once walked every ~2 s under
    a full team, 70-100 ms each)."""
    found = ServerClient(project.state, timeout=30).health()["gc"]
    assert found["frozen"] > 50_000, found  # ~108,000 measured
    assert len(found["collections"]) == 3


def test_signals_repeated_during_shutdown_still_exit_cleanly(project: Project) -> None:
    """Measured: a second SIGTERM ~0.2 s after the first (uvicorn done, the process
    finishing its cleanup) killed the server with -15. A SIGTERM every 20 ms until it is
    gone must still end in exit 0 with the socket and pid file removed."""
    sent = 0
    while project.proc.poll() is None:
        project.proc.send_signal(signal.SIGTERM)
        sent += 1
        with contextlib.suppress(subprocess.TimeoutExpired):  # still running: again
            project.proc.wait(timeout=0.02)
    _, err = project.proc.communicate(timeout=30)
    assert sent > 1  # the shutdown took long enough to get more than one
    assert project.proc.returncode == 0, err
    assert not (project.state / "server.sock").exists()
    assert not (project.state / "server.pid").exists()


def test_hook_fails_open_without_a_server(project: Project) -> None:
    project.proc.send_signal(signal.SIGTERM)
    project.proc.communicate(timeout=30)
    done = _hook(project, "stop", {"session_id": "x"}, token=None)
    assert done.returncode == 0
    assert orjson.loads(done.stdout) == {}
    assert "no ExoMonad server is running" in done.stderr


def test_the_lead_role_cannot_be_taken_without_a_token(project: Project) -> None:
    """Measured (issue 10): `exomonad mcp-stdio --role tl` with no token, run by a worker,
    read `.exomonad/lead.token` and became the lead. Now only a process of the lead's
    Claude Code session gets the lead's token; anything else, an agent's included, is a
    guest."""
    guest = ["task_get", "task_list", "team_status"]
    tools, _ = anyio.run(_session, project, "tl", None, [])
    assert tools == guest  # from a plain process (here: the test)
    for agent in ("gemini", "codex"):
        tools, _ = anyio.run(functools.partial(_session, project, "tl", None, [],
                                               as_program=agent))  # fmt: skip
        assert tools == guest, agent
    tools, _ = anyio.run(lambda: _session(project, "tl", None, [], as_program="claude"))
    assert "answer_permission" in tools  # below the lead's Claude Code: the lead


def test_a_worker_that_reads_the_lead_token_is_a_guest(project: Project) -> None:
    """Measured (issue 10): code a worker runs can build the path of `.exomonad/lead.token`
    (`glob.glob('.e*/l*')`), read it, and act as the lead. Now the server asks the kernel
    who is connected (SO_PEERCRED): the lead's token counts only from a process in no
    other agent's session."""
    lead = (project.state / "lead.token").read_text().strip()
    guest = ["task_get", "task_list", "team_status"]
    for agent in ("gemini", "codex"):  # an agent's process, holding the lead's token
        tools, _ = anyio.run(functools.partial(_session, project, "tl", lead, [],
                                               as_program=agent))  # fmt: skip
        assert tools == guest, agent
    tools, _ = anyio.run(_session, project, "tl", lead, [])
    assert "answer_permission" in tools  # a person's process with the token: the lead
    # The plain JSON route, from code that carries a worker's identity in its environment.
    spawn = (
        "from exomonad.client import ServerClient; from pathlib import Path; import sys\n"
        "c = ServerClient(Path(sys.argv[1]), token=sys.argv[2], timeout=30)\n"
        "print(c.call('POST', '/tool/spawn_workers', {'workers': [{'name': 'evil'}]}))"
    )
    env = {**project.env, "EXOMONAD_TOKEN": "exo_a_worker"}
    done = subprocess.run([sys.executable, "-c", spawn, str(project.state), lead], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode != 0
    assert "not available to role 'guest'" in done.stderr, done.stderr
    assert not (project.state.parent / ".worktrees" / "evil").exists()
    counters = ServerClient(project.state, timeout=30).health()["counters"]
    assert counters["lead_token_refused"] >= 3  # each MCP session asks more than once


def test_a_terminal_agent_without_mcp_reports_with_exomonad_notify(
    project: Project, tmux_server: TmuxServer
) -> None:
    """The generic runtime: any program in a worker pane (here a plain shell loop, no
    hooks, no MCP) gets the lead's messages typed into it and answers with `exomonad
    notify`, as the worker its token names."""
    script = (
        f'echo ready; read -r line; {sys.executable} -m exomonad notify "got: $line"; sleep 600'
    )
    worker = {"name": "sh-1", "task": "count the files", "command": f"sh -c '{script}'"}
    _, res = anyio.run(lambda: _session(project, "tl", None, [
        ("spawn_workers", {"workers": [worker]})], as_program="claude"))  # fmt: skip
    assert res[0][0] is False, res
    box = Mailbox(TeamPaths("proj", project.root))
    member = load_config(TeamPaths("proj", project.root)).member("sh-1")
    assert member is not None
    assert member.agent_type == "terminal"  # no known program: the generic runtime

    def reports() -> list[dict[str, Any]]:
        return [e for e in box.read_raw("team-lead") if e.get("from") == "sh-1"]

    retry_until(lambda: bool(reports()), timeout=60, message="the shell's report reached the lead")
    [entry] = reports()
    assert entry["text"] == "[from: sh-1] success: got: [from team-lead] count the files"
    # Without a worker's token, the command refuses (a report must say who it is from).
    env = {k: v for k, v in project.env.items() if k != "EXOMONAD_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "exomonad", "notify", "hi"], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1
    assert "EXOMONAD_TOKEN is not set" in done.stderr


def test_bound_worker_receives_messages_from_the_lead(
    project: Project, tmux_server: TmuxServer
) -> None:
    reader = tmux_server.reader()
    register_synthetic(TeamPaths("proj", project.root), "w2", pane=reader.pane)
    _, res = anyio.run(lambda: _session(project, "tl", None, [
        ("send_message", {"to": "w2", "text": "hello w2"})], as_program="claude"))  # fmt: skip
    assert res[0][0] is False
    assert reader.wait_lines(1, timeout=30) == ["[from team-lead] hello w2"]


def test_a_symlinked_inboxes_dir_is_refused_and_the_server_keeps_delivering(
    project: Project, tmux_server: TmuxServer, tmp_path: Path
) -> None:
    """Issue 10: another team whose ``inboxes/`` is a symlink (here: to proj's inboxes)
    is reported in /health and never delivered from; the server keeps serving proj."""
    victim, reader = tmux_server.reader("victim"), tmux_server.reader()
    evil = TeamPaths("evil", project.root)
    create_team(evil)
    evil.inboxes_dir.rmdir()
    evil.inboxes_dir.symlink_to(TeamPaths("proj", project.root).inboxes_dir)
    register_synthetic(evil, "w2", pane=victim.pane)
    register_synthetic(TeamPaths("proj", project.root), "w2", pane=reader.pane)
    client = ServerClient(project.state)
    retry_until(lambda: str(evil.inboxes_dir) in client.health()["refused"], timeout=30,
                message="the symlinked inboxes dir was not reported")  # fmt: skip
    _, res = anyio.run(lambda: _session(project, "tl", None, [
        ("send_message", {"to": "w2", "text": "for proj's w2"})], as_program="claude"))  # fmt: skip
    assert res[0][0] is False
    assert reader.wait_lines(1, timeout=30) == ["[from team-lead] for proj's w2"]
    assert project.proc.poll() is None
    assert victim.lines() == []
    project.proc.send_signal(signal.SIGTERM)
    _, stderr = project.proc.communicate(timeout=30)
    assert "symlink" in stderr  # logged (Rich may wrap the line)


def test_without_a_server_pre_tool_use_still_denies_what_the_default_denies(
    project: Project,
) -> None:
    project.proc.send_signal(signal.SIGTERM)
    project.proc.communicate(timeout=30)
    push = {"session_id": "x", "tool_name": "run_shell_command",
            "tool_input": {"command": "git push --force origin main"}, "cwd": "/tmp"}  # fmt: skip
    done = _hook(project, "before-tool", push, token=None, runtime="gemini")
    assert done.returncode == 0
    answer = orjson.loads(done.stdout)
    assert answer["decision"] == "deny"
    assert "protected branch" in answer["reason"]
    ls = dict(push, tool_input={"command": "ls"})
    done = _hook(project, "before-tool", ls, token=None, runtime="gemini")
    assert orjson.loads(done.stdout) == {}  # not denied: fail open, and say so
    assert "fail-open" in done.stderr


def test_only_the_teammate_process_may_check_its_gate(project: Project) -> None:
    """The gate probe's routes answer only the process the worker's token was issued to
    (an `exomonad teammate`, by the kernel's peer credentials): the agent it runs, holding
    the same token, cannot fetch a probe and post it back through a hook itself."""
    anon = ServerClient(project.state, timeout=60)
    mate = anon.call("POST", "/teammate/token", {"name": "c1", "team": "proj",
                                                  "pid": os.getpid()})  # fmt: skip
    as_mate = ServerClient(project.state, token=mate["token"], timeout=60)
    status, probe = as_mate.request("POST", "/teammate/gate-probe")
    assert status == 200, probe
    assert probe["text"].startswith("ExoMonad gate check")
    # The agent: another process with the same token.
    ask = (
        "from exomonad.client import ServerClient; from pathlib import Path; import sys\n"
        "c = ServerClient(Path(sys.argv[1]), token=sys.argv[2], timeout=30)\n"
        "for path in ('/teammate/gate-probe', '/teammate/gate-live', '/teammate/mcp-ready'):\n"
        "    print(c.request('POST', path, {'timeout': 0, 'runtime': 'codex'})[0])"
    )
    done = subprocess.run([sys.executable, "-c", ask, str(project.state), mate["token"]],
                          env=project.env, capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == ["403", "403", "403"], done.stdout + done.stderr
    # A worker with no teammate process (spawned by the server) has no such routes.
    other = anon.call("POST", "/teammate/token", {"name": "c2", "team": "proj"})
    status, answer = ServerClient(project.state, token=other["token"]).request(
        "POST", "/teammate/gate-probe"
    )
    assert status == 403, answer
    assert "only the `exomonad teammate` process" in answer["error"]


def test_only_the_teammate_process_may_release_its_worker(project: Project) -> None:
    """Found probing from inside the sandbox: the agent's own code, holding the worker's
    token, called ``/teammate/release``; the server revoked the token and ran its git on
    the worktree while that code kept running and changing it (a race that ran the
    worker's program as the server and deleted files outside). Only the teammate process
    the token was issued to may release, and it stops the agent first."""
    anon = ServerClient(project.state, timeout=60)
    mate = anon.call("POST", "/teammate/token", {"name": "r1", "team": "proj",
                                                  "pid": os.getpid()})  # fmt: skip
    release = (
        "from exomonad.client import ServerClient; from pathlib import Path; import sys\n"
        "c = ServerClient(Path(sys.argv[1]), token=sys.argv[2], timeout=30)\n"
        "print(c.request('POST', '/teammate/release')[0])"
    )
    done = subprocess.run([sys.executable, "-c", release, str(project.state), mate["token"]],
                          env=project.env, capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == ["403"], done.stdout + done.stderr
    as_mate = ServerClient(project.state, token=mate["token"], timeout=60)
    status, probe = as_mate.request("POST", "/teammate/gate-probe")
    assert status == 200, probe  # the token still holds
    status, answer = as_mate.request("POST", "/teammate/release")
    assert status == 200, answer
    status, _ = as_mate.request("POST", "/teammate/gate-probe")
    assert status == 403  # released: the token is gone


def test_stopping_the_server_answers_a_waiting_escalation_instead_of_waiting_for_it(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    """Measured: with a worker's escalated call waiting for an answer, SIGTERM left
    `exomonad serve` running until the approval time-out (28 s of a 50 s one). Now the
    wait ends at once: the unattended Gemini worker's call is denied (never allowed),
    and the server exits 0 (the call is for a person: the lead may not allow it either)."""
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    make_repo(tmp_path / "proj")
    state.mkdir(parents=True)
    (state / "config.toml").write_text("[policy]\napproval_timeout = 3600\npopup = false\n")
    paths = TeamPaths("proj", root)
    create_team(paths)
    register_synthetic(paths, "w1")
    token = TokenStore(state).issue(Identity("w1", "worker", "proj", parent="team-lead"))
    env = _env(root, state, tmux_server)
    proc = _start(env, tmux_server)
    hook: subprocess.Popen[str] | None = None
    try:
        retry_until((state / "server.sock").exists, timeout=30, message="server did not start")
        payload = {"hook_event_name": "BeforeTool", "session_id": "g1",
                   "tool_name": "run_shell_command",
                   "tool_input": {"command": "git push origin HEAD:main"}}  # fmt: skip
        hook = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "hook", "before-tool", "--runtime", "gemini"],
            env={**env, "EXOMONAD_TOKEN": token}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert hook.stdin is not None
        hook.stdin.write(orjson.dumps(payload).decode())
        hook.stdin.close()
        approvals = ApprovalStore(state / "approvals.db")
        retry_until(lambda: bool(approvals.list_pending()) or hook.poll() is not None,
                    timeout=60, message="no escalation is waiting")  # fmt: skip
        assert [a.agent for a in approvals.list_pending()] == ["w1"]
        approvals.close()
        assert hook.poll() is None  # waiting for a person's answer
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        hook.wait(60)
        assert hook.stdout is not None
        answer = orjson.loads(hook.stdout.read())
        assert answer["decision"] == "deny"
        assert "the ExoMonad server stopped" in answer["reason"]
    finally:
        for p in (proc, hook):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(20)


def test_a_workers_code_gets_no_worker_token(project: Project) -> None:
    """Found probing (a fourth round): a worker's code posted to `/teammate/token` and got
    a `dev` token, and one for `team.lead` (the lead's inbox file). Now a process in an
    agent's session (here: it carries a worker's token, as a worker's shell does) is
    refused; outside one, only a plain worker reporting to the lead is issued, and the
    lead may still ask for any worker."""
    ask = (
        "from exomonad.client import ServerClient; from pathlib import Path; import sys\n"
        "c = ServerClient(Path(sys.argv[1]), timeout=30)\n"
        "print(c.request('POST', '/teammate/token', {'name': 'helper', 'team': 'proj'})[0])"
    )
    env = {**project.env, "EXOMONAD_TOKEN": "exo_not_the_lead"}
    done = subprocess.run([sys.executable, "-c", ask, str(project.state)], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == ["403"], done.stdout + done.stderr
    anon = ServerClient(project.state, timeout=60)
    for body in ({"name": "d1", "team": "proj", "role": "dev"},
                 {"name": "d2", "team": "proj", "parent": "w1"},
                 {"name": "team.lead", "team": "proj"}):  # fmt: skip
        status, answer = anon.request("POST", "/teammate/token", body)
        assert status == 403, (body, answer)
    assert "helper" not in project.tokens()
    assert "d1" not in project.tokens()
    lead = ServerClient.as_lead(project.state)
    assert lead.call("POST", "/teammate/token", {"name": "d3", "team": "proj", "role": "dev"})
    assert anon.call("POST", "/teammate/token", {"name": "c3", "team": "proj"})["token"]


def test_workers_reports_are_written_by_the_appender_process_which_ends_with_the_server(
    project: Project, tmux_server: TmuxServer
) -> None:
    """notify_parent through a real session: the first report starts the inbox appender
    (written by the server meanwhile), the next ones are written by it, each once; the
    server's SIGTERM ends it too."""
    project.proc.send_signal(signal.SIGTERM)  # tokens are read when the server starts
    project.proc.communicate(timeout=30)
    register_synthetic(TeamPaths("proj", project.root), "w1")
    token = TokenStore(project.state).issue(Identity("w1", "worker", "proj", "team-lead"))
    project.proc = _start(project.env, tmux_server)
    client = ServerClient(project.state, timeout=30)
    retry_until((project.state / "server.sock").exists, timeout=30)
    _hook(project, "post-tool-use", {"session_id": "lead-1", "tool_name": "TeamCreate",
                                     "tool_input": {"team_name": "proj"}}, token=None)  # fmt: skip

    def report(n: int) -> tuple[str, Any]:
        return ("notify_parent", {"status": "success", "message": f"step {n}"})

    _, first = anyio.run(_session, project, "worker", token, [report(0)])
    retry_until(lambda: client.health()["services"]["inbox_appender"]["running"], timeout=30,
                message="the appender never became ready")  # fmt: skip
    pid = client.health()["services"]["inbox_appender"]["pid"]
    _, rest = anyio.run(_session, project, "worker", token, [report(n) for n in range(1, 6)])
    assert [err for err, _ in first + rest] == [False] * 6, first + rest
    appender = client.health()["services"]["inbox_appender"]
    assert (appender["appended"], appender["by_the_server"]) == (5, 1)
    texts = [e["text"] for e in Mailbox(TeamPaths("proj", project.root)).read_raw("team-lead")]
    assert texts == [f"[from: w1] success: step {n}" for n in range(6)]
    project.proc.send_signal(signal.SIGTERM)
    _, err = project.proc.communicate(timeout=30)
    assert project.proc.returncode == 0, err
    assert not Path(f"/proc/{pid}").exists()  # ended and reaped by the server
