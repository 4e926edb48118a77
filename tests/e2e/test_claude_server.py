"""Real Claude Code with the real ExoMonad server, its hooks and the lead relay.

* 2.1.112 headless: Claude Code's own SessionStart / PostToolUse / PreToolUse hooks call
  `exomonad hook`; TeamCreate registers the team with the server; SendMessage reaches a
  synthetic worker's inbox; the worker's `notify_parent` (SDK client over
  `exomonad mcp-stdio`) comes back through Claude Code's poller as a
  `<teammate-message>`; TeamDelete succeeds at once because the PreToolUse hook cleared
  our members first; a forced push to main in Bash is denied with the reason.
* 2.1.330 headless has no team and no poller: `exomonad relay` feeds it the lead inbox.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from exomonad.server.hooks import TEAM_CREATE_CONTEXT
from exomonad.server.identity import Identity, TokenStore
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until
from tests.e2e.claude_cli import (
    CLAUDE_112,
    CLAUDE_330,
    ClaudeHome,
    claude_command,
    claude_env,
    prepare_home,
    start_headless,
)
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(200)]

STEP = 45.0
HOOK = f"{sys.executable} -m exomonad hook"


def _hooks() -> dict[str, Any]:
    def entry(matcher: str, event: str) -> list[dict[str, Any]]:
        cmd = f"{HOOK} {event} --runtime claude"
        return [{"matcher": matcher, "hooks": [{"type": "command", "command": cmd,
                                                "timeout": 60}]}]  # fmt: skip

    return {
        "SessionStart": entry("", "session-start"),
        "PostToolUse": entry("TeamCreate|TeamDelete", "post-tool-use"),
        "PreToolUse": entry("TeamDelete|Bash", "pre-tool-use"),
    }


class Server:
    """`exomonad serve` for a project whose Claude config root is the test's."""

    def __init__(self, home: ClaudeHome, state: Path, dialect: str) -> None:
        self.state = state
        self.env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
        self.env.update(CLAUDE_CONFIG_DIR=str(home.config_dir), EXOMONAD_DIR=str(state),
                        EXOMONAD_CLAUDE_DIALECT=dialect)  # fmt: skip
        self.proc = subprocess.Popen([sys.executable, "-m", "exomonad", "serve"], env=self.env,
                                     stderr=subprocess.PIPE, text=True)  # fmt: skip
        retry_until((state / "server.sock").exists, timeout=30, message="server did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.communicate(timeout=20)


def _worker_token(state: Path, team: str) -> str:
    state.mkdir(parents=True, exist_ok=True)
    return TokenStore(state).issue(Identity("gemini-1", "worker", team, "team-lead"))


async def _notify(server: Server, token: str, message: str) -> Any:
    env = dict(server.env, EXOMONAD_TOKEN=token)
    args = ["-m", "exomonad", "mcp-stdio", "--role", "worker"]
    params = StdioServerParameters(command=sys.executable, env=env, args=args)
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        return await s.call_tool("notify_parent", {"status": "success", "message": message})


class Lead:
    """Scripted lead: TeamCreate → (gate) SendMessage → Bash push → TeamDelete."""

    def __init__(self, team: str, token: str) -> None:
        self.team, self.token = team, token
        self.created = threading.Event()
        self.registered = threading.Event()

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        names = [n for n, _ in req.newest_tool_results()]
        if names == ["TeamCreate"]:
            self.created.set()
            self.registered.wait(STEP)
            message = f"port the parser {self.token}"
            args = {"to": "gemini-1", "summary": "task", "message": message}
            return tool_reply("SendMessage", args)
        if any(m.teammate_id == "gemini-1" for m in req.teammate_messages()) and not names:
            return tool_reply("Bash", {"command": "git push --force origin main",
                                       "description": "push"})  # fmt: skip
        if names == ["Bash"]:
            return tool_reply("TeamDelete", {})
        return None


@pytest.fixture
def home(tmp_path: Path) -> ClaudeHome:
    return prepare_home(tmp_path, settings={"hooks": _hooks()})


def test_claude_112_lead_with_exomonad_server(home: ClaudeHome, tmp_path: Path) -> None:
    fail_if_missing(CLAUDE_112.install_problem)
    token = secrets.token_hex(4)
    team = f"exo-{token}"
    state = tmp_path / "proj" / ".exomonad"
    worker_token = _worker_token(state, team)
    server = Server(home, state, "2.1.112")
    lead = Lead(team, token)
    script: list[ReplySpec] = [tool_reply("TeamCreate", {"team_name": team,
                                                         "description": "e2e"})]  # fmt: skip
    env = {"EXOMONAD_DIR": str(state), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    try:
        with (
            ScriptedClaude(script, responder=lead) as model,
            start_headless(
                CLAUDE_112, home, model.url, prompt=f"lead {token}", extra_env=env
            ) as run,  # fmt: skip
        ):
            first = model.wait_for_request(lambda r: r.is_agent_turn, STEP)
            assert first.mentions(TEAM_CREATE_CONTEXT), "SessionStart context missing"
            assert lead.created.wait(STEP)
            paths = TeamPaths(team, home.config_dir)
            # The server learned the team from Claude Code's own PostToolUse hook.
            retry_until(lambda: (state / "teams.json").exists()
                        and team in (state / "teams.json").read_text(), timeout=STEP)  # fmt: skip
            register_synthetic(paths, "gemini-1")
            lead.registered.set()
            retry_until(lambda: paths.inbox("gemini-1").exists()
                        and token in paths.inbox("gemini-1").read_text(), timeout=STEP)  # fmt: skip
            since = model.next_index
            result = anyio.run(_notify, server, worker_token, f"parser ported {token}")
            assert not result.is_error, result
            got = model.wait_for_teammate_message("gemini-1", f"parser ported {token}", STEP,
                                                  since=since)  # fmt: skip
            assert f"[from: gemini-1] success: parser ported {token}" in got.last_user_texts()[0]
            # Bash `git push --force origin main`: denied by the policy through PreToolUse.
            denied = model.wait_for_request(
                lambda r: [n for n, _ in r.newest_tool_results()] == ["Bash"], STEP
            )
            bash_result = denied.newest_tool_results()[0][1]
            assert "force push to a protected branch" in bash_result, bash_result
            # TeamDelete succeeds at once: PreToolUse removed our member first.
            assert run.wait(STEP) == 0
            outcomes = [t for r in model.agent_requests() for n, t in r.newest_tool_results()
                        if n == "TeamDelete"]  # fmt: skip
            assert outcomes
            assert not any("Cannot cleanup" in t for t in outcomes), outcomes
            assert "Cleaned up" in outcomes[0]
    finally:
        server.stop()


def test_relay_feeds_a_headless_2_1_330_lead(tmp_path: Path) -> None:
    fail_if_missing(CLAUDE_330.install_problem)
    token = secrets.token_hex(4)
    home = prepare_home(tmp_path)
    team = f"relay-{token}"
    create_team(TeamPaths(team, home.config_dir))
    register_synthetic(TeamPaths(team, home.config_dir), "gemini-1")
    state = tmp_path / "proj" / ".exomonad"
    worker_token = _worker_token(state, team)
    server = Server(home, state, "2.1.330")
    try:
        with ScriptedClaude([f"ACK {token}"]) as model:
            argv = claude_command(CLAUDE_330, stream_input=True)
            env = claude_env(home, model.url) | {"EXOMONAD_DIR": str(state)}
            relay = subprocess.Popen(
                [sys.executable, "-m", "exomonad", "relay", "--team", team, "--", *argv],
                env=env, cwd=home.workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )  # fmt: skip
            try:
                result = anyio.run(_notify, server, worker_token, f"relay works {token}")
                assert not result.is_error, result
                got = model.wait_for_request(
                    lambda r: r.is_agent_turn and r.mentions(f"relay works {token}"), STEP
                )
                [msg] = got.teammate_messages()
                assert msg.teammate_id == "gemini-1"
                # rendered as Claude Code renders teammate messages, with the summary
                assert any('summary="Agent update: gemini-1"' in t for t in got.user_texts())
                assert len([r for r in model.agent_requests()
                            if r.mentions(f"relay works {token}")]) == 1  # fmt: skip
            finally:
                relay.send_signal(signal.SIGTERM)  # passed on to the lead
                relay.communicate(timeout=STEP)
    finally:
        server.stop()
