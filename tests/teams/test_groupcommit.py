"""Group commit of inbox appends: callers that queue share one write, each answered only
after its entry is verified on disk, or with the group's error.

Groups are made deterministic by holding the inbox lock the way Claude Code would (its
lock directory) while threads queue behind the first, which waits for the lock.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.errors import CorruptFileError, ExomonadError
from exomonad.teams import inbox_io
from exomonad.teams.atomic import Staged, commit_staged, dump_json, stage_bytes, stage_json
from exomonad.teams.groupcommit import PAUSE_FACTOR, InboxQueue, Pending, commit_stats, queue_for
from exomonad.teams.lock import LockSettings, lock_dir_for
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.models import message_identity
from exomonad.teams.paths import TeamPaths
from exomonad.util.waiting import retry_until
from tests.teams.conftest import leftovers

#: Our side waits as long as the test holds the lock (no LockError meanwhile).
PATIENT = LockSettings(retries=100_000, min_timeout=0.001, max_timeout=0.005)


class Caller(threading.Thread):
    """One thread calling ``send`` once; keeps the message id or the error."""

    def __init__(self, send: Callable[[], str]) -> None:
        super().__init__(daemon=True)
        self.send = send
        self.result: str | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.send()
        except BaseException as exc:
            self.error = exc


def queue_of(mb: Mailbox, member: str = "team-lead") -> InboxQueue:
    return queue_for(mb.paths.inbox(member), mb.durable)


@contextmanager
def lock_held(mb: Mailbox, member: str = "team-lead") -> Iterator[Path]:
    """Hold the inbox's lock directory as Claude Code would, released on exit."""
    lock = lock_dir_for(mb.paths.inbox(member))
    lock.mkdir()
    try:
        yield lock
    finally:
        lock.rmdir()


def sender(mb: Mailbox, text: str) -> Callable[[], str]:
    """A call sending ``text`` to the lead."""
    return lambda: mb.send("team-lead", sender="w", text=text)


def wait_queued(mb: Mailbox, count: int) -> None:
    retry_until(lambda: queue_of(mb).queued == count, timeout=30)


def queued_callers(
    mb: Mailbox, sends: list[Callable[[], str]], *, already: int = 0
) -> list[Caller]:
    """Start one caller per ``send``, each once the previous one is queued (so the queue
    holds them in this order); the first (unless ``already`` wait) becomes the leader."""
    mb.paths.inboxes_dir.mkdir(parents=True, exist_ok=True)
    callers = []
    for k, send in enumerate(sends, already + 1):
        c = Caller(send)
        c.start()
        callers.append(c)
        wait_queued(mb, k)
    return callers


def joined(callers: list[Caller]) -> list[Caller]:
    for c in callers:
        c.join(60)
        assert not c.is_alive()
    return callers


def counting_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count inbox rewrites, prepared ahead of the lock or under it, serialised whole or
    spliced onto this process's last write (each records how many entries it wrote)."""
    writes: list[int] = []

    def counted(path: Path, value: Any, **kw: Any) -> Staged:
        writes.append(len(value))
        return stage_json(path, value, **kw)

    def counted_bytes(path: Path, payload: bytes, **kw: Any) -> Staged:
        writes.append(len(orjson.loads(payload)))
        return stage_bytes(path, payload, **kw)

    monkeypatch.setattr(inbox_io, "stage_json", counted)
    monkeypatch.setattr(inbox_io, "stage_bytes", counted_bytes)
    return writes


def test_appends_queued_behind_a_held_lock_share_one_write(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    mb = Mailbox(team, durable=True, lock=PATIENT)
    writes = counting_writes(monkeypatch)
    before = commit_stats()
    with lock_held(mb):
        callers = queued_callers(mb, [sender(mb, f"m{n}") for n in range(6)])
    joined(callers)
    assert [c.error for c in callers] == [None] * 6
    assert writes == [6]  # one lock, one read, one rewrite for all six
    entries = mb.read_raw("team-lead")
    assert [e["text"] for e in entries] == [f"m{n}" for n in range(6)]  # arrival order
    assert [message_identity(e) for e in entries] == [c.result for c in callers]
    after = commit_stats()
    assert after["groups"] - before["groups"] == 1
    assert after["entries"] - before["entries"] == 6
    assert after["largest"] >= 6
    assert leftovers(team.inboxes_dir) == []


def test_every_caller_of_a_group_that_meets_a_corrupt_file_hears_the_error(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The group's first write fails, and by its retry the file has turned corrupt: every
    # caller of the group gets CorruptFileError (none hears "sent"), the bytes stay.
    mb = Mailbox(team, durable=False, lock=PATIENT)
    inbox = team.inbox("team-lead")
    garbage = b'[{"from": "team-lead", "text": "half'
    writes: list[int] = []

    def corrupted_then_fails(path: Path, value: Any, **kw: Any) -> Staged:
        writes.append(len(value))
        inbox.write_bytes(garbage)  # someone ignoring the lock, or a torn disk
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(inbox_io, "stage_json", corrupted_then_fails)
    with lock_held(mb):
        callers = queued_callers(mb, [sender(mb, f"m{n}") for n in range(5)])
    joined(callers)
    assert writes == [5]  # the group was taken whole, then never written again
    errors = [c.error for c in callers]
    assert all(isinstance(e, CorruptFileError) for e in errors), errors
    assert [c.result for c in callers] == [None] * 5
    assert len({id(e) for e in errors}) == 5  # each caller its own exception ...
    assert all(e is not None and e.__cause__ is errors[0] for e in errors[1:])  # the leader's
    assert inbox.read_bytes() == garbage
    assert queue_of(mb).queued == 0


def test_concurrent_appends_to_a_corrupt_inbox_all_fail_and_leave_it_alone(
    team: TeamPaths,
) -> None:
    mb = Mailbox(team, durable=False)
    inbox = team.inbox("team-lead")
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b'{"not": "an array"}')
    callers = [Caller(sender(mb, f"{n}")) for n in range(8)]
    for c in callers:
        c.start()
    joined(callers)
    assert all(isinstance(c.error, CorruptFileError) for c in callers)
    assert inbox.read_bytes() == b'{"not": "an array"}'


def test_a_message_id_lands_once_within_and_across_groups(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    mb = Mailbox(team, durable=False, lock=PATIENT)
    writes = counting_writes(monkeypatch)

    def send(text: str, msg_id: str) -> Callable[[], str]:
        return lambda: mb.append(
            "team-lead",
            {"from": "w", "text": text, "timestamp": "2026-11-24T00:00:00.000Z", "msg_id": msg_id},
        )

    with lock_held(mb):
        callers = queued_callers(
            mb, [send("first", "id-1"), send("again", "id-1"), send("x", "id-2")]
        )
    joined(callers)
    assert [c.result for c in callers] == ["id-1", "id-1", "id-2"]
    assert [e["text"] for e in mb.read_raw("team-lead")] == ["first", "x"]
    assert send("later", "id-1")() == "id-1"  # a group of its own: nothing to write
    assert [e["text"] for e in mb.read_raw("team-lead")] == ["first", "x"]
    assert writes == [2]


def test_followers_that_arrive_while_a_group_is_written_form_the_next_group(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    mb = Mailbox(team, durable=False)
    writing, release = threading.Event(), threading.Event()
    groups: list[list[str]] = []

    def slow(staged: Staged, **kw: Any) -> int:  # the inbox each write puts in place
        groups.append([e["text"] for e in orjson.loads(staged.payload)])
        if len(groups) == 1:
            writing.set()
            assert release.wait(30)
        return commit_staged(staged, **kw)

    monkeypatch.setattr(inbox_io, "commit_staged", slow)
    first = Caller(sender(mb, "a"))
    first.start()
    assert writing.wait(30)  # the first group (a alone) is being written, lock held
    later = queued_callers(mb, [sender(mb, "b"), sender(mb, "c")], already=1)
    release.set()
    joined([first, *later])
    assert [c.error for c in (first, *later)] == [None] * 3
    assert groups == [["a"], ["a", "b", "c"]]


# -- the queue alone ----------------------------------------------------------------------


def test_back_to_back_groups_leave_the_lock_free_pause_factor_times_as_long_as_it_was_held() -> (
    None
):
    queue = InboxQueue()
    held = 0.03  # times PAUSE_FACTOR: below MAX_PAUSE
    spans: list[tuple[float, float]] = []

    def write(take: Callable[[], list[Pending]]) -> float:
        start = time.monotonic()
        take()
        if not spans:  # the first group, taken: wait until the second caller queues behind
            retry_until(lambda: queue.queued == 2, timeout=30)
        spans.append((start, time.monotonic()))
        return held

    first = threading.Thread(target=queue.submit, args=(Pending("1", {}), write))
    first.start()
    retry_until(lambda: queue.queued == 1, timeout=30)
    second = threading.Thread(target=queue.submit, args=(Pending("2", {}), write))
    second.start()
    first.join(30)
    second.join(30)
    assert len(spans) == 2
    assert spans[1][0] - spans[0][1] >= held * PAUSE_FACTOR  # the pause before the next group
    assert queue.free_at == 0.0  # nobody was waiting after the second: no pause pending


def test_a_lone_caller_never_pauses() -> None:
    queue = InboxQueue()
    for n in range(3):
        queue.submit(Pending(str(n), {}), lambda take: 10.0)  # "held the lock for 10 s"
        assert queue.free_at == 0.0


def test_an_error_that_cannot_be_copied_reaches_followers_as_a_delivery_error() -> None:
    class Odd(Exception):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"{a}/{b}")

    queue = InboxQueue()
    errors: dict[str, BaseException] = {}

    def write(take: Callable[[], list[Pending]]) -> float:
        retry_until(lambda: queue.queued == 2, timeout=30)
        take()
        raise Odd(1, 2)

    def call(mid: str) -> None:
        try:
            queue.submit(Pending(mid, {}), write)
        except BaseException as exc:
            errors[mid] = exc

    leader = threading.Thread(target=call, args=("1",))
    leader.start()
    retry_until(lambda: queue.queued == 1, timeout=30)
    follower = threading.Thread(target=call, args=("2",))
    follower.start()
    leader.join(30)
    follower.join(30)
    assert isinstance(errors["1"], Odd)
    assert isinstance(errors["2"], ExomonadError)
    assert "Odd" in str(errors["2"])
    assert errors["2"].__cause__ is errors["1"]


def test_group_file_payload_is_what_claude_code_writes(team: TeamPaths) -> None:
    mb = Mailbox(team, durable=False)
    mid = mb.send("team-lead", sender="w", text="hi")
    entries = mb.read_raw("team-lead")
    assert team.inbox("team-lead").read_bytes() == dump_json(entries)
    assert [message_identity(e) for e in entries] == [mid]
