"""The second gate: git's pre-push in a worker's worktree asks the server's policy.

Real git, a bare remote, the real server (started by `exomonad up --no-lead`) and a worker
started by `exomonad worker start`; the pushes are run as the worker would run them (its
token in the environment, its worktree as cwd) but by plain `sh`, i.e. the way a script
that ends in `git push` runs, which the agent's own hook only sees as "sh script".
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from exomonad.server.pidfile import read_server_info
from exomonad.util.proc import pid_alive
from exomonad.util.waiting import retry_until
from tests.e2e.harness import ExomonadServe
from tests.support.git import git
from tests.test_lifecycle import Project, _adopt_team, project  # noqa: F401 - the fixture

__all__: list[str] = []

#: A push from below a process that is Gemini CLI, with no token in the environment.
AS_GEMINI = "bash -c \"exec -a gemini bash -c 'git push -q origin HEAD:main; exit \\$?'\""


def _push(p: Project, wt: Path, script: str, env: dict[str, str]
          ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(["sh", "-c", script], cwd=wt, env={**p.env, **env},
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


def _configure(p: Project) -> None:
    """Escalations time out to a deny after 2 s, no popup; terminal workers allowed."""
    cfg = p.state / "config.toml"
    cfg.write_text(
        cfg.read_text().replace('"ready>"', '""\nallow_ungated = true')
        + '[policy]\napproval_timeout = 2.0\non_timeout = "deny"\npopup = false\n'
    )


@contextmanager
def _serving(p: Project, tmp_path: Path) -> Iterator[ExomonadServe]:
    """:func:`_configure`, a tmux session where workers go, and `exomonad serve` running
    with this environment (`up` starts it with `python -I`)."""
    _configure(p)
    p.tmux.tmux("new-session", "-d", "-s", "exomonad")
    serve = ExomonadServe(state=p.state, env=p.env, tmux_socket=p.tmux.socket,
                          log_path=tmp_path / "serve.log", cwd=p.root)  # fmt: skip
    serve.start()
    try:
        yield serve
    finally:
        serve.stop()


def _start_worker(p: Project) -> tuple[Path, str]:
    """Worker ``w1`` started by the running server: its worktree and its token."""
    _adopt_team(p)
    w = p.json("worker", "start", "--name", "w1", "--runtime", "terminal", "--command", "sleep 600")
    tokens = orjson.loads((p.state / "tokens.json").read_bytes())
    return Path(w["worktree"]), next(t for t, i in tokens.items() if i["name"] == "w1")


def _audit(p: Project) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (p.state / "audit.jsonl").read_text().splitlines()]


def test_pushes_from_a_workers_worktree_meet_the_policy_in_git(project: Project) -> None:  # noqa: F811
    p = project
    _configure(p)
    p.json("up", "--tmux-socket", p.tmux.socket, "--no-lead")
    wt, token = _start_worker(p)
    hooks = git(wt, "config", "core.hooksPath").strip()
    assert hooks.endswith("/.git/exomonad-hooks")  # its own config, not the lead's
    assert git(p.root, "config", "--default", "none", "core.hooksPath").strip() == "none"
    remote = p.root.parent / "remote.git"
    main_before = git(remote, "rev-parse", "main").strip()
    (wt / "f.txt").write_text("work\n")
    git(wt, "add", "f.txt")
    git(wt, "commit", "-q", "-m", "work")

    as_worker = {"EXOMONAD_TOKEN": token, "EXOMONAD_DIR": str(p.state)}  # as ExoMonad gives it
    ok = _push(p, wt, "git push -q origin exo/w1", as_worker)  # its own branch: allowed
    assert ok.returncode == 0, ok.stderr
    assert git(remote, "log", "--format=%s", "-1", "exo/w1").strip() == "work"
    to_main = _push(p, wt, "git push -q origin HEAD:main", as_worker)  # escalated, unanswered
    assert to_main.returncode != 0
    assert "push refused by the project's policy" in to_main.stderr
    git(wt, "commit", "-q", "--amend", "-m", "rewritten")
    forced = _push(p, wt, "git push -q -f origin exo/w1", as_worker)  # a blind force
    assert forced.returncode != 0
    assert "refused" in forced.stderr
    assert git(remote, "log", "--format=%s", "-1", "exo/w1").strip() == "work"
    hidden = _push(p, wt, AS_GEMINI, {})
    assert hidden.returncode != 0  # an agent without its token: refused outright
    assert "without its ExoMonad identity" in hidden.stderr
    # Its token without EXOMONAD_DIR, from a clone of its own holding a planted state dir
    # (a permissive policy, no server): refused, not judged offline by that policy.
    clone = p.root.parent / "mine"
    git(p.root.parent, "clone", "-q", str(remote), str(clone))
    (clone / ".exomonad").mkdir()
    (clone / ".exomonad" / "policy.py").write_text("raise SystemExit('never loaded')\n")
    git(clone, "commit", "-q", "--allow-empty", "-m", "mine")
    lost = {"EXOMONAD_TOKEN": token, "GIT_CONFIG_PARAMETERS": f"'core.hooksPath'='{hooks}'"}
    planted = _push(p, clone, "git push -q origin HEAD:main", lost)
    assert planted.returncode != 0
    assert "without EXOMONAD_DIR" in planted.stderr
    assert git(remote, "rev-parse", "main").strip() == main_before  # main never moved
    gate = [(e["decision"], e["actions"][0]["type"]) for e in _audit(p) if e["agent"] == "w1"]
    assert gate == [("allow", "GitPush"), ("human", "GitPush"), ("tl", "GitPush")]
    p.down()
    assert read_server_info(p.state) is None


def _as_the_runtime(p: Project, wt: Path, token: str, command: str) -> str:
    """What an agent's runtime does with a shell tool call: ask the real hook client
    (Claude Code's PreToolUse, under the worker's token, in its worktree) and run the
    command only if it is allowed. The hook's decision."""
    env = {**p.env, "EXOMONAD_TOKEN": token, "EXOMONAD_DIR": str(p.state)}  # a worker's
    call = {"session_id": "w1-session", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "cwd": str(wt)}  # fmt: skip
    hook = subprocess.run([sys.executable, "-m", "exomonad", "hook", "pre-tool-use"],
                          input=json.dumps(call), cwd=wt, env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert hook.returncode == 0, hook.stderr
    decision = str(json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecision"])
    if decision == "allow":
        ran = subprocess.run(["bash", "-c", command], cwd=wt, env=env, capture_output=True,
                             text=True, timeout=120, check=False)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    return decision


def test_a_worker_that_detaches_a_push_is_escalated_and_main_stays(
    project: Project,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A detached process with a scrubbed environment is no agent's to the git gate (it
    takes it for a person's push): the agent's own hook is what stops it. The server is
    `exomonad serve` run with this environment (`up` starts it with `python -I`)."""
    with _serving(project, tmp_path):
        _detached_pushes_are_escalated(project)


def _worker_with_its_branch_pushed(p: Project) -> tuple[Path, str, Path, str]:
    """Worker ``w1`` with a commit on its branch, pushed through its hook (allowed, run):
    its worktree, token, the bare remote and the remote's ``main`` before anything."""
    wt, token = _start_worker(p)
    remote = p.root.parent / "remote.git"
    main_before = git(remote, "rev-parse", "main").strip()
    (wt / "f.txt").write_text("work\n")
    git(wt, "add", "f.txt")
    git(wt, "commit", "-q", "-m", "work")
    own = _as_the_runtime(p, wt, token, "git push -q origin exo/w1")
    assert own == "allow"  # the harness runs what is allowed: the branch really moved
    assert git(remote, "log", "--format=%s", "-1", "exo/w1").strip() == "work"
    return wt, token, remote, main_before


def _detached_pushes_are_escalated(p: Project) -> None:
    wt, token, remote, main_before = _worker_with_its_branch_pushed(p)
    (wt / "push.sh").write_text("git push -q origin HEAD:main\n")  # a script: not read
    hostile = [  # a push the hook sees is the push it is, detached or not: escalated
        "setsid -f sh -c 'git push -q origin HEAD:main'",
        "nohup git push -q origin HEAD:main > /dev/null 2>&1 &",
        "sh -c '(git push -q origin HEAD:main &)'",
    ]
    for command in hostile:
        assert _as_the_runtime(p, wt, token, command) != "allow", command  # unanswered: deny
    # Allowed before (a script run); run, its push passed git's gate as a person's (no
    # token, no agent above it) and moved main. Shedding the environment is Unknown now:
    scrubbed = f"env -i PATH={shlex.quote(p.env['PATH'])} setsid -f sh push.sh"
    assert _as_the_runtime(p, wt, token, scrubbed) != "allow"
    # Detached with the environment kept is ordinary (a dev server with `&`): it runs, and
    # the push in its script meets git's gate as the worker's (its token), refused.
    log = wt / "push.log"
    kept = "nohup sh push.sh > push.log 2>&1 &"
    assert _as_the_runtime(p, wt, token, kept) == "allow"
    retry_until(lambda: "push refused" in log.read_text() if log.exists() else False,
                timeout=60, message="the detached push was not refused by git's gate")  # fmt: skip
    assert git(remote, "rev-parse", "main").strip() == main_before  # main never moved
    judged = [e for e in _audit(p) if e["agent"] == "w1" and e["tool"] == "Bash"]
    unknown = [e for e in judged if "Unknown" in {a["type"] for a in e["actions"]}]
    assert [e["decision"] for e in unknown] == ["human"]  # the scrubbed one
    gate = [
        e
        for e in _audit(p)
        if e["agent"] == "w1"
        and e["tool"] == "Bash"
        and e.get("decision") == "human"
        and "GitPush" in {a["type"] for a in e["actions"]}
    ]
    assert len(gate) >= len(hostile) + 1  # the three hooks, and the gate's own check


def test_a_worker_that_kills_the_server_still_cannot_push(project: Project) -> None:  # noqa: F811
    """Measured: with the server killed (`pkill -f exomonad` was allowed to a worker),
    both gates judged the worker's `git push origin HEAD:main` offline, where the
    built-in policy only escalates it and nobody was there to ask: the push went
    through. Now a caller with a token and no server is refused by both."""
    p = project
    _configure(p)
    p.json("up", "--tmux-socket", p.tmux.socket, "--no-lead")
    wt, token = _start_worker(p)
    as_worker = {"EXOMONAD_TOKEN": token, "EXOMONAD_DIR": str(p.state)}  # what a worker gets
    remote = p.root.parent / "remote.git"
    main_before = git(remote, "rev-parse", "main").strip()
    (wt / "f.txt").write_text("work\n")
    git(wt, "add", "f.txt")
    git(wt, "commit", "-q", "-m", "work")
    info = read_server_info(p.state)
    assert info is not None
    os.kill(info.pid, signal.SIGKILL)  # what `pkill -9 -f "exomonad serve"` does
    retry_until(lambda: not pid_alive(info.pid), timeout=30, message="server still alive")

    push = {"tool_name": "Bash", "tool_input": {"command": "git push origin HEAD:main"},
            "cwd": str(wt)}  # fmt: skip
    hook = subprocess.run([sys.executable, "-m", "exomonad", "hook", "pre-tool-use"],
                          input=orjson.dumps(push), cwd=wt, env={**p.env, **as_worker},
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    answer = orjson.loads(hook.stdout)["hookSpecificOutput"]
    assert (hook.returncode, answer["permissionDecision"]) == (0, "deny"), hook.stderr
    assert b"never judged without it" in hook.stderr
    for script in ("git push -q origin HEAD:main", "git push -q origin exo/w1"):
        pushed = _push(p, wt, script, as_worker)
        assert pushed.returncode != 0, script
        assert "never judged without it" in pushed.stderr
    assert git(remote, "rev-parse", "main").strip() == main_before  # main never moved
    assert git(remote, "branch", "--list", "exo/w1").strip() == ""
    p.down()


def test_a_worker_cannot_move_main_without_a_push(project: Project, tmp_path: Path) -> None:  # noqa: F811
    """Measured as a worker on the previous policy: with its own branch pushed (allowed),
    ``git -C <remote> update-ref refs/heads/main refs/heads/exo/w1`` was allowed and run,
    and moved the bare remote's ``main``: no push, so git's ``pre-push`` gate never ran;
    ``sed -n '1e ...'`` ran any command as a "reader"; ``echo 'gitdir: <remote>' > .git``
    then ``GIT_WORK_TREE=. git commit`` committed onto the remote's ``main``. Now each is
    escalated (unanswered: denied) and ``main`` stays."""
    p = project
    with _serving(p, tmp_path):
        wt, token, remote, main_before = _worker_with_its_branch_pushed(p)
        move = f"git -C {shlex.quote(str(remote))} update-ref refs/heads/main refs/heads/exo/w1"
        via_env = f"GIT_DIR={shlex.quote(str(remote))} git branch -f main exo/w1"
        gitfile = f"echo 'gitdir: {remote}' > .git"  # then GIT_WORK_TREE=. git commit
        hostile = (move, f"sed -n '1e {move}' f.txt", "git fetch -q . HEAD:main", via_env, gitfile)
        for command in hostile:
            assert _as_the_runtime(p, wt, token, command) != "allow", command
        commit = "GIT_WORK_TREE=. git commit -q --allow-empty -m again"  # on its own branch
        assert _as_the_runtime(p, wt, token, commit) == "allow"
        assert git(wt, "log", "--format=%s", "-1").strip() == "again"
        assert git(remote, "rev-parse", "main").strip() == main_before  # main never moved
        assert git(p.root, "log", "--format=%s", "-1", "main").strip() != "work"


def test_a_workers_one_liners_write_only_its_worktree(project: Project, tmp_path: Path) -> None:  # noqa: F811
    """Measured as a worker on the previous policy: ``perl -pi -e ... <the lead's file>``
    and an awk program's ``print > <the lead's file>`` rewrote the lead's checkout, and
    ``awk 'BEGIN { system(...) }'`` ran a command, all allowed as readers. Now each is
    escalated (unanswered: denied) and nothing outside the worktree changes; the same
    one-liner on the worker's own file is allowed and runs."""
    p = project
    with _serving(p, tmp_path):
        wt, token = _start_worker(p)
        lead_file, marker = p.root / "lead.txt", p.root / "pwned"
        lead_file.write_text("lead\n")
        (wt / "f.txt").write_text("work\n")
        hostile = [
            f"perl -pi -e 's/lead/worker/' {shlex.quote(str(lead_file))}",
            f"awk '{{ print > \"{lead_file}\" }}' f.txt",
            f"awk 'BEGIN {{ system(\"touch {marker}\") }}'",
        ]
        for command in hostile:
            assert _as_the_runtime(p, wt, token, command) != "allow", command
        assert lead_file.read_text() == "lead\n"
        assert not marker.exists()
        assert _as_the_runtime(p, wt, token, "perl -pi -e 's/work/done/' f.txt") == "allow"
        assert (wt / "f.txt").read_text() == "done\n"
