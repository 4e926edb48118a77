"""What a worker's git shares with the lead's checkout, found probing as a worker (a sixth
round), each allowed and reproduced for real in a scratch project with a linked worktree:

- ``git init --template=./tpl`` in a linked worktree copied the template's hooks into the
  COMMON ``.git`` (the lead's next commit ran them; so did the server's own ``git
  worktree add``), and ``git init --separate-git-dir=./sep`` moved the lead's whole
  ``.git`` into the worker's worktree (``git clean -fdx`` then deleted it);
- ``git lfs``: ``migrate import --everything`` rewrote the lead's ``main``, ``install
  --force``/``update --force`` overwrote ExoMonad's ``pre-push`` gate, ``track`` installs
  hooks in the common ``.git``;
- git's option prefixes: ``git gc --prun=now`` (and ``repack -a -d``, which git's
  ``--prune`` rule did not model) deleted the lead's dropped stash;
- ``git notes --ref commits remove main`` (the value of ``--ref`` as its own word);
- ``git checkout -B feature-x`` (and ``switch -C``, ``branch -M/-C``, ``worktree add
  -B``) moved the lead's or another worker's branch; ``git fetch . +HEAD:refs/tags/v1.0``
  moved the lead's tag;
- ``git fetch --prune-tags --prune origin`` deleted the lead's local tags, ``git config
  user.name x`` wrote the shared ``.git/config``, ``git stash store``/``pop stash@{1}``
  edited the shared stash list.

Each is now Unknown (a person decides); ordinary uses keep their verdicts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.request import ToolRequest
from tests.policy.worker import bash, engine_for, scratch_worktree
from tests.support.git import GIT_ENV, git

NOT_ALLOWED = [
    # F1, F2: git init re-initialising the repository the worktree shares
    "git init --template=./tpl",
    "git init --templ=tpl",
    "git init --template tpl .",
    "git init -q --template=tpl",
    "git init --separate-git-dir=./sep",
    "git init --sep=sep",
    "git init --shared=0777",
    "git init --shared",
    "git init --object-format=sha256",
    "git init --initial-branch=x",
    "git init -b x .",
    "git init --bare --template=tpl",
    "git -C . init --template=tpl",
    "git init --template=tpl ../w2",
    "git init --template=tpl /p",
    "git --git-dir=.git init --template=tpl",
    'git init --template=tpl "$D"',
    "mkdir -p x && git init --template=tpl x",
    # F3: git lfs, but what only reads
    "git lfs migrate import --everything",
    "git lfs migrate import --everything --include='*.md' --yes",
    "git lfs install --force",
    "git lfs install",
    "git lfs update --force",
    "git lfs track '*.bin'",
    "git lfs untrack '*.bin'",
    "git lfs uninstall",
    "git lfs prune",
    "git lfs fetch --all",
    "git lfs pull",
    "git lfs push origin main",
    "git lfs checkout",
    "git lfs fsck",
    "git lfs logs clear",
    "git lfs $X",
    "git lfs --foo ls-files",
    # F4: option prefixes, repack -d
    "git gc --prun=now",
    "git gc --pru=now",
    "git gc --cruft --prun=now",
    "git gc --p=now",
    "git repack -a -d",
    "git repack -ad",
    "git repack -A -d --unpack-unreachable=now",
    "git repack --cruft -d --cruft-expiration=now",
    "git repack -a --delete",
    "git repack -d",
    "git branch --forc feature-x HEAD",  # --force, abbreviated: the lead's branch moved
    "git branch -m --forc a feature-x",
    "git apply --unsafe p.diff",  # --unsafe-paths
    "git checkout --ignore-other exo/w1",  # --ignore-other-worktrees
    # F5: notes --ref VALUE VERB
    "git notes --ref commits remove main",
    "git notes --ref X prune",
    "git notes --ref X copy -f a b",
    "git notes --ref X add -f -m x",
    "git notes --ref X merge y",
    "git notes --re X remove main",
    "git notes add --forc -m x",
    # F6: forced onto a branch that may be the lead's or another worker's
    "git checkout -B feature-x",
    "git checkout -B feature",
    "git switch -C topic origin/main",
    "git checkout -q -B feature-x && git checkout -q exo/w1",
    "git checkout -Bfeature-x",
    "git switch -C exo/w2",
    "git switch --force-create feature-x",
    "git switch --force-c=feature-x",
    "git branch -M exo/w1 feature-x",
    "git branch -M feature-x",
    "git branch -M feature",
    "git branch -C exo/w1 feature-x",
    "git branch -C feature-x",
    "git worktree add -B feature-x y HEAD",
    "git checkout -B exo/w1-other",
    "git checkout -B $B",
    # F6: fetches into tags and remote-tracking refs from the local repository, or forced
    "git fetch . +HEAD:refs/tags/v1.0",
    "git fetch . +HEAD:refs/remotes/origin/main",
    "git fetch . HEAD:refs/tags/v1.0",
    "git fetch . HEAD:refs/remotes/origin/main",
    "git fetch ../.. main:refs/tags/x",
    "git fetch /p main:refs/remotes/origin/main",
    "git fetch file:///p main:refs/tags/x",
    "git fetch origin +main:refs/tags/v1.0",
    "git fetch origin +main:refs/remotes/origin/main",
    "git fetch -f origin main:refs/tags/v1.0",
    "git fetch --force origin main:refs/tags/v1.0",
    "git pull . +HEAD:refs/tags/v1.0",
    "git fetch -o x . HEAD:refs/tags/x",
    "git fetch --depth 1 . HEAD:refs/tags/x",
    # F7
    "git fetch --prune-tags --prune origin",
    "git fetch -P -p origin",
    "git fetch -pP origin",
    "git fetch --prune-t origin",
    "git pull --prune-tags origin",
    "git config user.name x",
    "git config commit.gpgsign true",
    "git config --local user.name x",
    "git config user.email a@b",
    "git config user.name evil",
    "git config --add user.name x",
    "git stash store abc",
    "git stash store -m x abc",
    "git stash pop stash@{1}",
    "git stash pop 1",
    "git stash pop --index stash@{2}",
    "git stash branch b stash@{1}",
]

#: Ordinary work: each keeps its verdict (all allowed).
ORDINARY = [
    "git init newrepo",
    "git init -q newrepo",
    "git init",
    "git init -q",
    "git init .",
    "git init --template=tpl newrepo",
    "git init -b main newrepo",
    "git checkout -b feature",
    "git checkout -B exo/w1",
    "git checkout -B exo/w1 origin/main",
    "git switch -c x",
    "git switch -C exo/w1 origin/main",
    "git branch -m old new",
    "git branch -m feature",
    "git branch -M exo/w1 exo/w1/old",
    "git branch -c exo/w1 backup",
    "git worktree add -b feat sub",
    "git gc",
    "git gc --prune",
    "git gc --aggressive",
    "git repack -a",
    "git repack",
    "git notes add -m x",
    "git notes --ref=review add -m x",
    "git notes --ref review show HEAD",
    "git notes list",
    "git fetch origin",
    "git fetch --prune origin",
    "git fetch -p origin",
    "git fetch --tags origin",
    "git fetch origin main:refs/remotes/origin/main",
    "git fetch origin main:refs/tags/new-tag",
    "git stash",
    "git stash pop",
    "git stash pop stash@{0}",
    "git stash apply",
    "git stash apply stash@{1}",
    "git stash list",
    "git stash show -p stash@{1}",
    "git config --get user.name",
    "git config user.name",
    "git config --list",
    "git config --worktree user.name x",
    "git -c user.name=x commit -q --allow-empty -m y",
    "git lfs ls-files",
    "git lfs ls-files --all",
    "git lfs status",
    "git lfs status --porcelain",
    "git lfs env",
    "git lfs version",
    "git lfs --version",
    "git lfs logs",
    "git lfs logs last",
    "git lfs help migrate",
    "git lfs",
    "git branch --format='%(refname)'",
    "git branch --no-track x",
    "git apply fix.diff",
    "git status --ignored",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_shared_state_writes_are_not_allowed(command: str) -> None:
    decision = bash(command)
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_git_work_keeps_its_verdict(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)


def test_the_lead_may_still_reset_its_own_branches_and_config() -> None:
    """The rules on what a worktree shares are a worker's: the lead's checkout is no
    linked worktree (its requests carry none), and it stays allowed there."""
    for command in ("git checkout -B feature", "git config user.name lead",
                    "git switch -C topic origin/main"):  # fmt: skip
        request = ToolRequest("claude", "tl", "lead", "Bash", {"command": command}, cwd="/p")
        decision = engine_for("/p").decide(request)
        assert isinstance(decision, Allow), (command, decision)


# --- the real effects -------------------------------------------------------------------


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """The lead's checkout ``tmp_path/p`` on ``main`` (one commit, a branch
    ``feature-x``, a tag ``v1.0``) and worker w1's linked worktree on ``exo/w1`` with a
    commit of its own: laid out as the policy tests' ``/p`` and its worker."""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = scratch_worktree(tmp_path)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("lead\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "lead")
    git(root, "branch", "feature-x")
    git(root, "tag", "v1.0")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    (wt / "w1.txt").write_text("w1\n")
    git(wt, "add", "w1.txt")
    git(wt, "commit", "-qm", "w1")
    return root, wt


def _run(command: str, cwd: Path, home: Path | None = None) -> None:
    env = {**os.environ, **GIT_ENV}
    if home is not None:  # a global config of its own: never /dev/null, which git-lfs replaced
        env["HOME"], env["GIT_CONFIG_GLOBAL"] = str(home), str(home / ".gitconfig")
    done = subprocess.run(["bash", "-c", command], cwd=cwd, timeout=60, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, (command, done.stderr)


def _judged(command: str, root: Path) -> None:
    decision = bash(command, root=str(root))
    assert not isinstance(decision, Allow), (command, decision)


def test_the_real_effect_init_template_plants_the_leads_hook(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    hook = wt / "tpl" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    hook.write_text('#!/bin/sh\necho planted > "$(git rev-parse --show-toplevel)/PWNED"\n')
    hook.chmod(0o755)
    command = "git init -q --template=./tpl"
    _run(command, wt)
    assert (root / ".git" / "hooks" / "pre-commit").exists()  # the COMMON .git
    (root / "x").write_text("x\n")
    git(root, "add", "x")
    git(root, "commit", "-qm", "lead's next commit")
    assert (root / "PWNED").read_text() == "planted\n"  # the lead's commit ran it
    _judged(command, root)


def test_the_real_effect_init_separate_git_dir_moves_the_leads_repository(
    tmp_path: Path,
) -> None:
    root, wt = _project(tmp_path)
    command = "git init -q --separate-git-dir=./sep"
    _run(command, wt)
    assert (root / ".git").is_file()  # the lead's .git: now a link into the worktree
    assert str(wt / "sep") in (root / ".git").read_text()
    _judged(command, root)


def test_the_real_effect_init_of_a_new_nested_repository_is_its_own(tmp_path: Path) -> None:
    """What stays allowed: a template given to a new repository inside the worktree
    lands in that repository, not in the one the worktree shares."""
    root, wt = _project(tmp_path)
    (wt / "tpl" / "hooks").mkdir(parents=True)
    (wt / "tpl" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    command = "git init -q --template=tpl newrepo"
    assert isinstance(bash(command, root=str(root)), Allow)
    _run(command, wt)
    assert (wt / "newrepo" / ".git" / "hooks" / "pre-commit").exists()
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


def test_the_real_effect_init_in_a_subdirectory_depends_on_what_it_is(tmp_path: Path) -> None:
    """``cd sub && git init --template=...``: in a plain directory, a new repository of its
    own (allowed); through a link to the worktree's root, the shared one (not allowed:
    the link is followed, ``sub/.git`` exists)."""
    root, wt = _project(tmp_path)
    tpl = wt / "tpl"
    (tpl / "hooks").mkdir(parents=True)
    (tpl / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    (wt / "sub").mkdir()
    plain = f"cd sub && git init -q --template={tpl}"
    assert isinstance(bash(plain, root=str(root)), Allow)
    _run(plain, wt)
    assert (wt / "sub" / ".git" / "hooks" / "pre-commit").exists()
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    (wt / "link").symlink_to(".")
    linked = f"cd link && git init -q --template={tpl}"
    _judged(linked, root)
    _run(linked, wt)
    assert (root / ".git" / "hooks" / "pre-commit").exists()  # the COMMON .git


def test_the_real_effect_lfs_update_force_replaces_a_shared_hook(tmp_path: Path) -> None:
    assert shutil.which("git-lfs"), "git-lfs is missing: `make setup` installs it"
    root, wt = _project(tmp_path)
    gate = root / ".git" / "hooks" / "pre-push"
    gate.write_text("#!/bin/sh\nexit 1  # the lead's push gate\n")
    command = "git lfs update --force"
    _run(command, wt, home=tmp_path)
    assert "git lfs" in gate.read_text()  # the gate is gone
    _judged(command, root)


def _dropped_stash(root: Path) -> str:
    """The lead stashes work, packs it, and drops the entry: its commit, unreachable now,
    is what ``git stash apply <sha>`` would still bring back."""
    (root / "README.md").write_text("the lead's uncommitted work\n")
    git(root, "stash", "-q")
    sha = git(root, "rev-parse", "stash@{0}").strip()
    git(root, "repack", "-a", "-d", "-q")  # its work packed, as after any `git gc`
    git(root, "stash", "drop", "-q")
    git(root, "cat-file", "-e", sha)
    return sha


@pytest.mark.parametrize("command", ["git gc -q --prun=now", "git repack -a -d -q"])
def test_the_real_effect_the_leads_dropped_stash_is_deleted(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    sha = _dropped_stash(root)
    _run(command, wt)
    gone = subprocess.run(["git", "-C", str(root), "cat-file", "-e", sha], check=False,
                          capture_output=True)  # fmt: skip
    assert gone.returncode != 0  # the lead's work: gone for good
    _judged(command, root)


def test_the_real_effect_notes_ref_value_word_removes_the_leads_note(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    git(root, "notes", "add", "-m", "the lead's note", "main")
    command = "git notes --ref commits remove main"
    _run(command, wt)
    assert git(root, "notes", "list") == ""
    _judged(command, root)


@pytest.mark.parametrize(
    ("command", "ref"),
    [("git checkout -q -B feature-x && git checkout -q exo/w1", "feature-x"),
     ("git fetch -q . +HEAD:refs/tags/v1.0", "v1.0")],
)  # fmt: skip
def test_the_real_effect_the_leads_ref_moves_to_the_workers_commit(
    tmp_path: Path, command: str, ref: str
) -> None:
    root, wt = _project(tmp_path)
    before = git(root, "rev-parse", ref)
    _run(command, wt)
    assert git(root, "rev-parse", ref) == git(wt, "rev-parse", "exo/w1") != before
    _judged(command, root)


def test_the_real_effect_prune_tags_deletes_the_leads_tag(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    command = "git fetch -q --prune-tags --prune origin"
    _run(command, wt)
    assert git(root, "tag", "-l") == ""  # v1.0, never pushed: deleted
    _judged(command, root)


def test_the_real_effect_config_writes_the_shared_config(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    command = "git config user.name impostor"
    _run(command, wt)
    assert git(root, "config", "user.name").strip() == "impostor"  # the lead's commits
    _judged(command, root)


def test_the_real_effect_stash_pop_of_another_entry_drops_the_leads_work(
    tmp_path: Path,
) -> None:
    root, wt = _project(tmp_path)
    (root / "README.md").write_text("the lead's uncommitted work\n")
    git(root, "stash", "-q")
    (wt / "w1.txt").write_text("the worker's\n")
    git(wt, "stash", "-q")
    command = "git stash pop -q stash@{1}"
    _run(command, wt)
    assert len(git(root, "stash", "list").splitlines()) == 1  # the lead's entry: dropped
    _judged(command, root)


def test_the_real_effect_a_template_from_the_state_dir_copies_the_token(tmp_path: Path) -> None:
    """Tried at the end of the stop: a NEW nested repository is the worker's own, but its
    template is read whole; one naming ``.exomonad/`` copies the lead's token into it."""
    root, wt = _project(tmp_path)
    state = root / ".exomonad"
    state.mkdir()
    (state / "lead.token").write_text("lead-secret\n")
    for command in ("git init -q n --template=../../.exomonad",
                    "git init -q --templ=../../.exomonad n"):  # fmt: skip
        _run(command, wt)
        assert (wt / "n" / ".git" / "lead.token").read_text() == "lead-secret\n"  # the harm
        shutil.rmtree(wt / "n")
        decision = bash(command, root=str(root))
        assert isinstance(decision, Deny), (command, decision)
