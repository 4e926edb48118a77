"""The shared ``.git`` under the sandbox: what the worker's own git may write, and
nothing of the lead's (``exomonad.sandbox_git``), under a real ``bwrap``.

Before, the whole common git dir was bound read-write: code run inside moved the lead's
``main`` (loose and packed), installed a replacement for its commit, dropped its stash,
moved its tags and rewrote other workers' private git dirs. Each is tried here for real
and its effect on the host checked.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from exomonad.errors import SandboxError
from exomonad.sandbox import bwrap_argv
from exomonad.sandbox_git import KEEP, git_binds
from exomonad.util.waiting import retry_until
from tests.test_sandbox import (  # noqa: F401 - the fixtures
    GIT_ENV,
    SRC,
    Project,
    _git,
    bwrap,
    project,
)

pytestmark = pytest.mark.integration


def _lead_state(repo: Path) -> dict[str, str]:
    """What the lead's repository says about everything but the worker's branch."""
    return {
        "refs": "\n".join(
            line
            for line in _git("for-each-ref", "--format=%(refname) %(objectname)", cwd=repo).split(
                "\n"
            )
            if not line.startswith("refs/heads/exo/w1 ")
        ),
        "main shows": _git("log", "-1", "--format=%s %T", "main", cwd=repo),
        "replace": _git("replace", "-l", cwd=repo),
        "stash": _git("stash", "list", cwd=repo),
        "w2 HEAD": (repo / ".git/worktrees/w2/HEAD").read_text(),
    }


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_the_leads_refs_stash_and_other_worktrees_stay_put(
    project: Project,  # noqa: F811
    packed: bool,
) -> None:
    repo = project.repo
    _git("tag", "v1", cwd=repo)
    _git("worktree", "add", "-q", "-b", "exo/w2", str(repo / ".worktrees/w2"), cwd=repo)
    (repo / "README.md").write_text("the lead's unfinished work\n")
    _git("stash", "-q", cwd=repo)
    if packed:
        _git("pack-refs", "--all", cwd=repo)
        assert not (repo / ".git/refs/heads/main").exists()
    before = _lead_state(repo)
    main = _git("rev-parse", "main", cwd=repo)
    commit = project.run("echo evil > Makefile && git add Makefile && git commit -q -m evil")
    assert commit.returncode == 0, commit.stderr
    packed_refs = repo / ".git/packed-refs"
    attempts = {
        "update-ref": "git update-ref refs/heads/main HEAD",
        "packed-refs": f"sed -i s/{main}/$(git rev-parse HEAD)/ {packed_refs}",
        "replace": f"git replace {main} HEAD",
        "stash": "git stash clear",
        "tag": "git tag -f v1 HEAD",
        "other worktree": "echo 'ref: refs/heads/exo/w1' > ../../.git/worktrees/w2/HEAD",
        "new branch dir": "git branch feature HEAD",
        "another branch": "git branch exo/w1-try HEAD",  # it would need a reflog of its own
        "commondir": "echo $PWD > ../../.git/commondir",  # git reads it for the lead too
        "reflog link": "ln -s ../../../../README.md ../../.git/logs/refs/heads/exo/w3",
    }
    for what, script in attempts.items():
        if what == "packed-refs" and not packed:
            continue
        out = project.run(script)
        assert out.returncode != 0, f"{what}: {out.stdout} {out.stderr}"
    assert _lead_state(repo) == before
    assert _git("rev-parse", "main", cwd=repo) == main
    assert (repo / "README.md").read_text() == "hello\n"
    assert _git("stash", "pop", "-q", cwd=repo) == ""  # the lead's work is still there
    assert (repo / "README.md").read_text() == "the lead's unfinished work\n"


def test_the_workers_own_git_still_commits_rebases_and_pushes(project: Project) -> None:  # noqa: F811
    repo = project.repo
    (repo / "LEAD.md").write_text("lead\n")
    _git("add", "LEAD.md", cwd=repo)
    _git("commit", "-q", "-m", "the lead moves on", cwd=repo)
    spec = replace(project.spec, extra_rw=[project.remote])
    script = ("echo w > w.txt && git add w.txt && git commit -q -m 'by w1' && "
              f"git rebase -q main && git push -q {project.remote} exo/w1")  # fmt: skip
    out = project.run(script, spec)
    assert out.returncode == 0, out.stderr
    head = _git("rev-parse", "HEAD", cwd=project.worktree)
    assert _git("rev-parse", "exo/w1", cwd=repo) == head
    assert _git("rev-parse", "exo/w1", cwd=project.remote) == head
    assert _git("log", "--format=%s", "exo/w1", cwd=repo).split("\n") == [
        "by w1", "the lead moves on", "first"]  # fmt: skip
    assert "exo/w1@{0}: rebase" in _git("reflog", "-1", "exo/w1", cwd=repo)
    # The placeholders are invisible to git: no ref, no warning.
    assert (repo / ".git/refs/heads/exo" / KEEP).exists()
    listed = subprocess.run(["git", "for-each-ref"], cwd=repo, capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert KEEP not in listed.stdout + listed.stderr
    assert listed.stderr == ""


def test_the_leads_pack_refs_does_not_cut_a_running_worker_off_its_branch(
    project: Project,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``git pack-refs --all`` (or ``gc``) by the lead empties ``refs/heads/exo/``; without
    the placeholder git removes it, and the running sandbox's commits go to a directory
    the host no longer has."""
    flags = tmp_path / "flags"
    flags.mkdir()
    script = (f"git commit -q --allow-empty -m one && touch {flags}/ready && "
              f"while [ ! -e {flags}/go ]; do sleep 0.02; done && "
              "git commit -q --allow-empty -m two && git rev-parse HEAD")  # fmt: skip
    spec = replace(project.spec, extra_rw=[flags])
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(bwrap_argv(["bash", "-c", script], spec), env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        retry_until(lambda: (flags / "ready").exists() or proc.poll() is not None,
                    timeout=60, message="the worker's first commit")  # fmt: skip
        _git("pack-refs", "--all", "--prune", cwd=project.repo)
        packed = not (project.repo / ".git/refs/heads/exo/w1").exists()
    finally:
        (flags / "go").touch()
        out, err = proc.communicate(timeout=60)
    assert packed
    assert proc.returncode == 0, err
    assert _git("log", "-1", "--format=%s", "exo/w1", cwd=project.repo) == "two"
    assert _git("rev-parse", "exo/w1", cwd=project.repo) == out.strip()


def test_refused_layouts(project: Project) -> None:  # noqa: F811
    repo, common = project.repo, str(project.repo / ".git")
    flat = repo / ".worktrees/flat"
    _git("worktree", "add", "-q", "-b", "flat", str(flat), cwd=repo)
    with pytest.raises(SandboxError, match="directly in refs/heads"):
        git_binds(str(flat), common)
    _git("checkout", "-q", "-b", "exo/lead", cwd=repo)
    with pytest.raises(SandboxError, match="lead's branch 'exo/lead'"):
        git_binds(str(project.worktree), common)
    _git("checkout", "-q", "main", cwd=repo)
    assert git_binds(str(project.worktree), common)[:3] == ["--ro-bind", common, common]
    # A ref directory that is a symbolic link would widen the bind.
    exo = repo / ".git/refs/heads/exo"
    os.rename(exo, repo / ".git/exo-real")
    exo.symlink_to(repo / ".git/exo-real")
    with pytest.raises(SandboxError, match="symbolic link"):
        git_binds(str(project.worktree), common)
    exo.unlink()
    os.rename(repo / ".git/exo-real", exo)
    # A private HEAD naming another branch than the one given (found probing: the
    # next spawn bound refs/heads/release/ writable and release/1.0 moved).
    head = repo / ".git/worktrees/w1/HEAD"
    head.write_text("ref: refs/heads/release/evil\n")
    with pytest.raises(SandboxError, match="not the worker's branch 'exo/w1'"):
        git_binds(str(project.worktree), common, "exo/w1")
    assert not (repo / ".git/refs/heads/release").exists()
    head.write_text("ref: refs/heads/exo/w1\n")
    # A private HEAD naming a branch outside refs/heads creates nothing anywhere.
    head = repo / ".git/worktrees/w1/HEAD"
    head.write_text("ref: refs/heads/../../../outside/x\n")
    with pytest.raises(SandboxError, match="not a plain path"):
        git_binds(str(project.worktree), common)
    assert not (repo / "outside").exists()
    head.write_text("ref: refs/heads/exo/w1\n")
    # A worktree whose .git names another git dir.
    (project.worktree / ".git").write_text(f"gitdir: {common}\n")
    with pytest.raises(SandboxError, match="not a worktree of"):
        git_binds(str(project.worktree), common)
    (repo / ".git/reftable").mkdir()
    with pytest.raises(SandboxError, match="reftable"):
        git_binds(str(project.worktree), common)


def test_a_planted_ref_or_head_is_refused_without_waiting(project: Project) -> None:  # noqa: F811
    """Another sandboxed worker can write the workers' ref directory, and the worker its
    private git dir: a symbolic ref where its branch should be, or a FIFO there or as its
    ``HEAD`` (the server's open would wait for a writer, forever), refuse the spawn."""
    repo, common = project.repo, str(project.repo / ".git")
    own = repo / ".git/refs/heads/exo/w1"
    tip = own.read_text()
    own.write_text("ref: refs/heads/main\n")
    with pytest.raises(SandboxError, match="symbolic ref"):
        git_binds(str(project.worktree), common)
    own.unlink()
    os.mkfifo(own)  # a FIFO: opening it to read would wait for a writer, forever
    with pytest.raises(SandboxError, match="no regular file"):
        git_binds(str(project.worktree), common)
    own.unlink()
    own.write_text(tip)
    head = repo / ".git/worktrees/w1/HEAD"
    saved = head.read_text()
    head.unlink()
    os.mkfifo(head)
    with pytest.raises(SandboxError, match="HEAD is not a regular file"):
        git_binds(str(project.worktree), common)
    head.unlink()
    head.write_text(saved)
