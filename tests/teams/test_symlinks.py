"""Issue 10: team files that are symlinks are refused, never read or written through.

Regression: a symlinked inbox was read (and rewritten) through the link, so whoever could
write the team directory could make ExoMonad read, deliver from, or overwrite any file
the user can reach.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from exomonad.bridge.delivery import Deliverer
from exomonad.bridge.ledger import SqliteLedger
from exomonad.errors import CorruptFileError, ExomonadError, SymlinkRefusedError
from exomonad.panes import FakePaneBackend
from exomonad.teams import (
    Mailbox,
    TaskStore,
    TeamPaths,
    create_team,
    load_config,
    register_synthetic,
)
from exomonad.teams.atomic import read_bytes

SECRET = b'[{"from": "team-lead", "text": "secret", "timestamp": "2025-01-01T00:00:00.000Z"}]'


@pytest.fixture
def team(tmp_path: Path) -> TeamPaths:
    paths = TeamPaths("t", tmp_path / "claude")
    create_team(paths)
    register_synthetic(paths, "w", pane="%1")
    return paths


@pytest.fixture
def target(tmp_path: Path) -> Path:
    t = tmp_path / "elsewhere.json"
    t.write_bytes(SECRET)
    return t


def test_the_error_is_typed() -> None:
    assert issubclass(SymlinkRefusedError, CorruptFileError)
    assert issubclass(SymlinkRefusedError, ExomonadError)


def test_a_symlinked_inbox_is_neither_read_nor_written(team: TeamPaths, target: Path) -> None:
    inbox = team.inbox("w")
    inbox.unlink(missing_ok=True)
    inbox.symlink_to(target)
    box = Mailbox(team, durable=False)
    with pytest.raises(SymlinkRefusedError, match="symlink"):
        box.read_raw("w")
    with pytest.raises(SymlinkRefusedError):
        box.send("w", sender="team-lead", text="hi")
    with pytest.raises(SymlinkRefusedError):
        box.mark_read("w", ["anything"])
    with pytest.raises(SymlinkRefusedError):
        box.compact("w", max_entries=0)
    assert target.read_bytes() == SECRET
    assert inbox.is_symlink()


def test_a_dangling_inbox_symlink_creates_nothing(team: TeamPaths, tmp_path: Path) -> None:
    inbox = team.inbox("w")
    inbox.unlink(missing_ok=True)
    inbox.symlink_to(tmp_path / "planted.json")
    with pytest.raises(SymlinkRefusedError):
        Mailbox(team, durable=False).send("w", sender="team-lead", text="hi")
    assert not (tmp_path / "planted.json").exists()


def test_the_watcher_does_not_deliver_from_a_symlinked_inbox(
    team: TeamPaths, target: Path, tmp_path: Path
) -> None:
    inbox = team.inbox("w")
    inbox.unlink(missing_ok=True)
    inbox.symlink_to(target)
    fake = FakePaneBackend(echo_timeout=0, submit_timeout=0.01)
    ledger = SqliteLedger(tmp_path / "ledger.db")
    try:
        result = Deliverer(Mailbox(team, durable=False), ledger, fake).run_pass("w", "%1")
    finally:
        ledger.close()
    assert result.delivered == []
    assert result.error is not None
    assert "symlink" in result.error
    assert "secret" not in repr(fake.__dict__)
    assert target.read_bytes() == SECRET


def test_a_special_file_inbox_is_refused_without_blocking(team: TeamPaths) -> None:
    inbox = team.inbox("w")
    inbox.unlink(missing_ok=True)
    os.mkfifo(inbox)
    done: list[BaseException] = []

    def read() -> None:
        try:
            Mailbox(team, durable=False).read_raw("w")
        except BaseException as exc:
            done.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "reading a FIFO inbox blocked"
    assert isinstance(done[0], SymlinkRefusedError)


def test_a_symlinked_team_config_is_refused(team: TeamPaths, tmp_path: Path) -> None:
    real = tmp_path / "real-config.json"
    real.write_bytes(team.config_file.read_bytes())
    team.config_file.unlink()
    team.config_file.symlink_to(real)
    before = real.read_bytes()
    with pytest.raises(SymlinkRefusedError):
        load_config(team)
    with pytest.raises(SymlinkRefusedError):
        register_synthetic(team, "w2")
    with pytest.raises(SymlinkRefusedError):
        Mailbox(team).check_recipient("w")
    assert real.read_bytes() == before


def test_a_symlinked_task_file_is_refused(team: TeamPaths, tmp_path: Path) -> None:
    store = TaskStore(team, durable=False)
    store.create("one")
    real = tmp_path / "task.json"
    real.write_bytes(store.path("1").read_bytes())
    store.path("1").unlink()
    store.path("1").symlink_to(real)
    before = real.read_bytes()
    with pytest.raises(SymlinkRefusedError):
        store.get("1")
    with pytest.raises(SymlinkRefusedError):
        store.update("1", subject="changed")
    with pytest.raises(SymlinkRefusedError):
        store.claim("1", "w")
    assert store.list() == []
    assert [type(p) for p in store.problems] == [SymlinkRefusedError]
    assert real.read_bytes() == before


def test_read_bytes_keeps_the_ordinary_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)
    (tmp_path / "f").write_bytes(b"x")
    assert read_bytes(tmp_path / "f") == b"x"
