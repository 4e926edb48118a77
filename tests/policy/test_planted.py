"""A link in a worker's worktree that leads into the state dir or a credential store.

Found trying the gate as a worker: a link ``notes.txt -> ../../.exomonad/lead.token``
made with git plumbing from a blob (the target never spelled on a command line), then
read by a reader of the whole tree or of names it makes at run time: ``grep -R . .``,
``find . -exec cat {} +``, ``git ls-files | xargs cat``, ``echo notes.txt | xargs cat``
each printed the lead's token, allowed. Now every call of that worker that may read
files it does not name is refused until the link is gone; a call that names its files is
judged by them, as before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy import planted
from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.planted import links_below
from tests.policy.test_state_tree_live import QUICK_ESCALATIONS, served
from tests.policy.worker import bash, decide, scratch_worktree
from tests.support.tmux import TmuxServer

SECRET = "exo_lead_planted_secret"
LEAKS = ["grep -R . .", "find . ! -type d -exec cat {} +", "git ls-files | xargs cat",
         "echo notes.txt | xargs cat", "zip -q -0 -r - . | cat", "rg -L -uu ."]  # fmt: skip


def test_links_are_found_at_any_depth_and_linked_dirs_not_entered(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "l").symlink_to("/etc/hostname")
    (tmp_path / "d").symlink_to(tmp_path / "a")  # a linked directory: a link, not entered
    assert sorted(links_below(str(tmp_path)) or []) == sorted([str(tmp_path / "d"),
                                                               str(deep / "l")])  # fmt: skip


def test_a_later_change_anywhere_below_is_seen_by_the_next_call(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert links_below(str(tmp_path)) == []
    (deep / "x").symlink_to("elsewhere")
    assert links_below(str(tmp_path)) == [str(deep / "x")]
    (deep / "x").unlink()
    moved = tmp_path / "new"
    moved.mkdir()
    (moved / "y").symlink_to("elsewhere")
    os.rename(moved, deep / "c")  # a directory holding a link, moved in
    assert links_below(str(tmp_path)) == [str(deep / "c" / "y")]
    assert links_below(str(tmp_path / "gone")) == []


def test_a_tree_too_large_to_look_through_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, wt = scratch_worktree(tmp_path)
    for name in "abc":
        (wt / name).mkdir()
    monkeypatch.setattr(planted, "MAX_DIRS", 3)
    assert links_below(str(wt)) is None
    assert isinstance(bash("ls", root=str(root)), Allow)  # names nothing it reads
    verdict = bash("grep -r x .", root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert "more than 3 directories" in verdict.reason


def _plant(wt: Path, target: str, name: str = "notes.txt") -> None:
    """As a worker did: the link made by git from a blob, its target never spelled."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=wt, input=target,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"120000,{blob},{name}"],
                   cwd=wt, check=True)  # fmt: skip
    subprocess.run(["git", "checkout-index", "-f", name], cwd=wt, check=True)
    assert (wt / name).is_symlink()


NOT_NAMED = [*LEAKS, "grep -r x .", "cat $(git ls-files)", "rg --follow x", "fd -L -x cat",
             'git ls-files | while read f; do head "$f"; done',
             "git ls-files -z | wc -c --files0-from=-",
             "git ls-files | tar -chf - -T -"]  # fmt: skip


@pytest.mark.parametrize("command", NOT_NAMED)
def test_a_read_of_files_not_named_is_refused_while_a_link_into_the_state_is_there(
    tmp_path: Path, command: str
) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET)
    assert isinstance(bash(command, root=str(root)), Allow)
    (wt / "notes.txt").symlink_to("../../.exomonad/lead.token")
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), verdict
    assert f"{wt}/notes.txt" in verdict.reason
    for named in ("ls", "git status", "cat a.txt", "python3 -m pytest -q"):
        assert isinstance(bash(named, root=str(root)), Allow), named  # judged as before
    own = decide("mcp__exomonad__notify_parent", {"status": "failure", "message": "stuck"},
                 root=str(root))  # fmt: skip
    assert isinstance(own, Allow), own
    (wt / "notes.txt").unlink()
    assert isinstance(bash(command, root=str(root)), Allow)


def test_a_link_to_a_credential_store_is_refused_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key")
    monkeypatch.setenv("HOME", str(home))
    root, wt = scratch_worktree(tmp_path)
    (wt / "py").symlink_to("/usr/bin/env")  # a link out that is an ordinary read
    assert isinstance(bash("grep -R key .", root=str(root)), Allow)
    (wt / "k").symlink_to(home / ".ssh" / "id_ed25519")
    verdict = bash("grep -R key .", root=str(root))
    assert isinstance(verdict, Deny), verdict
    assert "credentials" in verdict.reason


def test_a_planted_link_no_longer_leaks_through_the_real_hook(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    """A real server and hook client, a worker's real worktree: before the link each
    tree reader is allowed and prints nothing secret; after it, each is refused, and
    run anyway each prints the lead's token (what was allowed before this fix)."""
    with served(tmp_path, tmux_server, QUICK_ESCALATIONS) as live:
        token, wt = live.spawn_worker()
        secret = (live.state / "lead.token").read_text().strip()
        for command in LEAKS:
            assert live.hook(command, token=token, cwd=wt)["permissionDecision"] == "allow"
        _plant(wt, os.path.relpath(live.state / "lead.token", wt))
        for command in LEAKS:
            answer = live.hook(command, token=token, cwd=wt)
            assert answer["permissionDecision"] == "deny", (command, answer)
            ran = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True,
                                 check=False)  # fmt: skip
            assert secret.encode() in ran.stdout, (command, ran.stderr)


def _state(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET)
    return root, wt


@pytest.mark.parametrize(
    "command",
    ["zgrep . notes.txt", "diff --to-file=notes.txt /dev/null", "mawk 1 notes.txt",
     "sqlite3 -init notes.txt :memory: 'select 1'", "cat < no*", "sort < notes.tx?",
     "ls | tar chfT - - | strings", "ls | tar -ch --files=- -f -", "ls | xz --files -c"],
)  # fmt: skip
def test_what_the_policy_does_not_model_as_a_read_is_caught_too(
    tmp_path: Path, command: str
) -> None:
    """Found reviewing this fix, each printed the token, allowed: a program the policy
    does not model as a reader named the link (or an option's value did), a glob in a
    redirect, a list of names in a cluster or an abbreviation. A word that leads through
    a link is read; a glob or a list of names takes the census."""
    root, wt = _state(tmp_path)
    (wt / "notes.txt").symlink_to("../../.exomonad/lead.token")
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), verdict


def test_a_link_to_a_tree_holding_the_state_is_refused(tmp_path: Path) -> None:
    root, wt = _state(tmp_path)
    (wt / "up").symlink_to("../..")
    verdict = bash("grep -R SECRET .", root=str(root))
    assert isinstance(verdict, Deny), verdict
    assert "tree holding ExoMonad's state" in verdict.reason


@pytest.mark.parametrize("kind", ["outside", "loop", "not utf-8"])
def test_a_link_whose_reach_is_not_known_is_asked(tmp_path: Path, kind: str) -> None:
    """A link to a directory outside the project (its own links are not looked
    through: one there led to the token), or one that cannot be followed, was dropped."""
    root, wt = _state(tmp_path)
    if kind == "outside":
        (tmp_path / "outside").mkdir()
        (wt / "lib").symlink_to(tmp_path / "outside")
    elif kind == "loop":
        (wt / "a").symlink_to("b")
        (wt / "b").symlink_to("a")
    else:
        os.symlink("../../.exomonad/lead.token", os.fsencode(wt) + b"/\xff.txt")
    verdict = bash("grep -R SECRET .", root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert isinstance(bash("ls", root=str(root)), Allow)


def test_links_that_stay_in_the_worktree_change_nothing(tmp_path: Path) -> None:
    """Found reviewing: a committed ``apps/web/.env -> ../../.env``, dangling in a fresh
    worktree, denied every such call as reading credentials."""
    root, wt = _state(tmp_path)
    (wt / "apps" / "web").mkdir(parents=True)
    (wt / "apps" / "web" / ".env").symlink_to("../../.env")
    (wt / ".env.sample").symlink_to(".env.example")
    for command in ("echo $HOME", "grep -rn TODO src", "git ls-files | xargs wc -l"):
        assert isinstance(bash(command, root=str(root)), Allow), command


def test_a_link_deeper_than_a_path_can_name_is_asked(tmp_path: Path) -> None:
    """Found rereading: a link 6,000 characters deep (past PATH_MAX: made a directory at
    a time, relative) could not be listed, was skipped, and ``tar -ch .``, which works
    relative too, printed the token, allowed."""
    root, wt = _state(tmp_path)
    fd = os.open(wt, os.O_RDONLY)
    for _ in range(30):
        os.mkdir("d" * 200, dir_fd=fd)
        deeper = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.symlink(str(root / ".exomonad" / "lead.token"), "t", dir_fd=fd)
    os.close(fd)
    command = "tar -chf - ."
    ran = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, check=False)
    assert SECRET.encode() in ran.stdout  # the real effect
    verdict = bash(command, root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert "cannot be listed" in verdict.reason
