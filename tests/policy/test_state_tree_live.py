"""Live: a worker's ``grep -r token ../..`` really reads every worker's token, and the
real hook client, talking to a live ``exomonad serve`` with the worker's token, refuses it.

A scratch project (a git repository), the server, a worker spawned by the lead (its own
token, its worktree ``.worktrees/w1``, its branch), then Claude Code's PreToolUse hook
(``exomonad hook pre-tool-use``) as the worker would run it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exomonad.client import ServerClient
from exomonad.teams import TeamPaths, create_team
from exomonad.util.waiting import retry_until
from tests.support.git import make_repo
from tests.support.tmux import READER, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@dataclass
class Live:
    state: Path
    env: dict[str, str]

    def spawn_worker(self, name: str = "w1") -> tuple[str, Path]:
        """The lead spawns worker ``name``: its token and its worktree."""
        lead = ServerClient.as_lead(self.state, timeout=60)
        lead.call("POST", "/tool/spawn_workers", {"workers": [{"name": name, "task": "wait"}]})
        held = json.loads((self.state / "tokens.json").read_text())
        token, who = next((t, v) for t, v in held.items() if v["name"] == name)
        return token, Path(who["worktree"])

    def hook(self, command: str, *, token: str, cwd: Path) -> dict[str, Any]:
        """The hook client's answer for a Bash call (as Claude Code sends it)."""
        data = {"command": command, "description": "x"}
        answer: dict[str, Any] = self.tool("claude", "Bash", data, token=token,
                                           cwd=cwd)["hookSpecificOutput"]  # fmt: skip
        return answer

    def tool(self, runtime: str, name: str, data: dict[str, Any], *, token: str,
             cwd: Path) -> dict[str, Any]:  # fmt: skip
        """The hook client's whole answer for a tool call as ``runtime`` sends it."""
        event = "before-tool" if runtime == "gemini" else "pre-tool-use"
        payload = {"session_id": f"s-{token[-8:]}", "tool_name": name, "cwd": str(cwd),
                   "tool_input": data}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "exomonad", "hook", event, "--runtime", runtime],
            input=json.dumps(payload), env={**self.env, "EXOMONAD_TOKEN": token},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout or "{}")
        return answer


#: ``served``'s config for tests that need no one to approve an escalation.
QUICK_ESCALATIONS = "[policy]\napproval_timeout = 1\npopup = false\n"


@contextmanager
def served(tmp_path: Path, tmux_server: TmuxServer, config: str = "",
           home: Path | None = None, spool: Path | None = None) -> Iterator[Live]:  # fmt: skip
    """A real ``exomonad serve`` on a scratch project whose lead made team ``proj``;
    ``config``: more of ``.exomonad/config.toml`` (after ``[workers]``); ``home``: the
    ``$HOME`` of the server and the hook client (else the user's); ``spool``: its spool
    directory (else one in the state dir)."""
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    make_repo(tmp_path / "proj")
    state.mkdir()
    (state / "config.toml").write_text(
        f'[workers]\ncommand = "{sys.executable} {READER} {tmp_path}/worker.jsonl"\n'
        'tmux_session = "main"\nready_marker = "ready"\nallow_ungated = true\n' + config
    )
    create_team(TeamPaths("proj", root))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(spool or state / "spool"))  # fmt: skip
    if home is not None:
        env["HOME"] = str(home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", tmux_server.socket],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    retry_until((state / "server.sock").exists, timeout=30, message="server did not start")
    created = subprocess.run(
        [sys.executable, "-m", "exomonad", "hook", "post-tool-use", "--runtime", "claude"],
        input=json.dumps({"session_id": "lead-1", "tool_name": "TeamCreate",
                          "tool_input": {"team_name": "proj"}}),
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    try:
        yield Live(state, env)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


@pytest.fixture
def live(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Live]:
    with served(tmp_path, tmux_server) as running:
        yield running


def test_a_workers_recursive_grep_of_the_project_is_refused(live: Live) -> None:
    token, worktree = live.spawn_worker()
    assert worktree == live.state.parent / ".worktrees" / "w1"
    assert json.loads((live.state / "tokens.json").read_text())[token]["role"] == "worker"

    # What such a command does when run: every token in the project, the lead's included.
    leaked = subprocess.run(["grep", "-r", "exo_", "../.."], cwd=worktree,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert token in leaked.stdout

    for command in ("grep -r token ../..", "grep -r exo_ ../..", "rsync -a ../../ /tmp/copy/",
                    "tar cf - ../.. | tar xOf - | grep exo_", "cp -r ../.. /tmp/copy",
                    "find ../.. -name lead.token -exec cat {} +"):  # fmt: skip
        refused = live.hook(command, token=token, cwd=worktree)
        assert refused["permissionDecision"] == "deny", (command, refused)
        assert "directory tree holding ExoMonad's state" in refused["permissionDecisionReason"]

    (worktree / "notes.txt").write_text("foo in the worktree\n")
    local = subprocess.run(["grep", "-r", "foo", "."], cwd=worktree,
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert "notes.txt" in local.stdout
    assert token not in local.stdout  # the worktree does not hold the state dir
    allowed = live.hook("grep -r foo .", token=token, cwd=worktree)
    assert allowed["permissionDecision"] == "allow", allowed


def test_a_workers_shell_reads_of_credentials_and_other_agents_environments_are_refused(
    live: Live,
) -> None:
    """Measured: `cat /proc/PID/environ` of another worker's process printed its token,
    and `cat ~/.ssh/id_rsa` was allowed while the Read tool on it was denied. Now a shell
    reader's files are reads, judged by the same rules."""
    lead = ServerClient.as_lead(live.state, timeout=60)
    two = [{"name": "w1", "task": "wait"}, {"name": "w2", "task": "wait"}]
    lead.call("POST", "/tool/spawn_workers", {"workers": two})
    held = json.loads((live.state / "tokens.json").read_text())
    token = next(t for t, v in held.items() if v["name"] == "w1")
    other = next(t for t, v in held.items() if v["name"] == "w2")
    worktree = live.state.parent / ".worktrees" / "w1"
    # A process of w2's carries its token in its environment: what the command would print.
    sleeper = subprocess.Popen(["sleep", "600"], env={**live.env, "EXOMONAD_TOKEN": other})
    try:
        environ = f"/proc/{sleeper.pid}/environ"
        leaked = subprocess.run(["cat", environ], capture_output=True, check=False)
        assert other.encode() in leaked.stdout
        shown = subprocess.run(["ps", "eww", "-p", str(sleeper.pid)], capture_output=True,
                               text=True, check=False)  # fmt: skip
        assert other in shown.stdout  # ps's BSD option e prints environments
        for command in (
            "ps eww",
            f"ps e -p {sleeper.pid}",
            f"cat {environ}",
            f"strings {environ} | grep EXOMONAD",
            "sed -n p ~/.ssh/id_rsa",
            "grep -r KEY ~",
            f"while read -r l; do echo $l; done < {environ}",
        ):  # the server's HOME
            refused = live.hook(command, token=token, cwd=worktree)
            assert refused["permissionDecision"] == "deny", (command, refused)
            assert "reading credentials" in refused["permissionDecisionReason"]
        (worktree / "notes.txt").write_text("plain\n")
        for command in ("cat notes.txt", "grep plain notes.txt", f"cat /proc/{sleeper.pid}/status"):
            allowed = live.hook(command, token=token, cwd=worktree)
            assert allowed["permissionDecision"] == "allow", (command, allowed)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_gemini_or_codex_workers_decoy_arguments_are_judged(live: Live) -> None:
    """Measured: Gemini CLI 0.61's read_many_files reads ``include``, read_file
    ``file_path``; a decoy ``paths``/``absolute_path`` in the worktree was the one judged,
    and the call allowed; a Codex shell call's ``workdir`` was not read."""
    lead = ServerClient.as_lead(live.state, timeout=60)
    lead.call("POST", "/tool/spawn_workers", {"workers": [{"name": "w1", "task": "wait"}]})
    held = json.loads((live.state / "tokens.json").read_text())
    token = next(t for t, v in held.items() if v["name"] == "w1")
    worktree = live.state.parent / ".worktrees" / "w1"
    (worktree / "a.py").write_text("x = 1\n")
    secret = "../../.exomonad/lead.token"
    assert (worktree / secret).read_text().strip()  # what the include names: a token
    hostile: list[tuple[str, dict[str, Any]]] = [
        ("read_many_files", {"paths": ["a.py"], "include": [secret]}),
        ("read_file", {"absolute_path": str(worktree / "a.py"), "file_path": secret}),
        ("glob", {"pattern": "../../.exomonad/*"}),
    ]
    for tool, data in hostile:
        refused = live.tool("gemini", tool, data, token=token, cwd=worktree)
        assert refused["decision"] == "deny", (tool, refused)
    plain: list[tuple[str, dict[str, Any]]] = [
        ("read_many_files", {"include": ["a.py"]}),
        ("read_file", {"file_path": "a.py"}),
        ("glob", {"pattern": "*.py"}),
    ]
    for tool, data in plain:
        allowed = live.tool("gemini", tool, data, token=token, cwd=worktree)
        assert allowed["decision"] == "allow", (tool, allowed)
    moved = {"command": "ls", "workdir": str(live.state)}
    refused = live.tool("codex", "Bash", moved, token=token, cwd=worktree)
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny", refused
    assert live.tool("codex", "Bash", {"command": "ls"}, token=token, cwd=worktree) == {}
