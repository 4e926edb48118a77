"""The server's inbox appender (real process, real inbox): appends the event loop awaits,
before and while the process runs, when it ends under them, and when the server stops."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from exomonad.errors import CorruptFileError
from exomonad.server.appender import MAX_STARTS, InboxAppender
from exomonad.teams import Mailbox, TeamPaths, create_team, message_identity
from exomonad.teams.atomic import read_json_array
from exomonad.teams.groupcommit import commit_stats
from exomonad.teams.lock import lock_dir_for


async def until(check: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.005)


@pytest.fixture
def team(tmp_path: Path) -> TeamPaths:
    paths = TeamPaths("proj", tmp_path / "claude")
    create_team(paths)
    return paths


@pytest.fixture
async def appender(tmp_path: Path) -> AsyncIterator[InboxAppender]:
    service = InboxAppender(tmp_path / "journal", enabled=True)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready))
    await ready.wait()
    yield service
    service.request_stop()
    await asyncio.wait_for(task, 30)


async def send(appender: InboxAppender, box: Mailbox, text: str) -> str:
    pending = box.prepare("team-lead", {"from": "w", "text": text, "timestamp": "t"})
    await appender.commit(box, "team-lead", pending)
    return box.delivered("team-lead", pending)


async def started(appender: InboxAppender, box: Mailbox) -> None:
    """The first append starts the process (written by the server meanwhile)."""
    await send(appender, box, "first")
    await until(lambda: appender.health()["running"], "the appender never said ready")


@pytest.fixture
async def box(appender: InboxAppender, team: TeamPaths) -> Mailbox:
    """The team's mailbox, its first append made: the appender process is running."""
    mailbox = Mailbox(team)
    await started(appender, mailbox)
    return mailbox


async def test_appends_are_written_by_the_process_once_each_and_verified(
    appender: InboxAppender, team: TeamPaths, box: Mailbox
) -> None:
    pid = appender.health()["pid"]
    assert pid not in (None, os.getpid())
    before = commit_stats()
    ids = await asyncio.gather(*(send(appender, box, f"m{n}") for n in range(40)))
    after = commit_stats()
    entries = read_json_array(team.inbox("team-lead"))
    assert [message_identity(e) for e in entries[1:]] == ids  # the order they were sent
    assert [e["text"] for e in entries] == ["first", *(f"m{n}" for n in range(40))]
    health = appender.health()
    assert (health["appended"], health["by_the_server"], health["in_flight"]) == (40, 1, 0)
    assert after["entries"] - before["entries"] == 40  # counted with the server's own
    assert after["groups"] - before["groups"] < 40  # they shared writes


async def test_until_the_process_is_ready_the_server_writes(
    appender: InboxAppender, team: TeamPaths
) -> None:
    box = Mailbox(team)
    mid = await send(appender, box, "early")
    assert appender.health()["by_the_server"] == 1
    assert [message_identity(e) for e in read_json_array(team.inbox("team-lead"))] == [mid]


async def test_a_corrupt_inbox_is_refused_and_left_alone(
    appender: InboxAppender, team: TeamPaths, box: Mailbox
) -> None:
    inbox = team.inbox("team-lead")
    inbox.write_bytes(b"[{]")
    results = await asyncio.gather(*(send(appender, box, f"m{n}") for n in range(3)),
                                   return_exceptions=True)  # fmt: skip
    assert all(isinstance(r, CorruptFileError) for r in results), results
    assert inbox.read_bytes() == b"[{]"


async def test_appends_in_flight_when_the_process_dies_are_written_by_the_server(
    appender: InboxAppender, team: TeamPaths, tmp_path: Path, box: Mailbox
) -> None:
    """Killed while its appends wait for a lock someone holds: each is handed to the
    server's own group commit, lands once, and the next process starts on demand. A
    lock its journal records for a dead process is removed."""
    inbox = team.inbox("team-lead")
    lock = lock_dir_for(inbox)
    lock.mkdir()  # the appender waits for it (its lock budget: ~3.4 s)
    sending = [asyncio.create_task(send(appender, box, f"m{n}")) for n in range(5)]
    await until(lambda: appender.health()["in_flight"] == 5, "not in flight")
    leftover = lock_dir_for(team.inbox("other"))  # what a killed holder leaves behind
    leftover.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / "journal").mkdir(exist_ok=True)
    (tmp_path / "journal" / f"{dead.stdout.strip()}-0").write_text(
        f"{leftover}\n{leftover.stat().st_mtime_ns}\n{team.root}\n"
    )
    os.kill(appender.health()["pid"], signal.SIGKILL)
    await until(lambda: not appender.health()["running"], "the death went unnoticed")
    assert not leftover.exists()
    lock.rmdir()
    ids = await asyncio.gather(*sending)
    entries = read_json_array(inbox)
    assert sorted(message_identity(e) for e in entries[1:]) == sorted(ids)
    assert appender.health()["by_the_server"] == 1 + 5
    await send(appender, box, "later")  # starts the next one
    await until(lambda: appender.health()["running"], "no second process")
    assert appender.health()["starts"] == 2


async def test_after_max_starts_the_server_keeps_writing_itself(
    appender: InboxAppender, team: TeamPaths
) -> None:
    box = Mailbox(team)
    for _ in range(MAX_STARTS):
        await started(appender, box)
        os.kill(appender.health()["pid"], signal.SIGKILL)
        await until(lambda: not appender.health()["running"], "the death went unnoticed")
    await send(appender, box, "after")
    assert appender.health()["pid"] is None
    assert appender.health()["starts"] == MAX_STARTS
    assert read_json_array(team.inbox("team-lead"))[-1]["text"] == "after"


async def test_stopping_lets_the_process_write_and_answer_what_it_holds(
    tmp_path: Path, team: TeamPaths
) -> None:
    service = InboxAppender(tmp_path / "journal", enabled=True)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready))
    await ready.wait()
    box = Mailbox(team)
    await started(service, box)
    proc = service._proc
    assert proc is not None
    # 1 MB of appends: more than the pipe holds, so some are still queued in the server
    sending = [asyncio.create_task(send(service, box, f"m{n} " + "x" * 2000)) for n in range(500)]
    await asyncio.sleep(0)  # handed over, or queued for the pipe; not yet answered
    service.request_stop()
    await asyncio.wait_for(task, 30)
    ids = await asyncio.gather(*sending)
    assert proc.returncode == 0  # it ended on its own, not killed
    entries = read_json_array(team.inbox("team-lead"))
    assert [message_identity(e) for e in entries[1:]] == ids
    assert service.health()["by_the_server"] == 1  # only the first, before it was ready


async def test_switched_off_it_never_starts(tmp_path: Path, team: TeamPaths) -> None:
    service = InboxAppender(tmp_path / "journal", enabled=False)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready))
    await ready.wait()
    try:
        box = Mailbox(team)
        for n in range(3):
            await send(service, box, f"m{n}")
        assert service.health()["pid"] is None
        assert service.health()["by_the_server"] == 3
    finally:
        service.request_stop()
        await task


def test_the_environment_chooses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EXOMONAD_INBOX_APPENDER", "thread")
    assert InboxAppender(tmp_path).enabled is False
    monkeypatch.setenv("EXOMONAD_INBOX_APPENDER", "process")
    assert InboxAppender(tmp_path).enabled is True
    monkeypatch.delenv("EXOMONAD_INBOX_APPENDER")
    assert InboxAppender(tmp_path).enabled is True


async def test_a_process_that_breaks_its_protocol_is_stopped_and_its_appends_handed_over(
    appender: InboxAppender, team: TeamPaths, box: Mailbox
) -> None:
    inbox = team.inbox("team-lead")
    lock = lock_dir_for(inbox)
    lock.mkdir()  # holds its appends in flight
    sending = [asyncio.create_task(send(appender, box, f"m{n}")) for n in range(3)]
    await until(lambda: appender.health()["in_flight"] == 3, "not in flight")
    appender._received(b"this is not JSON\n")
    await until(lambda: not appender.health()["running"], "still trusted")
    lock.rmdir()
    ids = await asyncio.gather(*sending)
    assert sorted(message_identity(e) for e in read_json_array(inbox)[1:]) == sorted(ids)
