"""The inotify watcher with a recording sink (real inotify, fake panes)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.teams import (
    CLAUDE_INBOX_LOCK,
    FileLock,
    Mailbox,
    TeamPaths,
    atomic,
    create_team,
    filecache,
    register_synthetic,
)

from .conftest import RecordingSink


async def until(pred: Callable[[], bool], timeout: float = 5.0) -> None:
    """Async twin of retry_until."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


def count_is(sink: RecordingSink, n: int) -> Callable[[], bool]:
    """A predicate: the sink has received exactly ``n`` texts."""
    return lambda: len(sink.texts()) == n


@pytest.fixture
async def running(
    team: TeamPaths, ledger: SqliteLedger, sink: RecordingSink
) -> AsyncIterator[InboxWatcher]:
    w = InboxWatcher(ledger, sink, root=team.root, durable=False, retry_interval=0.2)
    ready = asyncio.Event()
    task = asyncio.create_task(w.run(ready))
    await asyncio.wait_for(ready.wait(), 5)
    yield w
    w.request_stop()
    await asyncio.wait_for(task, 5)


async def test_delivers_new_messages(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    mb = Mailbox(team, durable=False)
    for i in range(20):
        await asyncio.to_thread(mb.send, "gemini-1", sender="team-lead", text=f"m{i}")
    await until(lambda: len(sink.texts()) == 20)
    assert sink.texts() == [f"[from team-lead] m{i}" for i in range(20)]
    assert running.watched() == {"Bridge Team": ["gemini-1"]}


async def test_team_and_member_created_after_start(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    late = TeamPaths("late-team", team.root)
    create_team(late)
    register_synthetic(late, "w", pane="%7")
    await until(lambda: "late-team" in running.watched())
    await asyncio.to_thread(Mailbox(late).send, "w", sender="team-lead", text="hello")
    await until(lambda: sink.texts("%7") == ["[from team-lead] hello"])


async def test_pane_bound_later_gets_the_backlog(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    register_synthetic(team, "nopane")
    mb = Mailbox(team, durable=False)
    for i in range(3):
        await asyncio.to_thread(mb.send, "nopane", sender="team-lead", text=f"q{i}")
    await until(lambda: running.stats.pending.get("Bridge Team/nopane") == 3)
    assert sink.texts() == []
    register_synthetic(team, "nopane", pane="%5")
    await until(lambda: len(sink.texts("%5")) == 3)
    assert sink.texts("%5") == [f"[from team-lead] q{i}" for i in range(3)]


async def test_dead_pane_retried_by_timer(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    sink.dead.add("%1")
    await asyncio.to_thread(Mailbox(team).send, "gemini-1", sender="team-lead", text="wait")
    await until(lambda: running.stats.failed_passes >= 1)
    sink.dead.clear()
    await until(lambda: sink.texts() == ["[from team-lead] wait"])  # no new event needed


async def test_in_place_writes_like_2_1_112(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    path = team.inbox("gemini-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = []
    for i in range(5):
        ts = f"2026-01-01T00:00:0{i}Z"
        entries.append({"from": "team-lead", "text": f"p{i}", "timestamp": ts})
        with FileLock(path, CLAUDE_INBOX_LOCK):  # as 2.1.112: locked, truncate + write
            path.write_text(json.dumps(entries, indent=2))
        await until(count_is(sink, len(entries)))
    assert sink.texts() == [f"[from team-lead] p{i}" for i in range(5)]


async def test_corrupt_inbox_does_not_stop_others(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    register_synthetic(team, "broken", pane="%2")
    bad: Path = team.inbox("broken")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"{not json")
    await until(lambda: running.stats.failed_passes >= 1)
    await asyncio.to_thread(Mailbox(team).send, "gemini-1", sender="team-lead", text="fine")
    await until(lambda: sink.texts("%1") == ["[from team-lead] fine"])
    assert bad.read_bytes() == b"{not json"


async def test_removed_member_is_dropped(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink
) -> None:
    from exomonad.teams import remove_synthetic

    remove_synthetic(team, "gemini-1")
    await until(lambda: running.watched() == {"Bridge Team": []})


async def test_restart_delivers_only_what_is_new(
    team: TeamPaths, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    mb = Mailbox(team, durable=False)
    for _round in range(2):
        w = InboxWatcher(ledger, sink, root=team.root, durable=False, mark_read=False)
        ready = asyncio.Event()
        task = asyncio.create_task(w.run(ready))
        await ready.wait()
        await asyncio.to_thread(mb.send, "gemini-1", sender="team-lead", text=f"r{_round}")
        await until(count_is(sink, _round + 1))
        w.request_stop()
        await task
    assert sink.texts() == ["[from team-lead] r0", "[from team-lead] r1"]


# -- symlinked directories (issue 10) ----------------------------------------------------


async def test_a_symlinked_inboxes_dir_is_refused_and_others_still_delivered(
    running: InboxWatcher,
    team: TeamPaths,
    sink: RecordingSink,
    caplog: pytest.LogCaptureFixture,
) -> None:
    evil = TeamPaths("evil", team.root)
    create_team(evil)
    register_synthetic(evil, "victim", pane="%9")
    Mailbox(team, durable=False).send("gemini-1", sender="team-lead", text="not for %9")
    await until(lambda: sink.texts("%1") == ["[from team-lead] not for %9"])
    # evil's inboxes point at Bridge Team's: the watcher must neither watch nor deliver them
    evil.inboxes_dir.rmdir()
    evil.inboxes_dir.symlink_to(team.inboxes_dir)
    (team.inboxes_dir / "victim.json").write_bytes(
        b'[{"from": "team-lead", "text": "planted", "timestamp": "2026-01-01T00:00:00Z"}]'
    )
    await until(lambda: str(evil.inboxes_dir) in running.stats.refused)
    assert "symlink" in running.stats.refused[str(evil.inboxes_dir)]
    register_synthetic(evil, "victim", pane="%8")  # a new binding: a pass, which is refused
    await until(lambda: running.stats.failed_passes >= 1)
    assert any("symlink" in r.getMessage() for r in caplog.records)
    await asyncio.to_thread(
        Mailbox(team, durable=False).send, "gemini-1", sender="team-lead", text="still here"
    )
    await until(lambda: len(sink.texts("%1")) == 2)
    assert sink.texts("%9") == sink.texts("%8") == []
    assert b"planted" in (team.inboxes_dir / "victim.json").read_bytes()  # not marked, not pruned


async def test_a_team_dir_symlinked_in_later_is_not_watched(
    running: InboxWatcher, team: TeamPaths, sink: RecordingSink, tmp_path: Path
) -> None:
    real = TeamPaths("real", tmp_path / "other-root")
    create_team(real)
    register_synthetic(real, "w", pane="%4")
    Mailbox(real, durable=False).send("w", sender="team-lead", text="from another root")
    link = team.teams_dir / "real"
    link.symlink_to(real.team_dir)
    await until(lambda: str(link) in running.stats.refused)
    assert "real" not in running.watched()
    await asyncio.to_thread(
        Mailbox(team, durable=False).send, "gemini-1", sender="team-lead", text="ok"
    )
    await until(lambda: sink.texts("%1") == ["[from team-lead] ok"])
    assert sink.texts("%4") == []


async def test_a_symlinked_teams_dir_is_reported_not_a_crash(
    tmp_path: Path, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    real = TeamPaths("t", tmp_path / "real-root")
    create_team(real)
    register_synthetic(real, "w", pane="%1")
    Mailbox(real, durable=False).send("w", sender="team-lead", text="hidden")
    (root / "teams").symlink_to(real.teams_dir)
    w = InboxWatcher(ledger, sink, root=root, durable=False, retry_interval=0.2)
    ready = asyncio.Event()
    task = asyncio.create_task(w.run(ready))
    await asyncio.wait_for(ready.wait(), 5)
    assert str(root / "teams") in w.stats.refused
    assert w.watched() == {}
    assert not task.done()  # still running, answering /health with the reason
    w.request_stop()
    await asyncio.wait_for(task, 5)
    assert sink.texts() == []


async def test_a_config_event_reads_config_json_once(
    running: InboxWatcher, team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filecache, "SETTLED", 1e9)  # nothing cached: every read is a read
    reads: list[str] = []
    real_read_at = atomic._read_at

    def counting(d: Any, name: str, path: Path) -> bytes:
        reads.append(name)
        return real_read_at(d, name, path)

    register_synthetic(team, "late", pane="%4")
    monkeypatch.setattr(atomic, "_read_at", counting)
    running._load_team(team.config_dir)  # what a config.json event runs
    assert reads.count("config.json") == 1
    assert running.watched() == {"Bridge Team": ["gemini-1", "late"]}
