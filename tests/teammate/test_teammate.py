"""`exomonad teammate` as Claude Code runs it: in a pane, with Claude's arguments."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.panes.pty_agent import PtyAgent
from exomonad.server.config import ProjectConfig
from exomonad.teammate.run import _Protocol, parse_teammate_args
from exomonad.teams import Mailbox, TeamPaths, create_team
from exomonad.teams.models import message_identity, now_iso
from exomonad.teams.protocol import ShutdownApproved, ShutdownRequest, decode, encode
from exomonad.util.waiting import retry_until
from tests.support.git import git, make_repo
from tests.support.jsonl import whole_records
from tests.support.tmux import READER, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_parse_keeps_every_argument() -> None:
    argv = ["--agent-id", "g@team", "--agent-color", "blue", "--parent-session-id", "p",
            "--lead-verify-key", "k", "--dangerously-skip-permissions", "--model", "m"]  # fmt: skip
    a = parse_teammate_args(argv)
    assert (a.name, a.team, a.color, a.model, a.argv) == ("g", "team", "blue", "m", argv)


def test_routing_defaults() -> None:
    t = ProjectConfig().teammate
    assert t.route("gemini-worker", "x").runtime == "gemini"
    assert t.route(None, "gemini-2").runtime == "gemini"
    assert t.route("general-purpose", "researcher").runtime == "claude"


@pytest.fixture
def project(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    make_repo(tmp_path / "proj")
    state.mkdir(parents=True)
    out = tmp_path / "worker.jsonl"
    (state / "config.toml").write_text(
        "[workers]\nallow_ungated = true\n"
        '[[teammate.routes]]\nagent_type = "gemini*"\nruntime = "terminal"\n'
        f'command = "{sys.executable} {READER} {out}"\n'
    )
    paths = TeamPaths("session-abc", root)
    create_team(paths)
    # Claude Code registers the teammate itself (its own member, not a synthetic one).
    cfg = orjson.loads(paths.config_file.read_bytes())
    cfg["members"].append({"agentId": "gemini-1@session-abc", "name": "gemini-1",
                           "agentType": "gemini-worker", "backendType": "tmux",
                           "tmuxPaneId": "%9", "joinedAt": 1, "cwd": str(tmp_path)})  # fmt: skip
    paths.config_file.write_bytes(orjson.dumps(cfg))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state), EXOMONAD_ENTER_DELAY="0.01")
    server = subprocess.Popen([sys.executable, "-m", "exomonad", "serve"], env=env,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    retry_until((state / "server.sock").exists, timeout=30)
    yield root, out, env
    server.send_signal(signal.SIGTERM)
    server.wait(20)


def test_teammate_in_a_pane(project: tuple[Path, Path, dict[str, str]], tmux_server: TmuxServer,
                            tmp_path: Path) -> None:  # fmt: skip
    root, out, env = project
    paths = TeamPaths("session-abc", root)
    lead = Mailbox(paths)
    lead.send("gemini-1", sender="team-lead", text="spawn prompt: port the parser")
    args = ["--agent-id", "gemini-1@session-abc", "--agent-name", "gemini-1", "--team-name",
            "session-abc", "--agent-color", "blue", "--parent-session-id", "p1",
            "--agent-type", "gemini-worker", "--dangerously-skip-permissions"]  # fmt: skip
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()
                       if k.startswith(("CLAUDE_", "EXOMONAD_", "PYTHON", "PATH")))  # fmt: skip
    cmd = (f"cd {shlex.quote(str(tmp_path))} && env {exports} {shlex.quote(sys.executable)} "
           f"-m exomonad teammate {' '.join(args)}; echo exited-$?; sleep 60")  # fmt: skip
    pane = tmux_server.new_pane("sh", "-c", cmd)

    def lines() -> list[str]:
        return [r["line"] for r in whole_records(out) if "line" in r]

    retry_until(lambda: lines() == ["[from team-lead] spawn prompt: port the parser"],
                timeout=60, message=f"spawn prompt not typed: {lines()}")  # fmt: skip
    lead.send("gemini-1", sender="team-lead", text="and then the lexer")
    retry_until(lambda: len(lines()) == 2, timeout=30, message=f"{lines()}")
    assert lines()[1] == "[from team-lead] and then the lexer"
    # It runs in its own worktree, on its own branch, made from the lead's HEAD.
    worktree = tmp_path / "proj" / ".worktrees" / "gemini-1"
    [ready] = [r for r in whole_records(out) if "event" in r]
    assert ready["cwd"] == str(worktree)
    assert git(worktree, "branch", "--show-current").strip() == "exo/gemini-1"
    (worktree / "half-done.py").write_text("x = 1\n")  # work not committed yet
    # The token the server issued names the teammate, its team and its parent.
    # Shutdown: approved with the pane id, the worker stopped, the process exited.
    req = ShutdownRequest(request_id="shutdown-1@gemini-1", from_="team-lead",
                          timestamp=now_iso(), reason="done")  # fmt: skip
    lead.send("gemini-1", sender="team-lead", text=encode(req))

    def approved() -> list[ShutdownApproved]:
        found = [decode(e["text"]) for e in lead.read_raw("team-lead")]
        return [m for m in found if isinstance(m, ShutdownApproved)]

    retry_until(lambda: bool(approved()), timeout=30, message="no shutdown_approved")
    [ok] = approved()
    assert (ok.request_id, ok.from_, ok.backend_type) == ("shutdown-1@gemini-1", "gemini-1", "tmux")
    assert ok.pane_id == pane
    retry_until(lambda: "exited-" in tmux_server.tmux("capture-pane", "-p", "-t", pane),
                timeout=30, message="teammate did not exit")  # fmt: skip
    assert len(lines()) == 2  # the shutdown request was handled, not typed
    # Uncommitted work: the worktree is kept, and the lead is told where and why.
    assert (worktree / "half-done.py").read_text() == "x = 1\n"
    notes = [e["text"] for e in lead.read_raw("team-lead") if "shutting down" in e["text"]]
    assert notes == [f"[from: gemini-1] shutting down: kept worktree {worktree} "
                     "(exo/gemini-1): 1 uncommitted file(s): half-done.py"]  # fmt: skip


def test_shutdown_request_is_consumed_before_it_is_approved(tmp_path: Path) -> None:
    """On shutdown_approved Claude Code 2.1.330 kills the teammate's pane at once; a request
    still in the inbox then would stop the next teammate of that name."""
    paths = TeamPaths("t", tmp_path / "claude")
    create_team(paths)
    req = ShutdownRequest(request_id="shutdown-1@g", from_="team-lead", timestamp=now_iso(),
                          reason="done")  # fmt: skip
    Mailbox(paths).send("g", sender="team-lead", text=encode(req), check_member=False)
    [entry] = Mailbox(paths).read_raw("g")
    inbox_when_approved: list[list[dict[str, Any]]] = []
    events: list[str] = []

    class Spy(Mailbox):
        def send(self, to: str, **kw: Any) -> str:
            inbox_when_approved.append(self.read_raw("g"))
            events.append("send")
            return super().send(to, **kw)

    class Agent(PtyAgent):
        def terminate(self, grace: float = 5.0) -> None:
            events.append("terminate")

    def release() -> str:
        events.append("release")
        return "kept worktree /p/.worktrees/g (exo/g): 1 uncommitted file(s): a.py"

    ledger = SqliteLedger(tmp_path / "ledger.db")
    args = parse_teammate_args(["--agent-name", "g", "--team-name", "t"])
    protocol = _Protocol(args, Agent(["true"], env={}), Spy(paths), "team-lead", ledger, release)
    mid = message_identity(entry)
    ledger.begin("t", "g", mid)  # as the delivery pass does before it asks the intercept
    assert protocol(entry)
    # the agent stops, its worktree is given back, then the lead is told and approved
    assert events == ["terminate", "release", "send", "send"]
    assert inbox_when_approved == [[], []]  # pruned before the approval went out
    assert ledger.delivered("t", "g", [mid]) == {mid}
    note, approval = [e["text"] for e in Mailbox(paths).read_raw("team-lead")]
    assert "kept worktree /p/.worktrees/g" in note
    assert isinstance(decode(approval), ShutdownApproved)
    ledger.close()
