"""A real ``exomonad serve`` with its dashboard on a loopback port, and a scripted team.

``live``: the server (tmux backend, ``--dashboard-port 0``) after the lead's TeamCreate;
its URL is the one line ``serve`` printed. ``team``: three workers spawned by the lead
(``tests/support/reader.py`` in tmux panes, each in its worktree), then driven by real
hook processes and routes into known presence: ``w-busy`` active (a tool call),
``w-idle`` idle (its turn ended), ``w-done`` terminated (it gave its token back); and
a task the lead created, claimed by ``w-busy``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.client import ServerClient
from exomonad.server.pidfile import server_request
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until
from tests.e2e.harness import ExomonadServe
from tests.support.git import make_repo
from tests.support.tmux import READER, TmuxServer

TEAM = "proj"
#: Worker → the presence the ``team`` fixture puts it in.
PRESENCE = {"w-busy": "active", "w-idle": "idle", "w-done": "terminated"}
_URL = re.compile(r"dashboard: (http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/)")


@dataclass
class Live:
    """The running server and what a test needs to reach it."""

    root: Path  # CLAUDE_CONFIG_DIR
    state: Path
    env: dict[str, str]
    serve: ExomonadServe
    url: str  # the dashboard, with the token `serve` printed

    @property
    def token(self) -> str:
        """The dashboard token in :attr:`url`."""
        return self.url.rstrip("/").rsplit("/", 1)[1]

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self.url.rstrip("/").rsplit("/", 1)[0]

    def paths(self) -> TeamPaths:
        """The team's files."""
        return TeamPaths(TEAM, self.root)

    def lead(self) -> ServerClient:
        """The lead, from a person's process (this one) with the lead's token."""
        token = (self.state / "lead.token").read_text().strip()
        return ServerClient(self.state, token=token, timeout=120)

    def tokens(self) -> dict[str, str]:
        """Worker name → its token."""
        data: dict[str, Any] = orjson.loads((self.state / "tokens.json").read_bytes())
        return {v["name"]: t for t, v in data.items()}

    def unix(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request on the Unix socket from this (a person's) process."""
        return server_request(str(self.state / "server.sock"), method, path, body, timeout=60)

    def status(self) -> dict[str, Any]:
        """The dashboard's snapshot, read over the Unix socket."""
        code, doc = self.unix("GET", "/dashboard/api/status")
        assert code == 200, doc
        assert isinstance(doc, dict)
        return doc

    def hook(self, event: str, payload: dict[str, Any], token: str) -> subprocess.Popen[str]:
        """``exomonad hook EVENT`` (Claude Code's shape) as the worker holding ``token``;
        started, not waited for (an escalation blocks until answered)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "hook", event, "--runtime", "claude"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**self.env, "EXOMONAD_TOKEN": token},
        )  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(orjson.dumps(payload).decode())
        proc.stdin.close()
        proc.stdin = None  # sent whole: communicate() must not flush it again
        return proc


def _members(live: Live) -> dict[str, str]:
    [team] = [t for t in live.status()["teams"] if t["name"] == TEAM]
    return {m["name"]: m["presence"] for m in team.get("members", [])}


@pytest.fixture
def live(tmp_path: Path, tmux_server: TmuxServer, request: pytest.FixtureRequest
         ) -> Iterator[Live]:  # fmt: skip
    """The server; opened on ``--dashboard-port 0``, or with the param ``"config"`` on
    ``[dashboard] port = 0``."""
    by_config = getattr(request, "param", "flag") == "config"
    root, project = tmp_path / "claude", make_repo(tmp_path / "proj")
    state = project / ".exomonad"
    state.mkdir()
    (state / "config.toml").write_text(
        '[workers]\ntmux_session = "main"\nready_marker = "ready"\n'
        "allow_ungated = true\n"  # the reader is a terminal agent: no hooks of its own
        "[policy]\npopup = false\napproval_timeout = 240\n"
        + ("[dashboard]\nport = 0\n" if by_config else "")
    )
    create_team(TeamPaths(TEAM, root))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_ENTER_DELAY="0.01", EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    serve = ExomonadServe(state=state, env=env, tmux_socket=tmux_server.socket,
                          log_path=tmp_path / "serve.log",
                          args=[] if by_config else ["--dashboard-port", "0"])  # fmt: skip
    serve.start()
    try:
        retry_until(lambda: _URL.search(serve.log()) is not None, timeout=30,
                    message="serve printed no dashboard URL")  # fmt: skip
        match = _URL.search(serve.log())
        assert match is not None
        serve.lead_creates_team(TEAM)
        yield Live(root, state, env, serve, match.group(1))
    finally:
        serve.stop()


@pytest.fixture
def team(live: Live) -> Live:
    out = live.state.parent.parent
    workers = [{"name": name, "task": f"start on {name}", "runtime": "terminal",
                "command": f"{sys.executable} {READER} {out}/{name}.jsonl"}
               for name in PRESENCE if name != "w-done"]  # fmt: skip
    lead = live.lead()
    lead.tool("spawn_workers", {"workers": workers})
    # w-done is an `exomonad teammate`'s worker (this process plays the teammate, which
    # alone may give its token back): a member of the team, then released below.
    done = {"name": "w-done", "team": TEAM, "runtime": "terminal", "pid": os.getpid()}
    lead.call("POST", "/teammate/token", done)
    register_synthetic(TeamPaths(TEAM, live.root), "w-done", agent_type="terminal")
    task = lead.tool("task_create", {"subject": "write the parser"})
    tokens = live.tokens()
    ServerClient(live.state, token=tokens["w-busy"]).tool("task_claim", {"task_id": task["id"]})
    cwd = str(live.state.parent)
    busy = live.hook("pre-tool-use", {"session_id": "s-busy", "tool_name": "Read", "cwd": cwd,
                                      "tool_input": {"file_path": "README.md"}},
                     tokens["w-busy"])  # fmt: skip
    idle = live.hook("stop", {"session_id": "s-idle", "stop_hook_active": False, "cwd": cwd},
                     tokens["w-idle"])  # fmt: skip
    for proc in (busy, idle):
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    ServerClient(live.state, token=tokens["w-done"]).call("POST", "/teammate/release", {})
    retry_until(lambda: PRESENCE.items() <= _members(live).items(), timeout=60,
                message=f"presence never became {PRESENCE}")  # fmt: skip
    return live
