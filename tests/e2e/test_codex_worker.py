"""Real Codex CLI workers started by ExoMonad's own spawn path, gated by its policy.

Everything is real but the model (a `ScriptedCodex` Responses server): a git repository
with a bare remote, `exomonad init --trust-codex-hooks` (its files committed), `exomonad
serve` with this checkout's code, the lead calling `spawn_workers` with
`runtime: "codex"`, Codex CLI 0.169 (TUI, `--no-daemon
--dangerously-bypass-approvals-and-sandbox`) in the tmux pane the server opens in the
worker's worktree, with the hooks and the `exo` MCP server of the committed
`.codex/config.toml`, run as `exomonad` from PATH.

Asserted:

* consent → trust: the server trusted ExoMonad's hooks in the worker's *worktree* (a path
  `init` never saw) in the user's Codex config before the worker started;
* Codex's `git push --force` to `main` is blocked by the policy through its PreToolUse
  hook: the model's next request carries the reason, the command never ran (no commit in
  the worktree) and the bare remote's `main` is unmoved; an ordinary write and commit in
  the worktree run;
* `notify_parent`, found through `tool_search` and called on the `exo` MCP server with
  the worker's token, lands in the lead's inbox (Claude Code's format);
* the gate is proven live before the task: the server's probe prompt comes back through
  Codex's own UserPromptSubmit hook and is discarded, so it never reaches the model;
* without consent, a Codex worker is refused before anything starts: no pane, no
  worktree, no token, no model request, and the error says how to fix it;
* a Codex worker whose hooks do not run although trusted (`-c features.hooks=false` in
  its command) is refused by the gate check: its probe reached the model, its task never
  did, and its pane, token and worktree are gone.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

import exomonad
from exomonad.client import ServerClient
from exomonad.clis.launchers import EXOMONAD_WORKER_ENV
from exomonad.errors import ExomonadError
from exomonad.runtimes import CODEX
from exomonad.scripted.openai import ScriptedCodex, mcp_reply, shell_reply, tool_search_reply
from exomonad.server.gateprobe import PROBE_MARK
from exomonad.server.identity import TokenStore
from exomonad.teams import Mailbox, TeamPaths, create_team
from exomonad.util.waiting import WaitTimeout, retry_until
from tests.e2e.codex_cli import (
    CodexHome,
    codex_env,
    codex_install_problem,
    kill_codex_processes,
    prepare_home,
    require_codex,
    tmux_install_problem,
)
from tests.e2e.harness import ExomonadServe, fail_if_missing, scrubbed_env, write_launcher
from tests.e2e.tmux import Tmux
from tests.support.git import GIT_ENV, git, make_repo

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

TEAM = "proj"
LEAD = "team-lead"
WAIT = 90.0
#: This checkout's code for every `exomonad` the test starts (the venv's console
#: scripts would otherwise import whatever checkout the venv was installed from).
SRC = str(Path(exomonad.__file__).resolve().parents[1])


@dataclass
class Project:
    root: Path
    remote: Path
    state: Path
    claude: Path
    env: dict[str, str]
    home: CodexHome
    model: ScriptedCodex
    tmux: Tmux
    server: ExomonadServe

    def lead(self) -> ServerClient:
        token = TokenStore(self.state).lead_path.read_text().strip()
        return ServerClient(self.state, token=token, timeout=WAIT + 60)

    def lead_inbox(self) -> list[dict[str, Any]]:
        return Mailbox(TeamPaths(TEAM, self.claude)).read_raw(LEAD)

    def remote_log(self, ref: str) -> list[str]:
        return git(self.remote, "log", "--format=%s", ref).split("\n")[:-1]

    def audit(self, agent: str) -> list[dict[str, Any]]:
        lines = (self.state / "audit.jsonl").read_text().splitlines()
        return [e for e in map(orjson.loads, lines) if e["agent"] == agent]

    def shim(self) -> Path:
        """A bin dir whose `exomonad` runs this checkout's code: Codex starts MCP servers
        with a short list of variables (PATH, not PYTHONPATH)."""
        bin_dir = self.home.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        shim = bin_dir / "exomonad"
        shim.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(self.env['PYTHONPATH'])} exec "
                        f"{shlex.quote(sys.executable)} -m exomonad \"$@\"\n")  # fmt: skip
        shim.chmod(0o755)
        return bin_dir

    def launcher(self, *extra: str) -> Path:
        """The worker command (plus ``extra`` arguments): Codex against the scripted
        model, ExoMonad's identity and the CODEX_HOME it checked taken from the pane
        ExoMonad opens."""
        env = {**codex_env(self.home), **GIT_ENV, "PYTHONPATH": self.env["PYTHONPATH"]}
        env["PATH"] = f"{self.shim()}{os.pathsep}{env['PATH']}"
        argv = [str(require_codex()), *shlex.split(CODEX.worker_command or "")[1:], *extra]
        return write_launcher(self.home.root / "codex-worker.sh", None, env, argv,
                              from_pane=(*EXOMONAD_WORKER_ENV, "CODEX_HOME"))  # fmt: skip


def _project(tmp_path: Path, *, consent: bool) -> Iterator[Project]:
    fail_if_missing(codex_install_problem, tmux_install_problem)
    root = make_repo(tmp_path / "proj", remote=tmp_path / "remote.git")
    claude = tmp_path / "claude"
    with ScriptedCodex() as model:
        home = prepare_home(tmp_path / "codex", model.base_url)
        path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
        env = {**scrubbed_env(), **GIT_ENV, "CLAUDE_CONFIG_DIR": str(claude),
               "EXOMONAD_DIR": str(root / ".exomonad"), "PYTHONPATH": path,
               "CODEX_HOME": str(home.codex_home)}  # fmt: skip
        args = ["exomonad", "init", str(root), "--json"]
        done = subprocess.run([*args, *(["--trust-codex-hooks"] if consent else [])], env=env,
                              capture_output=True, text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert orjson.loads(done.stdout)["warning"] is None  # `exomonad` on PATH is this one
        config = root / ".exomonad" / "config.toml"
        text = config.read_text()
        workers = "[workers]\ncodex_trust = true\n" if consent else "[workers]\n"
        text = text.replace("[workers]\ncodex_trust = true\n", "") + workers
        policy = '[policy]\napproval_timeout = 3.0\non_timeout = "deny"\npopup = false\n'
        config.write_text(text + 'tmux_session = "w"\nready_timeout = 45.0\n' + policy)
        git(root, "add", ".mcp.json", ".claude", ".gemini", ".codex", ".exomonad/config.toml")
        git(root, "commit", "-q", "-m", "exomonad init")
        git(root, "push", "-q", "origin", "main")
        create_team(TeamPaths(TEAM, claude))
        tmux = Tmux()
        tmux.new_session("w", "sleep 3600", cwd=root)
        server = ExomonadServe(state=root / ".exomonad", env=env, tmux_socket=tmux.socket,
                               log_path=tmp_path / "server.log")  # fmt: skip
        p = Project(root, tmp_path / "remote.git", root / ".exomonad", claude, env, home,
                    model, tmux, server)  # fmt: skip
        try:
            server.start(30)
            server.lead_creates_team(TEAM)
            yield p
        finally:
            tmux.kill()
            server.stop()
            kill_codex_processes(home)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    yield from _project(tmp_path, consent=True)


@pytest.fixture
def unconsented(tmp_path: Path) -> Iterator[Project]:
    yield from _project(tmp_path, consent=False)


def _wait(p: Project, cond: Any, what: str) -> None:
    try:
        retry_until(cond, timeout=WAIT, interval=0.1, message=what)
    except WaitTimeout:
        served = [(i, src, json.dumps(r.items)[:300]) for i, r, src in p.model.served()]
        last = [json.dumps(r.input[-2:])[:600] for r in p.model.requests[-2:]]
        screen = subprocess.run(
            ["tmux", "-L", p.tmux.socket, "capture-pane", "-p", "-t", "w"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        pytest.fail(f"timed out: {what}\nserved: {served}\nlast inputs: {last}\n"
                    f"--- screen ---\n{screen}\n"
                    f"--- server ---\n{p.server.log()[-3000:]}", pytrace=False)  # fmt: skip


FORCE = "git commit -q --allow-empty -m evil && git push --force origin HEAD:main"
WORK = "echo 'owner = 1' > feature.py && git add feature.py && git commit -q -m 'c1 feature'"
NOTE = {"status": "success", "message": "feature committed, force push refused"}


def test_codex_worker_is_gated_and_reports_to_the_lead(project: Project) -> None:
    p = project
    wt = p.root / ".worktrees" / "c1"
    force, work = shell_reply(FORCE), shell_reply(WORK)
    search, notify = tool_search_reply("notify parent"), mcp_reply("exo", "notify_parent", NOTE)
    for reply in (force, work, search, notify, "c1 done"):
        p.model.add_reply(reply)
    spec = {"name": "c1", "task": "do the feature", "command": str(p.launcher()),
            "runtime": "codex"}  # fmt: skip
    out = p.lead().tool("spawn_workers", {"workers": [spec]})
    [worker] = out["workers"]
    assert worker["worktree"] == str(wt), out
    assert worker["ready"], out  # the TUI's prompt showed: no hook-trust dialog in the way
    # The gate check came back through Codex's own prompt hook and was discarded there.
    assert ServerClient(p.state).health()["counters"]["gates_proven"] == 1
    # Consent → the server trusted its own hooks in the new worktree before the start.
    user = tomllib.loads(p.home.config_path.read_text())
    state = user["hooks"]["state"]
    assert f"{wt}/.codex/config.toml:pre_tool_use:0:0" in state
    assert user["projects"][str(wt)]["trust_level"] == "trusted"

    [call_id] = notify.call_ids()
    _wait(p, lambda: any(r.outputs(call_id) for r in p.model.requests), "notify_parent ran")
    # The force push: blocked through Codex's PreToolUse hook, the reason back to the model.
    [force_id] = force.call_ids()
    seen = p.model.wait_for_output(force_id).output_text(force_id) or ""
    assert seen.startswith(
        "Command blocked by PreToolUse hook: force push to a protected "
        "branch: git push --force origin main. Command: git commit"
    ), seen
    assert "evil" not in git(wt, "log", "--format=%s")  # the command never ran
    assert p.remote_log("main") == ["exomonad init", "initial"]
    decisions = [(e["tool"], e["decision"]) for e in p.audit("c1")]
    # Every call judged, as the worker (its token), in its worktree: the hook's Bash and
    # MCP calls, and the MCP server's own check of the tool it runs.
    assert decisions == [
        ("Bash", "deny"),
        ("Bash", "allow"),
        ("mcp__exo__notify_parent", "allow"),
        ("notify_parent", "allow"),
    ]
    assert {e["runtime"] for e in p.audit("c1")} == {"codex", "mcp"}
    assert all(e["worktree"] == str(wt) and e["branch"] == "exo/c1" for e in p.audit("c1"))
    # The ordinary work ran in the worktree, on the worker's branch.
    [work_id] = work.call_ids()
    assert "blocked" not in (p.model.wait_for_output(work_id).output_text(work_id) or "")
    assert git(wt, "log", "-1", "--format=%s").strip() == "c1 feature"
    assert (wt / "feature.py").read_text() == "owner = 1\n"
    assert not (p.root / "feature.py").exists()
    # notify_parent through tool_search and the exo MCP server, with the worker's token.
    want = f"[from: c1] success: {NOTE['message']}"
    _wait(p, lambda: any(e.get("text") == want for e in p.lead_inbox()), "report in inbox")
    [entry] = [e for e in p.lead_inbox() if e.get("text") == want]
    assert entry["from"] == "c1"
    assert entry["summary"] == "Agent update: c1"
    assert not entry.get("read")  # unread: for the lead to pick up
    assert "delivered to team-lead's inbox" in (
        p.model.wait_for_output(call_id).output_text(call_id) or ""
    )
    assert not any(PROBE_MARK in json.dumps(r.input) for r in p.model.requests)


def test_codex_worker_whose_hooks_do_not_run_is_refused_by_the_gate_check(
    project: Project,
) -> None:
    p = project
    p.model.add_text("NO GATE")  # what a model told the probe answers
    spec = {"name": "c3", "task": "the real task", "runtime": "codex",
            "command": str(p.launcher("-c", "features.hooks=false"))}  # fmt: skip
    with pytest.raises(ExomonadError, match="ran none of ExoMonad's hooks") as err:
        p.lead().tool("spawn_workers", {"workers": [spec]})
    assert "features.hooks" in str(err.value)  # says how to fix it
    # The hooks were trusted (consent) but off: the probe reached the model, the task not.
    user = tomllib.loads(p.home.config_path.read_text())
    assert f"{p.root / '.worktrees' / 'c3'}/.codex/config.toml:pre_tool_use:0:0" in \
        user["hooks"]["state"]  # fmt: skip
    seen = [json.dumps(r.input) for r in p.model.requests]
    assert any(PROBE_MARK in text for text in seen), seen
    assert not any("the real task" in text for text in seen)
    assert ServerClient(p.state).health()["counters"].get("gates_proven", 0) == 0
    assert TokenStore(p.state).find("c3", TEAM) is None
    assert not (p.root / ".worktrees" / "c3").exists()
    assert not p.lead_inbox()  # and no task sent anywhere
    assert not (Mailbox(TeamPaths(TEAM, p.claude)).paths.inbox("c3")).exists()

    def panes() -> list[str]:
        return subprocess.run(["tmux", "-L", p.tmux.socket, "list-panes", "-a", "-F",
                               "#{session_name}"], capture_output=True, text=True,
                              check=False).stdout.split()  # fmt: skip

    assert panes() == ["w"]


def test_codex_worker_without_consent_is_refused_before_it_starts(
    unconsented: Project,
) -> None:
    p = unconsented
    spec = {"name": "c2", "task": "anything", "command": str(p.launcher()), "runtime": "codex"}
    with pytest.raises(ExomonadError, match=r"exomonad init --trust-codex-hooks") as err:
        p.lead().tool("spawn_workers", {"workers": [spec]})
    assert "not trusted" in str(err.value)
    assert not (p.root / ".worktrees" / "c2").exists()
    assert TokenStore(p.state).find("c2", TEAM) is None
    assert p.model.requests == []  # nothing ran, gated or not
    panes = subprocess.run(["tmux", "-L", p.tmux.socket, "list-panes", "-a", "-F",
                            "#{session_name}"], capture_output=True, text=True,
                           check=False).stdout.split()  # fmt: skip
    assert panes == ["w"]
    user = tomllib.loads(p.home.config_path.read_text())
    assert "state" not in user.get("hooks", {})  # nothing trusted without consent
