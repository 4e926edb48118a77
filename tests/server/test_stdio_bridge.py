"""`exomonad mcp-stdio` as an agent's MCP server while the project's server is killed and
started again.

Regression (found by the fault-injection test): a tool call in flight when the server was
SIGKILLed, or made while it was down, was never answered (the proxy dropped the
connection error), so the agent waited for its own time-out (Gemini CLI: 10 minutes);
the proxy then died with a traceback at the agent's next message, and after a restart
the agent had no ExoMonad tools until it restarted itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import orjson
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from exomonad.server.pidfile import server_request
from exomonad.teams import Mailbox, TeamPaths, create_team
from exomonad.util.waiting import retry_until
from tests.support.git import make_repo
from tests.support.tmux import TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

#: The agent's own time-out; every call here must be answered long before it.
CALL_TIMEOUT = 120.0


class Project:
    """A scratch project whose server the test kills and starts again."""

    def __init__(self, tmp: Path, tmux: TmuxServer) -> None:
        self.tmux = tmux
        self.root, self.state = tmp / "claude", tmp / "proj" / ".exomonad"
        make_repo(tmp / "proj")
        self.state.mkdir(parents=True)
        # A worker that never shows its ready marker: spawn_workers waits for it (a call
        # that stays in flight on the server for as long as the test needs).
        (self.state / "config.toml").write_text(
            '[workers]\ncommand = "sleep 600"\ntmux_session = "main"\nworktree = false\n'
            'ready_marker = "never shown"\nready_timeout = 600\n'
        )
        create_team(TeamPaths("proj", self.root))
        env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
        env.update(CLAUDE_CONFIG_DIR=str(self.root), EXOMONAD_DIR=str(self.state))
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", self.tmux.socket],
            env=self.env,
            stderr=subprocess.DEVNULL,
        )
        proc = self.proc

        def up() -> bool:
            assert proc.poll() is None, "exomonad serve exited"
            try:
                _, health = server_request(str(self.state / "server.sock"), "GET", "/health")
            except Exception:
                return False
            return bool(health["pid"] == proc.pid)

        retry_until(up, timeout=60, interval=0.05, message="the server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def token(self, name: str) -> str:
        status, answer = server_request(
            str(self.state / "server.sock"),
            "POST",
            "/teammate/token",
            {"name": name, "team": "proj"},
        )
        assert status == 200, answer
        return str(answer["token"])

    def agent(self, token: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "exomonad", "mcp-stdio"],
            env={**self.env, "EXOMONAD_TOKEN": token},
        )


@pytest.fixture
def project(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Project]:
    p = Project(tmp_path, tmux_server)
    p.start()
    created = {
        "session_id": "lead-1",
        "tool_name": "TeamCreate",
        "tool_input": {"team_name": "proj"},
    }  # the lead's team, as its hook reports it
    done = subprocess.run(
        [sys.executable, "-m", "exomonad", "hook", "post-tool-use"],
        input=orjson.dumps(created),
        env=p.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    yield p
    if p.proc is not None and p.proc.poll() is None:
        p.proc.send_signal(signal.SIGTERM)
        p.proc.wait(30)


async def _error_of(session: ClientSession, tool: str, args: dict[str, object]) -> str:
    """The JSON-RPC error a call is answered with (a result instead fails the test)."""
    try:
        result = await session.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT)
    except MCPError as exc:
        return str(exc)
    raise AssertionError(f"{tool} answered instead of failing: {result.content}")


def test_a_killed_server_fails_calls_at_once_and_its_restart_keeps_the_session(
    project: Project,
) -> None:
    lead = (project.state / "lead.token").read_text().strip()
    worker = project.token("w1")
    lead_inbox = TeamPaths("proj", project.root)

    async def main() -> None:
        async with (
            stdio_client(project.agent(lead)) as (lr, lw),
            ClientSession(lr, lw) as boss,
            stdio_client(project.agent(worker)) as (wr, ww),
            ClientSession(wr, ww) as agent,
        ):
            await boss.initialize()
            await agent.initialize()
            ok = await agent.call_tool("notify_parent", {"status": "success", "message": "one"})
            assert not ok.is_error, ok.content
            async with anyio.create_task_group() as tg:
                errors: list[str] = []

                async def spawn() -> None:  # stays in flight: the worker never gets ready
                    errors.append(
                        await _error_of(boss, "spawn_workers", {"workers": [{"name": "slow"}]})
                    )

                tg.start_soon(spawn)
                await anyio.to_thread.run_sync(
                    lambda: retry_until(
                        lambda: (
                            "slow"
                            in project.tmux.tmux(
                                "list-windows", "-a", "-F", "#{window_name}"
                            ).split()
                        ),
                        timeout=60,
                        message="the worker pane did not open",
                    )
                )
                project.kill()  # while spawn_workers waits for the worker, server-side
            [in_flight] = errors
            assert "stopped before it answered" in in_flight, in_flight
            down = await _error_of(agent, "notify_parent", {"status": "success", "message": "two"})
            assert "no ExoMonad server is running" in down, down
            await anyio.to_thread.run_sync(project.start)
            # The same sessions go on with the restarted server: no reconnect by the agent.
            again = await agent.call_tool("notify_parent", {"status": "success", "message": "3"})
            assert not again.is_error, again.content
            status = await boss.call_tool("team_status", {})
            assert not status.is_error, status.content

    anyio.run(main)
    texts = [e["text"] for e in Mailbox(lead_inbox).read_raw("team-lead")]
    assert texts == ["[from: w1] success: one", "[from: w1] success: 3"]


def test_sessions_that_end_print_no_traceback(project: Project, tmp_path: Path) -> None:
    """Regression (issue 12: `make demo` printed `Exception in callback
    Future.set_result(None)` / `InvalidStateError` at random): the proxy, then on anyio's
    Unix socket streams, cancelled its reads of the server's answers each time a client
    finished, and anyio 4.16 completes such a read's future from the event loop's reader
    callback without checking that it was cancelled in that same loop iteration (the
    server closing the session is what makes the socket readable just then). In the old
    demo about one session in three ended with that traceback on the agent's stderr; the
    proxy now speaks HTTP on the standard library (`exomonad.server.stdio_proxy`). Each
    session here is an agent's whole life: handshake, tools, a call, stdin closed."""
    lead = (project.state / "lead.token").read_text().strip()
    logs = [tmp_path / f"stderr-{i}.txt" for i in range(12)]

    async def session(log: Path) -> None:
        with log.open("w") as errlog:
            async with (
                stdio_client(project.agent(lead), errlog=errlog) as (r, w),
                ClientSession(r, w) as lead_session,
            ):
                await lead_session.initialize()
                assert "team_status" in {t.name for t in (await lead_session.list_tools()).tools}
                status = await lead_session.call_tool("team_status", {})
                assert not status.is_error, status.content

    for log in logs:
        anyio.run(session, log)
    said = {log.name: log.read_text() for log in logs if log.read_text().strip()}
    assert said == {}, said  # not a traceback, not a word
