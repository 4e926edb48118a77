"""`exomonad up` / `down` and `worker start|list|stop`, for real: tmux, the server, git.

The environment has this install's bin dir first on PATH, as after `pip install`: the
files ExoMonad writes (hooks, the worktrees' pre-push gate) run `exomonad` from PATH.

The lead window runs a stand-in (the real Claude Code lead under `up` is exercised by
the Claude Code e2e tests and `make demo`); everything else is ExoMonad's own code in
real processes: `up` twice, workers in their own worktrees, `down` twice, and then
nothing is left: no server process, no window `up` opened, no member, no token, and only
the worktree that holds uncommitted work.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.server.pidfile import read_server_info
from exomonad.teams import TeamPaths, create_team, load_config
from exomonad.util.waiting import retry_until
from tests.support.git import GIT_ENV, git, make_repo
from tests.support.tmux import READER, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

LEAD_STANDIN = f"{sys.executable} -c 'import time; time.sleep(3600)'"


@dataclass
class Project:
    root: Path
    env: dict[str, str]
    tmux: TmuxServer

    @property
    def state(self) -> Path:
        return self.root / ".exomonad"

    def exo(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "exomonad", *args], cwd=self.root,
                              env=self.env, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        if ok:
            assert done.returncode == 0, f"exomonad {' '.join(args)}: {done.stderr}"
        return done

    def json(self, *args: str) -> Any:
        return orjson.loads(self.exo(*args, "--json").stdout)

    def windows(self) -> list[str]:
        done = subprocess.run(["tmux", "-L", self.tmux.socket, "list-windows", "-a", "-F",
                               "#{session_name}:#{window_name}"], capture_output=True,
                              text=True, check=False)  # fmt: skip
        return sorted(done.stdout.split())

    def up(self, *args: str) -> Any:
        return self.json("up", "--tmux-socket", self.tmux.socket, "--lead", LEAD_STANDIN, *args)

    def panes(self, tag: str = "@exomonad-status") -> list[str]:
        """The panes of every session carrying ``tag``."""
        out = self.tmux.tmux("list-panes", "-a", "-F", f"#{{pane_id}} #{{{tag}}}")
        return [line.split()[0] for line in out.splitlines() if line.endswith(" 1")]

    def down(self) -> Any:
        return self.json("down", "--tmux-socket", self.tmux.socket)


@pytest.fixture
def project(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Project]:
    root = make_repo(tmp_path / "proj", remote=tmp_path / "remote.git")
    claude = tmp_path / "claude"
    create_team(TeamPaths("proj", claude))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(GIT_ENV, CLAUDE_CONFIG_DIR=str(claude), EXOMONAD_ENTER_DELAY="0.01",
               EXOMONAD_LOCK_DIR=str(tmp_path / "locks"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")  # fmt: skip
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "config.toml").write_text(
        f'[workers]\ncommand = "{sys.executable} {READER} {tmp_path}/worker.jsonl"\n'
        'ready_marker = "ready>"\n'
    )
    p = Project(root, env, tmux_server)
    yield p
    info = read_server_info(p.state)
    if info is not None and info.alive:  # a failed test must not leave a server behind
        os.kill(info.pid, 15)


def _adopt_team(p: Project) -> None:
    """What the lead's TeamCreate hook tells the server (the stand-in lead has no hooks)."""
    payload = {"session_id": "lead-1", "tool_name": "TeamCreate",
               "tool_input": {"team_name": "proj"}}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "exomonad", "hook", "post-tool-use"],
                          input=orjson.dumps(payload).decode(), env=p.env, cwd=p.root,
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_up_workers_down_twice_leaves_nothing_behind(project: Project) -> None:
    p = project
    for round_ in (1, 2):
        first = p.up()
        assert any("started the server" in d for d in first["done"])
        again = p.up()  # idempotent: nothing new
        assert again["done"] == ["already up"]
        assert again["server_pid"] == first["server_pid"]
        assert again["status_pane"] == first["status_pane"] is not None
        assert p.windows() == ["exomonad:lead", "exomonad:server", "main:sleep"]
        _adopt_team(p)
        w1 = p.json("worker", "start", "--name", "w1", "--task", "do A")
        w2 = p.json("worker", "start", "--name", "w2")
        for w, name in ((w1, "w1"), (w2, "w2")):
            assert w["worktree"] == str(p.root / ".worktrees" / name)
            assert git(Path(w["worktree"]), "branch", "--show-current").strip() == f"exo/{name}"
        listed = p.json("worker", "list")
        assert sorted(m["name"] for m in listed["workers"]) == ["w1", "w2"]
        if round_ == 1:
            _attach(p, "w1", w1["pane"])
        wt2 = Path(w2["worktree"])
        if round_ == 1:
            (wt2 / "draft.txt").write_text("not committed\n")
        else:  # the kept worktree came back with its work; now committed and pushed
            assert (wt2 / "draft.txt").read_text() == "not committed\n"
            git(wt2, "add", "draft.txt")
            git(wt2, "commit", "-q", "-m", "draft")
            git(wt2, "push", "-q", "origin", "exo/w2")
        stopped = p.json("worker", "stop", "w1")
        assert stopped["worktree"]["removed"] is True
        assert not (p.root / ".worktrees" / "w1").exists()
        report = p.down()
        assert report["warnings"] == ([f"kept worktree {p.root / '.worktrees' / 'w2'} (exo/w2): "
                                       "1 uncommitted file(s): draft.txt"]
                                      if round_ == 1 else [])  # fmt: skip
        # Nothing left: no server, no window of ours, no member, no token.
        assert read_server_info(p.state) is None
        assert p.windows() == ["main:sleep"]  # the pane we did not make stays
        assert [m.name for m in load_config(TeamPaths("proj", Path(p.env["CLAUDE_CONFIG_DIR"])))
                .members] == ["team-lead"]  # fmt: skip
        assert orjson.loads((p.state / "tokens.json").read_bytes()) == {}
        assert not (p.state / "lead.token").exists()
        assert p.down()["warnings"] == []  # down again: nothing to do, no error
        # A worktree with work in it is kept, listed, and reused by the next start;
        # once its work is committed and pushed, it goes.
        kept = p.json("worker", "list")["kept_worktrees"]
        assert [k["path"] for k in kept] == ([str(wt2)] if round_ == 1 else [])
        status = orjson.loads(p.exo("status", "--json", ok=False).stdout)
        assert status["running"] is False
        assert [(w["path"], w["removable"]) for w in status["worktrees"]] == (
            [(str(wt2), False)] if round_ == 1 else []
        )
        assert wt2.exists() == (round_ == 1)
    assert git(p.root.parent / "remote.git", "log", "--format=%s", "exo/w2").split() == [
        "draft",
        "initial",
    ]


def _attach(p: Project, name: str, pane: str) -> None:
    """`worker attach` from a terminal outside tmux (a pty from `script`): a real tmux
    client appears, showing the worker's pane; then it is detached."""
    cmd = f"{sys.executable} -m exomonad worker attach {name}"
    client = subprocess.Popen(["script", "-qfc", cmd, "/dev/null"], cwd=p.root, env=p.env,
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)  # fmt: skip

    def shown() -> list[str]:
        argv = ["tmux", "-L", p.tmux.socket, "list-clients", "-F", "#{pane_id}"]
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.split()

    try:
        retry_until(lambda: shown() == [pane], timeout=30, message=f"clients: {shown()}")
    finally:
        subprocess.run(["tmux", "-L", p.tmux.socket, "detach-client", "-s", "exomonad"],
                       check=False)  # fmt: skip
        client.wait(30)


def test_up_says_how_to_install_a_missing_program(project: Project) -> None:
    done = project.exo("up", "--tmux-socket", project.tmux.socket, "--lead", "no-such-claude",
                       ok=False)  # fmt: skip
    assert done.returncode == 1
    assert "no-such-claude is not installed or not on PATH" in done.stderr


def test_a_sandboxed_worker_cannot_read_tokens_or_write_outside_its_worktree(
    project: Project,
) -> None:
    """`[workers] sandbox = "bwrap"` through ExoMonad's own spawn path, with a real shell
    as the worker: the lead's token is invisible, the lead's checkout is read-only, the
    worktree is writable (and the server still reachable: the worker is registered)."""
    p = project
    cfg = p.state / "config.toml"
    cfg.write_text(cfg.read_text().replace('"ready>"', '""') + 'sandbox = "bwrap"\n')
    p.up()
    _adopt_team(p)
    script = ("cat \"$EXOMONAD_DIR/lead.token\" > probe.txt 2>&1; echo token=$? >> probe.txt; "
              "touch ../../escape.txt 2>> probe.txt; echo escape=$? >> probe.txt; "
              "echo done >> probe.txt; exec sleep 600")  # fmt: skip
    w = p.json("worker", "start", "--name", "s1", "--runtime", "command",
               "--command", f"bash -c '{script}'")  # fmt: skip
    probe = Path(w["worktree"]) / "probe.txt"
    retry_until(lambda: probe.exists() and "done" in probe.read_text(), timeout=30,
                message="the sandboxed shell did not run")  # fmt: skip
    text = probe.read_text()
    assert (p.state / "lead.token").exists()  # it is there, outside the sandbox...
    assert "token=1" in text  # ...and unreadable inside
    assert "escape=1" in text
    assert "Read-only file system" in text
    assert not (p.root / "escape.txt").exists()
    assert p.down()["warnings"] == [f"kept worktree {w['worktree']} (exo/s1): "
                                    "1 uncommitted file(s): probe.txt"]  # fmt: skip


def test_up_splits_a_live_status_view_below_the_lead(project: Project) -> None:
    """The status pane runs the real `exomonad status --tui`, which shows the team the
    lead adopts; a status pane someone closed comes back with `up`, `--no-status` opens
    none, and `down` closes it with the rest."""
    p = project
    first = p.up()
    assert "started the status view in exomonad:lead" in first["done"]
    pane = first["status_pane"]
    assert p.panes() == [pane]
    assert p.tmux.fmt(pane, "#{window_name}") == "lead"
    assert p.windows() == ["exomonad:lead", "exomonad:server", "main:sleep"]
    _adopt_team(p)

    def shown() -> str:
        return p.tmux.tmux("capture-pane", "-p", "-t", pane)

    retry_until(lambda: "team proj" in shown() and "● connected" in shown(), timeout=60,
                message=f"the status pane shows: {shown()}")  # fmt: skip
    p.tmux.tmux("kill-pane", "-t", pane)
    assert p.up("--no-status")["status_pane"] is None  # off: not made again
    back = p.up()
    assert back["done"] == ["started the status view in exomonad:lead"]
    assert p.panes() == [back["status_pane"]]
    report = p.down()
    assert "closed the status pane" in report["done"]
    assert p.panes() == []
    assert p.windows() == ["main:sleep"]
