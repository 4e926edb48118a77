"""Issue 10 ("Files"), directories: a symlinked ``teams/``, ``teams/<team>/``,
``inboxes/``, ``tasks/`` or ``tasks/<list>/`` is refused, never followed.

Regression: files that were symlinks were refused, but the directories on their way were
followed, so whoever could write the config root could point ``inboxes`` at another
team's inboxes (or any directory) and make ExoMonad read, deliver from, lock and write
there. The target of every link below stays byte-for-byte untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from exomonad.errors import SymlinkedDirectoryError
from exomonad.teams import (
    FileLock,
    Mailbox,
    TaskStore,
    TeamPaths,
    create_team,
    list_teams,
    load_config,
    register_synthetic,
    remove_synthetic,
    team_presence,
)
from exomonad.teams.lockjournal import recover_locks
from tests.teams.test_dirs import tree

MAILBOX_OPS: dict[str, Callable[[Mailbox], Any]] = {
    "append": lambda box: box.send("w", sender="team-lead", text="hi"),
    "append unchecked": lambda box: box.send("w", sender="x", text="hi", check_member=False),
    "read": lambda box: box.read_raw("w"),
    "read models": lambda box: box.read("w"),
    "mark read": lambda box: box.mark_read("w", ["id-1"]),
    "compact": lambda box: box.compact("w", max_entries=0),
}

TASK_OPS: dict[str, Callable[[TaskStore], Any]] = {
    "create": lambda s: s.create("two"),
    "get": lambda s: s.get("1"),
    "list": lambda s: s.list(),
    "next id": lambda s: s.next_id(),
    "update": lambda s: s.update("1", subject="changed"),
    "claim": lambda s: s.claim("1", "w"),
    "delete": lambda s: s.delete("1"),
}


@pytest.fixture
def team(root: Path) -> TeamPaths:
    paths = TeamPaths("t", root)
    create_team(paths)
    register_synthetic(paths, "w", pane="%1")
    box = Mailbox(paths, durable=False)
    box.send("w", sender="team-lead", text="secret", msg_id="id-1")
    return paths


def link_away(directory: Path, elsewhere: Path) -> Path:
    """Move ``directory`` to ``elsewhere`` and leave a symlink to it in its place."""
    directory.rename(elsewhere)
    directory.symlink_to(elsewhere)
    return elsewhere


def refused(link: Path, op: Callable[[], Any]) -> SymlinkedDirectoryError:
    with pytest.raises(SymlinkedDirectoryError) as info:
        op()
    assert info.value.path == link
    assert str(link) in str(info.value)
    assert "is a symlink" in str(info.value)
    return info.value


@pytest.mark.parametrize("op", sorted(MAILBOX_OPS))
@pytest.mark.parametrize("where", ["teams", "team", "inboxes"])
def test_inbox_operations_refuse_a_symlinked_directory(
    team: TeamPaths, tmp_path: Path, where: str, op: str
) -> None:
    link = {"teams": team.teams_dir, "team": team.team_dir, "inboxes": team.inboxes_dir}[where]
    moved = link_away(link, tmp_path / "elsewhere")
    before = tree(moved)
    refused(link, lambda: MAILBOX_OPS[op](Mailbox(team, durable=False)))
    assert tree(moved) == before  # no entry, temp file or lock dir added, nothing rewritten
    assert link.is_symlink()


@pytest.mark.parametrize("op", sorted(MAILBOX_OPS))
def test_a_dangling_inboxes_link_creates_nothing(team: TeamPaths, tmp_path: Path, op: str) -> None:
    for f in team.inboxes_dir.iterdir():
        f.unlink()
    team.inboxes_dir.rmdir()
    planted = tmp_path / "planted"
    team.inboxes_dir.symlink_to(planted)
    refused(team.inboxes_dir, lambda: MAILBOX_OPS[op](Mailbox(team, durable=False)))
    assert not planted.exists()


def test_the_lock_is_never_taken_through_a_link(team: TeamPaths, tmp_path: Path) -> None:
    """A lock needs its directory open (``FileLock(at=...)``), and opening it refuses."""
    moved = link_away(team.inboxes_dir, tmp_path / "elsewhere")
    inbox = team.inbox("w")
    refused(team.inboxes_dir, lambda: FileLock(inbox, at=team.open_dir(team.inboxes_dir)))
    refused(team.inboxes_dir, lambda: Mailbox(team, durable=False).send("w", sender="x", text="y"))
    assert sorted(p.name for p in moved.iterdir()) == ["w.json"]  # no w.json.lock


def test_a_lock_left_below_a_link_is_not_recovered(team: TeamPaths, tmp_path: Path) -> None:
    """A dead holder's journal entry names a lock dir; if a directory on its way became a
    link since, the entry is dropped and nothing is removed through it."""
    journal = tmp_path / "journal"
    journal.mkdir()
    lock = team.inboxes_dir / "w.json.lock"
    lock.mkdir()
    (journal / "999999999-0").write_text(f"{lock}\n{lock.stat().st_mtime_ns}\n{team.root}\n")
    moved = link_away(team.inboxes_dir, tmp_path / "elsewhere")
    assert recover_locks(journal) == []
    assert (moved / "w.json.lock").is_dir()
    assert list(journal.iterdir()) == []


@pytest.mark.parametrize("where", ["teams", "team"])
def test_config_reads_and_edits_refuse_a_symlinked_directory(
    team: TeamPaths, tmp_path: Path, where: str
) -> None:
    link = team.teams_dir if where == "teams" else team.config_dir
    moved = link_away(link, tmp_path / "elsewhere")
    before = tree(moved)
    refused(link, lambda: load_config(team))
    refused(link, lambda: register_synthetic(team, "w2"))
    refused(link, lambda: remove_synthetic(team, "w"))
    refused(link, lambda: Mailbox(team).check_recipient("w"))
    refused(link, lambda: team_presence(team))
    assert tree(moved) == before


def test_creating_a_team_through_a_symlinked_teams_dir_is_refused(
    root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "teams").symlink_to(elsewhere)
    refused(root / "teams", lambda: create_team(TeamPaths("new", root)))
    assert tree(elsewhere) == {}


def test_list_teams_skips_a_symlinked_team_dir(team: TeamPaths, tmp_path: Path) -> None:
    other = TeamPaths("other", team.root)
    create_team(other)
    link_away(other.config_dir, tmp_path / "elsewhere")
    assert list_teams(team.root) == ["t"]


def test_presence_refuses_a_symlinked_inboxes_dir(team: TeamPaths, tmp_path: Path) -> None:
    link_away(team.inboxes_dir, tmp_path / "elsewhere")
    refused(team.inboxes_dir, lambda: team_presence(team))


@pytest.mark.parametrize("op", sorted(TASK_OPS))
@pytest.mark.parametrize("where", ["tasks", "list"])
def test_task_operations_refuse_a_symlinked_directory(
    team: TeamPaths, tmp_path: Path, where: str, op: str
) -> None:
    TaskStore(team, durable=False).create("one")
    link = team.tasks_dir.parent if where == "tasks" else team.tasks_dir
    moved = link_away(link, tmp_path / "elsewhere")
    before = tree(moved)
    refused(link, lambda: TASK_OPS[op](TaskStore(team, durable=False)))
    assert tree(moved) == before


def test_a_dangling_task_list_link_creates_nothing(team: TeamPaths, tmp_path: Path) -> None:
    team.tasks_dir.parent.mkdir(parents=True)
    planted = tmp_path / "planted"
    team.tasks_dir.symlink_to(planted)
    refused(team.tasks_dir, lambda: TaskStore(team, durable=False).create("one"))
    assert not planted.exists()


def test_a_symlinked_config_root_still_works(tmp_path: Path) -> None:
    """Dotfile setups make ``~/.claude`` a link: that (and anything above) is followed."""
    real = tmp_path / "dotfiles" / "claude"
    real.mkdir(parents=True)
    link = tmp_path / "claude-link"
    link.symlink_to(real)
    paths = TeamPaths("t", link)
    create_team(paths)
    register_synthetic(paths, "w", pane="%1")
    box = Mailbox(paths, durable=False)
    box.send("w", sender="team-lead", text="through the root link")
    assert [m.text for m in box.read("w")] == ["through the root link"]
    store = TaskStore(paths, durable=False)
    store.create("one")
    assert store.claim("1", "w").owner == "w"
    assert (real / "teams" / "t" / "inboxes" / "w.json").is_file()
    assert (real / "tasks" / "t" / "1.json").is_file()
