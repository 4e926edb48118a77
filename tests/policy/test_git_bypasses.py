"""A worker's git commands that read ExoMonad's state, write outside its worktree or move
``main`` through git's own options, environment or branch verbs (no push).

Found as a worker against a live server (git 2.39, the real hook client): each of
``NOT_ALLOWED`` was allowed and had its effect. ``git commit -F
../../.exomonad/lead.token`` made the lead's token a commit message; ``git -C ../.. grep
--untracked -e .`` printed the state dir's untracked files; ``GIT_TRACE=<path> git
status`` appended git's trace to any file (the state's ``config.toml``, ``~/.bashrc``);
``git checkout -B main``, ``git switch -C main``, ``git branch -M exo/w1 main`` and ``git
worktree add -f sub main`` moved (or committed onto) the lead's ``main``; ``git init
--separate-git-dir``, ``git bugreport -o``, ``git diagnose -o`` and ``git worktree move``
wrote the lead's checkout. Now none is allowed, while the worker's ordinary git work
(``ORDINARY``) stays allowed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import WT, bash
from tests.support.git import GIT_ENV, git, make_repo

TOKEN = "../../.exomonad/lead.token"


STATE_READS = [
    f"git commit -F {TOKEN} --allow-empty",
    "git commit --allow-empty -e --template=../../.exomonad/tokens.json --cleanup=verbatim",
    f"git commit -F{TOKEN}",
    f"git commit --file={TOKEN} --allow-empty",
    f"git commit --file {TOKEN}",
    f"git commit -t {TOKEN}",
    f"git commit --template {TOKEN}",
    f"git commit -t{TOKEN}",
    f"git commit -aF {TOKEN}",
    f"git commit --fil={TOKEN}",
    f"git commit --pathspec-from-file={TOKEN}",
    "git commit -F ../../.exo*/lead.token",
    "git -C ../.. commit -F .exomonad/lead.token",
    f"git merge -F {TOKEN} main",
    f"git tag -F {TOKEN} t1",
    f"git notes add -F {TOKEN}",
    f"git hash-object -w {TOKEN}",
    f"git blame --contents {TOKEN} own.txt",
    f"git am {TOKEN}",
    f"git apply {TOKEN}",
    f"git check-ignore --stdin < {TOKEN}",
    f"git grep -f {TOKEN}",
]
TREE_READS = [
    "git -C ../.. grep --untracked -e .",
    "git -C ../.. grep --untracked tok",
    "git -C ../.. grep --untracked -h -e exo_ -- .exomonad",
    "git -C ../.. grep --untracked -c -e .",
    "git -C ../.. grep --no-exclude-standard -e .",
    "git -C ../.. grep --no-index -e .",
    "git -C ../.. grep --no-index --exclude-standard -e .",
    "cd ../.. && git grep --untracked token",
    "git -C ../.. grep --untracked -e . -- '*.token'",
    "git -C ../.. grep --untracked -e . -- ':(top)'",
    "git --work-tree=../.. grep --untracked -e .",
]
ENV_WRITES = [
    "GIT_TRACE=$PWD/../../.exomonad/config.toml git status",
    "GIT_TRACE=$HOME/.bashrc git status",
    "GIT_TRACE=$PWD/../../trace.txt git status",
    "GIT_TRACE=/p/trace.txt git status",
    "GIT_TRACE2=/p/trace.txt git status",
    "GIT_TRACE2_EVENT=/p/trace.json git status",
    "GIT_TRACE2_PERF=/p/perf git status",
    "GIT_TRACE_PACKET=/p/packet git status",
    "GIT_TRACE_PERFORMANCE=/p/perf git status",
    "GIT_TRACE_SETUP=/p/setup git status",
    "GIT_TRACE_SHALLOW=/p/shallow git status",
    "GIT_TRACE_CURL=/p/curl git status",
    "GIT_TRACE_PACK_ACCESS=/p/pack git status",
    "GIT_TRACE2_EVENT=af_unix:/p/sock git status",
    "GIT_TRACE=$X git status",
    "export GIT_TRACE=/p/trace.txt; git status",
    "export GIT_TRACE2_EVENT=/p/.exomonad/config.toml && git status",
    "env GIT_TRACE=/p/trace.txt git status",
    "HISTFILE=/p/hist bash -ic true",
    "GIT_INDEX_FILE=../../.git/index git add own.txt",
]
MOVES_MAIN = [
    "git checkout -B main",
    "git checkout -Bmain",
    "git checkout -b main",
    "git checkout -B refs/heads/main",
    "git checkout -B master",
    "git checkout -q -B main HEAD",
    "git checkout --orphan main",
    "git checkout main",
    "git checkout -B $B",
    "git switch -C main",
    "git switch -Cmain",
    "git switch -c main",
    "git switch --force-create=main",
    "git switch --force-create main",
    "git switch --create main",
    "git switch --orphan main",
    "git switch main",
    "git branch -M exo/w1 main",
    "git branch -C main",
    "git branch -C exo/w1 main",
    "git branch -M main",
    "git branch -m main",
    "git branch -c exo/w1 main",
    "git branch --move exo/w1 main",
    "git branch --copy --force exo/w1 main",
    "git branch -m main old",
    "git branch -M exo/w1 refs/heads/main",
    "git branch main",
    "git branch main HEAD",
    "git branch --track main origin/main",
    "git worktree add -f sub main",
    "git worktree add sub main",
    "git worktree add -B main sub",
    "git worktree add -Bmain sub",
    "git worktree add -b main sub",
    "git worktree add -f main",
    "git worktree add -f sub refs/heads/main",
    "git stash branch main",
]
OUTSIDE_WRITES = [
    "git init -q --separate-git-dir=../../sep newrepo",
    "git init --separate-git-dir ../../sep newrepo",
    "git clone -q --separate-git-dir=../../sep3 ../../../remote.git cl",
    "git bugreport -o ../../br",
    "git bugreport --output-directory=../../br",
    "git bugreport -o ../../.exomonad -s pwn",
    "git diagnose -o ../../dg",
    "git diagnose --output-directory ../../dg",
    "git worktree move . ../../moved",
    "git worktree remove ../w2",
    "git maintenance register",
    "git maintenance start",
    "git maintenance unregister",
    "git tag -f v1",
    "git tag --force v1 HEAD",
    "git tag -d v1",
    "git interpret-trailers --in-place --trailer a=b ../../README.md",
]
NOT_ALLOWED = STATE_READS + TREE_READS + ENV_WRITES + MOVES_MAIN + OUTSIDE_WRITES
ORDINARY = [
    "git commit -m x",
    "git commit -am 'fix the parser'",
    "git commit -F msg.txt",
    "git commit --file=msg.txt",
    "git commit -t .gitmessage",
    "git commit -F -",
    "git commit -C HEAD --amend",
    "git commit -c HEAD~1",
    "git tag -F notes.txt t1",
    "git merge -F msg.txt topic",
    "git grep foo",
    "git grep --untracked foo",
    "git grep -e foo -- src",
    "git -C ../.. grep foo",
    "git -C ../.. grep --untracked -e foo -- '*.py'",
    "git ls-files --others",
    "git -C ../.. ls-files --others",
    "git -C ../.. status --untracked-files=all",
    "git diff --no-index a.txt b.txt",
    "GIT_TRACE=1 git status",
    "GIT_TRACE=2 git status",
    "GIT_TRACE=true git status",
    "GIT_TRACE=0 git status",
    "GIT_TRACE2_PERF=1 git status",
    "GIT_TRACE=$PWD/trace.txt git status",
    f"GIT_TRACE={WT}/trace.txt git status",
    "export GIT_TRACE=1; git status",
    "env GIT_TRACE=1 git status",
    "git checkout -b feature",
    "git checkout -B exo/w1",  # -B onto another name: test_git_shared_round6
    "git checkout -b feature main",
    "git checkout main -- README.md",
    "git checkout main README.md",
    "git checkout --detach main",
    "git checkout exo/w1",
    "git switch -c topic",
    "git switch -C exo/w1 origin/main",
    "git switch --detach main",
    "git branch -m old new",
    "git branch -m feature",
    "git branch -c exo/w1 backup",
    "git branch feature main",
    "git branch",
    "git branch --list main",
    "git branch --contains main",
    "git branch -a",
    "git worktree list",
    "git worktree add sub",
    "git worktree add -b feat sub",
    "git worktree add --detach sub main",
    "git init -q newrepo",
    "git bugreport -o br",
    "git tag v2",
    "git tag",
    "git tag -l",
    "git config --worktree user.name evil",  # the shared config: round 6
    "git stash",
    "git stash list",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_git_bypasses_are_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_git_work_stays_allowed(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)


# -- real effects ---------------------------------------------------------------------


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A project on ``main`` (a bare ``origin``), its state dir with a token, a worker's
    worktree on ``exo/w1`` one commit ahead."""
    proj = make_repo(tmp_path / "proj", remote=tmp_path / "remote.git")
    state = proj / ".exomonad"
    state.mkdir()
    (state / "lead.token").write_text("exo_secret_lead_token\n")
    (state / "config.toml").write_text("[policy]\n")
    git(proj, "worktree", "add", "-q", "-b", "exo/w1", ".worktrees/w1")
    wt = proj / ".worktrees" / "w1"
    (wt / "own.txt").write_text("mine\n")
    git(wt, "add", "own.txt")
    git(wt, "commit", "-q", "-m", "worker commit")
    return proj, wt


def _run_if_allowed(command: str, wt: Path, home: Path) -> bool:
    """Run ``command`` as the worker in ``wt`` only if the policy allows it."""
    if not isinstance(bash(command, root=str(wt.parent.parent)), Allow):
        return False
    env = {**os.environ, **GIT_ENV, "HOME": str(home)}
    subprocess.run(["bash", "-c", command], cwd=wt, env=env, capture_output=True,
                   timeout=60, check=False)  # fmt: skip
    return True


#: What a worker's own git work writes in the shared ``.git``.
_OWN_GIT = ((".git", "logs"), (".git", "worktrees"), (".git", "objects"), (".git", "index"))


def _snapshot(proj: Path, home: Path) -> dict[str, bytes]:
    """Every file outside the worktree: the lead's checkout, its .git, the home dir."""
    out: dict[str, bytes] = {}
    for base in (proj, home):
        for path in base.rglob("*"):
            if ".worktrees" in path.relative_to(base).parts or not path.is_file():
                continue
            rel = path.relative_to(base)
            if rel.parts[:2] in _OWN_GIT or rel.parts[:4] == (".git", "refs", "heads", "exo"):
                continue  # the worktree's own reflog, HEAD, index, objects and branch
            out[str(path)] = path.read_bytes()
    return out


REAL = [
    f"git commit -q -F {TOKEN} --allow-empty",
    "git commit -q --allow-empty --template=../../.exomonad/lead.token --cleanup=verbatim",
    "GIT_TRACE=$PWD/../../.exomonad/config.toml git status",
    "GIT_TRACE=$PWD/../../trace.txt git status",
    "GIT_TRACE2_EVENT=$HOME/.bashrc git status",
    "git checkout -q -B main",
    "git switch -q -C main",
    "git worktree add -q -f sub main && cd sub && git commit -q --allow-empty -m via-sub",
    "git init -q --separate-git-dir=../../sep newrepo",
    "git bugreport -o ../../br",
]


@pytest.mark.parametrize("command", REAL)
def test_what_the_policy_allows_changes_nothing_outside(command: str, tmp_path: Path) -> None:
    proj, wt = _project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# bashrc\n")
    before = _snapshot(proj, home)
    main = git(proj, "rev-parse", "main")
    ran = _run_if_allowed(command, wt, home)
    changed = sorted(p for p, data in _snapshot(proj, home).items() if before.get(p) != data)
    assert (ran, changed) == (ran, []), command
    assert git(proj, "rev-parse", "main") == main, command
    assert "exo_secret" not in git(wt, "log", "--all", "--format=%B"), command


def test_ordinary_git_work_really_runs(tmp_path: Path) -> None:
    """The control: the same harness runs what the policy allows, and it has its effect."""
    _, wt = _project(tmp_path)
    (wt / "msg.txt").write_text("an ordinary message\n")
    home = tmp_path / "home"
    home.mkdir()
    for command in ("git commit -q --allow-empty -F msg.txt", "GIT_TRACE=$PWD/t.txt git status",
                    "git checkout -q -b feature"):  # fmt: skip
        assert _run_if_allowed(command, wt, home), command
    assert git(wt, "log", "-1", "--format=%s").strip() == "an ordinary message"
    assert (wt / "t.txt").exists()
    assert git(wt, "branch", "--show-current").strip() == "feature"
