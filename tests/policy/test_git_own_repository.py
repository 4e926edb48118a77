"""A git command in the worker's worktree works on the repository git finds on disk, which
need not be the worktree's (found trying the gate as a worker, a seventh round; each step
allowed, and run for real in a scratch project with a linked worktree):

- a link ``up -> ../..`` made with git's own plumbing (``hash-object -w --stdin``,
  ``update-index --add --cacheinfo 120000,...``, ``checkout -- up``), then ``git -C up
  reset --hard exo/w1`` (or ``cd up && git stash``, ``--work-tree=up``, ``--git-dir=gd``
  with ``gd -> ../../.git``) moved the lead's ``main`` and reset its checkout: judged as
  git in the worktree, by the link's name;
- ``sub/.git`` saying ``gitdir: <project>/.git``, unpacked by ``tar xf`` (allowed), then
  ``git -C sub commit`` committed onto the lead's ``main``;
- the worktree's own ``.git`` file replaced the same way, then a plain ``git commit``;
- ``HEAD`` and ``commondir`` written by ``echo`` into ``sub`` (or the worktree's root,
  with ``--bare``): git took the directory for a git dir sharing the lead's refs, and
  ``git -C sub reset --soft exo/w1`` moved ``main``;

Each is now asked; git in a nested repository of the worker's own, and all of its
ordinary work in a real linked worktree, stay allowed.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import GIT_ENV, git


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """The lead's checkout ``tmp_path/p`` on ``main`` and worker w1's linked worktree on
    ``exo/w1`` with a commit of its own."""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = scratch_worktree(tmp_path)
    wt.rmdir()
    git(root, "init", "-q", "-b", "main")
    (root / "Makefile").write_text("all:\n\techo lead\n")
    git(root, "add", "Makefile")
    git(root, "commit", "-qm", "lead")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    (wt / "w1.txt").write_text("w1\n")
    git(wt, "add", "w1.txt")
    git(wt, "commit", "-qm", "w1")
    return root, wt


def _step(command: str, root: Path, wt: Path) -> None:
    """Ask the gate about ``command`` (it must be allowed: a step of the attack), run it."""
    decision = bash(command, root=str(root))
    assert isinstance(decision, Allow), (command, decision)
    _run(command, wt)


def _run(command: str, wt: Path) -> None:
    done = subprocess.run(["bash", "-c", command], cwd=wt, timeout=60,
                          env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, (command, done.stderr)


def _link_by_plumbing(name: str, target: str, root: Path, wt: Path) -> None:
    """``name -> target`` in the worktree, made with commands the gate allows."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=wt, input=target,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    _step(f"printf {target} | git hash-object -w --stdin", root, wt)
    _step(f"git update-index --add --cacheinfo 120000,{blob},{name}", root, wt)
    _step(f"git checkout -- {name}", root, wt)
    assert os.readlink(wt / name) == target


THROUGH_UP = [
    "git -C up reset -q --hard exo/w1",
    "cd up && git reset -q --hard exo/w1",
    "git --work-tree=up --git-dir=gd reset -q --hard exo/w1",
    "git --git-dir=gd update-ref refs/heads/main exo/w1",
]


@pytest.mark.parametrize("command", THROUGH_UP)
def test_the_real_effect_git_through_a_link_moves_the_leads_main(
    tmp_path: Path, command: str
) -> None:
    root, wt = _project(tmp_path)
    _link_by_plumbing("up", "../..", root, wt)
    _link_by_plumbing("gd", "../../.git", root, wt)
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(root, "rev-parse", "main") == git(wt, "rev-parse", "exo/w1")  # moved
    assert not isinstance(decision, Allow), (command, decision)


def _tar_with_gitfile(path: Path, member: str, gitdir: Path) -> None:
    data = f"gitdir: {gitdir}\n".encode()
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(
    ("member", "command"),
    [("sub/.git", "git -C sub commit -q --allow-empty -m evil"),
     ("sub/.git", "cd sub && git reset -q --hard exo/w1"),
     (".git", "git commit -q --allow-empty -m evil")],
)  # fmt: skip
def test_the_real_effect_a_planted_gitfile_moves_the_leads_main(
    tmp_path: Path, member: str, command: str
) -> None:
    root, wt = _project(tmp_path)
    before = git(root, "rev-parse", "main")
    (wt / "sub").mkdir()
    _tar_with_gitfile(wt / "t.tar", member, root / ".git")
    _step("tar xf t.tar", root, wt)
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(root, "rev-parse", "main") != before  # the lead's main moved
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    ("where", "command"),
    [("sub", "git -C sub reset -q --soft exo/w1"),
     ("sub", "cd sub && git reset -q --soft exo/w1"),
     (".", "git --bare reset -q --soft exo/w1")],
)  # fmt: skip
def test_the_real_effect_a_directory_git_takes_for_a_git_dir_moves_the_leads_main(
    tmp_path: Path, where: str, command: str
) -> None:
    """``HEAD`` and ``commondir``, two files ``echo`` writes: git takes the directory
    holding them for a git dir (one it finds, or ``--bare``'s), sharing the lead's refs."""
    root, wt = _project(tmp_path)
    before = git(root, "rev-parse", "main")
    (wt / "sub").mkdir()
    common = os.path.relpath(root / ".git", wt / where)
    _step(f"echo 'ref: refs/heads/main' > {where}/HEAD", root, wt)
    _step(f"echo {common} > {where}/commondir", root, wt)
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(root, "rev-parse", "main") != before  # the lead's main moved
    assert not isinstance(decision, Allow), (command, decision)


def test_the_real_effect_a_push_from_such_a_directory_pushes_the_leads_main(
    tmp_path: Path,
) -> None:
    """``git -C sub push origin`` pushes ``sub``'s current branch, the lead's ``main``
    with its unpushed work: judged before as a push of the worker's own branch."""
    root, wt = _project(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "-u", "origin", "main")
    (root / "m2").write_text("the lead's unpushed work\n")
    git(root, "add", "m2")
    git(root, "commit", "-qm", "unpushed")
    (wt / "sub").mkdir()
    (wt / "sub" / "HEAD").write_text("ref: refs/heads/main\n")
    (wt / "sub" / "commondir").write_text("../../../.git\n")
    command = "git -C sub push -q origin"
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(remote, "rev-parse", "main") == git(root, "rev-parse", "main")  # pushed
    assert not isinstance(decision, Allow), (command, decision)
    assert isinstance(bash("git push -q origin", root=str(root)), Allow)


def test_the_real_effect_the_same_made_and_used_in_one_line(tmp_path: Path) -> None:
    """The files not there when the line is judged: an earlier command of the line that
    writes a ``HEAD``/``commondir`` or unpacks a tree makes a later writing git asked."""
    root, wt = _project(tmp_path)
    _tar_with_gitfile(wt / "t.tar", ".git", root / ".git")
    lines = [
        "mkdir sub && echo 'ref: refs/heads/main' > sub/HEAD && echo ../../../.git"
        " > sub/commondir && git -C sub reset -q --soft exo/w1",
        "tar xf t.tar && git commit -q --allow-empty -m evil",
    ]
    for command in lines:
        before = git(root, "rev-parse", "main")
        decision = bash(command, root=str(root))
        _run(command, wt)
        assert git(root, "rev-parse", "main") != before, command  # the lead's main moved
        assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    "command",
    ["git add -A && git commit -qm x",
     "git stash -q && git stash pop -q",
     "echo x > notes.txt && git add notes.txt && git commit -qm n",
     "cp w1.txt w2.txt && git add w2.txt && git commit -qm c"],
)  # fmt: skip
def test_ordinary_lines_ending_in_git_stay_allowed(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    (wt / "w1.txt").write_text("changed\n")
    decision = bash(command, root=str(root))
    assert isinstance(decision, Allow), (command, decision)
    _run(command, wt)


@pytest.mark.parametrize(
    "command",
    ["mv old.py new.py && git add -A && git commit -qm rename",
     "mv a.py b.py && git commit -qam rename",
     "cp -r templates/ build/ && git add build",
     "unzip -oq x.zip && git add -A",
     "unzip -oq missing.zip; git add -A"],
)  # fmt: skip
def test_ordinary_moves_copies_and_unzips_before_git_stay_allowed(
    tmp_path: Path, command: str
) -> None:
    """What a plain ``mv``/``cp -r`` names lies nowhere git looks for its ``.git``, and
    the archive holds no ``.git``, ``HEAD`` or ``commondir`` (asked since 15d3021)."""
    root, wt = _project(tmp_path)
    for name in ("old.py", "a.py"):
        (wt / name).write_text("x = 1\n")
    git(wt, "add", "old.py", "a.py")
    git(wt, "commit", "-qm", "py")
    (wt / "templates").mkdir()
    (wt / "templates" / "t.html").write_text("<p>\n")
    with zipfile.ZipFile(wt / "x.zip", "w") as archive:
        archive.writestr("src/x.py", "x = 2\n")
    decision = bash(command, root=str(root))
    assert isinstance(decision, Allow), (command, decision)
    _run(command.replace("missing.zip;", "missing.zip || true;"), wt)


def _zip_with_gitfile(path: Path, member: str, gitdir: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, f"gitdir: {gitdir}\n")


@pytest.mark.parametrize(
    "command",
    ["cp -r t/. . && git commit -q --allow-empty -m evil",
     "cp -rT t . && git commit -q --allow-empty -m evil",
     "unzip -oq z.zip && git commit -q --allow-empty -m evil",
     "unzip -oq z && git commit -q --allow-empty -m evil"],
)  # fmt: skip
def test_the_real_effect_a_gitfile_copied_or_unzipped_in_one_line(
    tmp_path: Path, command: str
) -> None:
    """A ``cp -r`` into the worktree's root, or an archive holding a ``.git``: asked."""
    root, wt = _project(tmp_path)
    (wt / "t").mkdir()
    (wt / "t" / ".git").write_text(f"gitdir: {root / '.git'}\n")
    _zip_with_gitfile(wt / "z.zip", ".git", root / ".git")
    before = git(root, "rev-parse", "main")
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(root, "rev-parse", "main") != before, command  # the lead's main moved
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    "command",
    ["cp -r t sub && git -C sub reset --soft exo/w1",
     "mv * d/ && git add -A",
     "cp -rb a b && git add -A",
     "cd x && unzip -o ok.zip && git add -A",
     "unzip -o sub.zip && git add -A",
     "unzip -o bad.zip && git add -A",
     "unzip -o 'x*.zip' && git add -A",
     "unzip -L ok.zip && git add -A",
     "unzip -o ok.zip && git checkout ok.zip && git commit -qm x",
     "unzip -o ok.zip | cp bad.zip ok.zip; git commit -qam x"],
)  # fmt: skip
def test_what_may_make_a_git_dir_where_git_runs_stays_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    with zipfile.ZipFile(wt / "ok.zip", "w") as archive:
        archive.writestr("src/x.py", "x = 2\n")
    with zipfile.ZipFile(wt / "sub.zip", "w") as archive:
        archive.writestr("sub/HEAD", "ref: refs/heads/main\n")
    (wt / "bad.zip").write_text("not a zip\n")
    assert not isinstance(bash(command, root=str(root)), Allow), command


def test_git_deleting_the_worktrees_gitfile_finds_the_leads_repository(tmp_path: Path) -> None:
    """With no ``.git`` in the worktree, git goes on up to the lead's: asked."""
    root, wt = _project(tmp_path)
    (wt / ".git").unlink()
    decision = bash("git commit -q --allow-empty -m evil", root=str(root))
    assert not isinstance(decision, Allow), decision


ORDINARY = [
    "git commit -q -am x",
    "git commit -q --allow-empty -m y",
    "git reset -q --hard HEAD",
    "git stash -q && git rebase -q main && git stash pop -q",
    "git log --oneline",
    "git status",
    "git stash -q",
    "git -C nested commit -q --allow-empty -m n",
    "cd nested && git reset -q --hard HEAD",
    "git -C inside log",
    "git -C up log -1",
    "git -C inside status",
    "git init -q --bare own.git && git -C own.git log --oneline -1 || true",
    "git -C inside reset -q --hard HEAD",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_git_in_a_real_worktree_stays_allowed(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    (wt / "w1.txt").write_text("changed\n")
    git(wt, "init", "-q", "-b", "main", "nested")
    git(wt / "nested", "commit", "-q", "--allow-empty", "-m", "n0")
    (wt / "inside").mkdir()
    (wt / "up").symlink_to("../..")
    decision = bash(command, root=str(root))
    assert isinstance(decision, Allow), (command, decision)
    _run(command, wt)


def test_git_in_a_submodule_of_the_worktree_stays_allowed(tmp_path: Path) -> None:
    """A submodule's ``.git`` names its git dir in the worktree's own (``modules/lib``),
    whose ``core.worktree`` leads back into the worktree: its own work."""
    root, wt = _project(tmp_path)
    lib = tmp_path / "lib"
    git(tmp_path, "init", "-q", "-b", "main", str(lib))
    git(lib, "commit", "-q", "--allow-empty", "-m", "l")
    git(wt, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(lib), "lib")
    for command in ("git -C lib commit -q --allow-empty -m x", "cd lib && git checkout -q -b f"):
        decision = bash(command, root=str(root))
        assert isinstance(decision, Allow), (command, decision)
        _run(command, wt)


@pytest.mark.parametrize(
    "command",
    ["git checkout -q feature-x && git reset -q --hard exo/w1 && git checkout -q exo/w1",
     "git switch -q feature-x && git reset -q --hard exo/w1 && git switch -q exo/w1",
     "git branch -m feature-x old-x && git branch feature-x exo/w1",
     "git rebase -q exo/w1 feature-x && git checkout -q exo/w1",
     "git bisect start HEAD HEAD~1 >/dev/null && git bisect reset feature-x >/dev/null 2>&1"
     " && git reset -q --hard exo/w1 && git checkout -q exo/w1"],
)  # fmt: skip
def test_the_real_effect_the_leads_branch_checked_out_then_reset(
    tmp_path: Path, command: str
) -> None:
    """The two steps of ``checkout -B feature-x`` (refused): the lead's existing branch
    attached (or renamed away), then moved to the worker's commit."""
    root, wt = _project(tmp_path)
    git(root, "branch", "feature-x")
    decision = bash(command, root=str(root))
    _run(command, wt)
    assert git(root, "rev-parse", "feature-x") == git(wt, "rev-parse", "exo/w1")
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    "command",
    ["git checkout -q -b tmp && git checkout -q exo/w1",
     "git checkout -q --detach feature-x && git checkout -q exo/w1",
     "git switch -q -d feature-x && git switch -q exo/w1",
     "git checkout -q feature-x -- Makefile",
     "git branch -q try && git checkout -q try && git checkout -q exo/w1",
     "git tag v1.2",
     "git bisect start HEAD HEAD~1 >/dev/null && git bisect reset >/dev/null",
     "git checkout -q exo/w1"],
)  # fmt: skip
def test_ordinary_branch_work_in_a_real_worktree_stays_allowed(
    tmp_path: Path, command: str
) -> None:
    root, wt = _project(tmp_path)
    git(root, "branch", "feature-x")
    decision = bash(command, root=str(root))
    assert isinstance(decision, Allow), (command, decision)
    _run(command, wt)


def test_the_real_effect_rebase_update_refs_moves_the_leads_branch(tmp_path: Path) -> None:
    """``--update-refs`` moves every local branch pointing into the rebased commits: the
    lead's ``review``, made at the worker's commit, too."""
    root, wt = _project(tmp_path)
    (root / "m2").write_text("m2\n")
    git(root, "add", "m2")
    git(root, "commit", "-qm", "m2")
    git(root, "branch", "review", "exo/w1")
    before = git(root, "rev-parse", "review")
    for command in ("git rebase -q --update-refs main", "git rebase -q --upd main"):
        assert not isinstance(bash(command, root=str(root)), Allow), command
    _run("git rebase -q --update-refs main", wt)
    assert git(root, "rev-parse", "review") == git(wt, "rev-parse", "HEAD") != before
    assert isinstance(bash("git rebase -q main", root=str(root)), Allow)


def test_the_real_effect_a_branch_named_as_the_leads_tag_takes_its_checkout(
    tmp_path: Path,
) -> None:
    """``git branch v1.0 exo/w1`` beside the lead's tag ``v1.0``: the lead's ``git
    checkout v1.0`` takes the branch, the worker's commit."""
    root, wt = _project(tmp_path)
    git(root, "tag", "v1.0")
    for command in ("git checkout -q v1.0 && git checkout -q exo/w1", "git branch -q v1.1"):
        assert isinstance(bash(command, root=str(root)), Allow), command  # a tag: detached
        _run(command, wt)
    command = "git branch v1.0 exo/w1"
    decision = bash(command, root=str(root))
    _run(command, wt)
    git(root, "checkout", "-q", "v1.0")
    assert git(root, "rev-parse", "HEAD") == git(wt, "rev-parse", "exo/w1")
    assert not isinstance(decision, Allow), (command, decision)
    for other in ("git checkout -q -b v1.0", "git switch -c v1.0", "git branch -m v1.1 v1.0"):
        assert not isinstance(bash(other, root=str(root)), Allow), other
