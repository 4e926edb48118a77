"""Our lock and mailbox against real Node ``proper-lockfile`` 4.1.2 peers.

The Node scripts next to this file behave like Claude Code: ``writer.js`` is its inbox
write (both styles), ``drain.js`` its poller (flag and prune), ``hold_lock.js`` holds the
lock. Message texts are ``<sender>#<i>`` so every test knows exactly what must be there.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
import pytest

from exomonad.errors import CorruptFileError, DeliveryError, LockError
from exomonad.teams import (
    CLAUDE_INBOX_LOCK,
    FileLock,
    Mailbox,
    TeamPaths,
    get_dialect,
    message_identity,
    read_json_array,
)
from exomonad.teams.groupcommit import commit_stats
from exomonad.teams.lock import LockSettings, lock_dir_for
from tests.interop import peers
from tests.interop.peers import Peer, Style
from tests.teams.conftest import record_release_waits

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

STYLES: tuple[Style, Style] = ("2.1.112", "2.1.330")


# -- helpers -----------------------------------------------------------------------------


def texts(sender: str, count: int, failed: Any = ()) -> Counter[str]:
    """The texts a writer sent: ``<sender>#<i>`` minus the indices it reported as failed."""
    skip = set(failed)
    return Counter(f"{sender}#{i}" for i in range(count) if i not in skip)


def file_texts(entries: list[dict[str, Any]]) -> Counter[str]:
    return Counter(str(e["text"]) for e in entries)


def assert_no_leftovers(inbox: Path) -> None:
    """No lock dir and no temp files left next to the inbox."""
    assert not lock_dir_for(inbox).exists()
    assert not list(inbox.parent.glob(f"{inbox.name}.tmp.*"))


def assert_unique_identities(entries: list[dict[str, Any]]) -> None:
    ids = Counter(message_identity(e) for e in entries)
    assert [i for i, n in ids.items() if n > 1] == []


@dataclass
class Mix:
    """Which writers run at once, and how fast."""

    py_threads: int = 2
    py_procs: int = 2
    node_per_style: int = 1
    count: int = 25
    delay_ms: float = 0


@dataclass
class MixResult:
    expected: Counter[str] = field(default_factory=Counter)
    node: list[dict[str, Any]] = field(default_factory=list)
    python: list[dict[str, Any]] = field(default_factory=list)

    @property
    def node_lock_failures(self) -> int:
        return sum(int(s["lock_failures"]) for s in self.node)

    @property
    def node_corrupt_reads(self) -> int:
        return sum(int(s["corrupt_reads"]) for s in self.node)

    @property
    def python_failures(self) -> int:
        return sum(int(s["failures"]) for s in self.python)


def _thread_writer(
    mailbox: Mailbox,
    sender: str,
    mix: Mix,
    offset_ms: float,
    go: threading.Event,
    out: list[dict[str, Any]],
) -> None:
    go.wait(30)
    time.sleep(offset_ms / 1000)  # this writer's phase within the pacing period
    failed: list[int] = []
    errors: list[str] = []
    for i in range(mix.count):
        try:
            mailbox.send("team-lead", sender=sender, text=f"{sender}#{i}")
        except Exception as exc:  # reported to the test, which asserts none happened
            failed.append(i)
            errors.append(repr(exc))
        if mix.delay_ms:
            time.sleep(mix.delay_ms / 1000)
    out.append({"sender": sender, "failures": len(failed), "failed": failed, "errors": errors})


def run_mix(
    team: TeamPaths,
    inbox: Path,
    reap: list[Peer],
    mix: Mix,
    *,
    also: Sequence[Peer] = (),
) -> MixResult:
    """Start every writer of ``mix`` (plus ``also``) together; collect their results.

    Paced writers get evenly spread phase offsets (writer k starts ``k * delay / n`` ms
    after the release), as independent agents would be: otherwise every writer's first
    message lands in the same instant, a burst no real team produces.
    """
    node_specs = [
        (f"node{style[-3:]}-{k}", style) for style in STYLES for k in range(mix.node_per_style)
    ]
    n_writers = len(node_specs) + mix.py_procs + mix.py_threads
    offsets = iter([k * mix.delay_ms / n_writers for k in range(n_writers)])
    node = [
        peers.node_writer(
            inbox,
            name,
            mix.count,
            style,
            delay_ms=mix.delay_ms,
            wait=True,
            offset_ms=next(offsets),
        )
        for name, style in node_specs
    ]
    procs = [
        peers.py_writer(
            team.root,
            team.team,
            "team-lead",
            f"pyproc-{k}",
            mix.count,
            STYLES[k % 2],
            durable=k % 2 == 0,
            wait=True,
            delay_ms=mix.delay_ms,
            offset_ms=next(offsets),
        )
        for k in range(mix.py_procs)
    ]
    reap.extend([*node, *procs, *also])
    go = threading.Event()
    thread_out: list[dict[str, Any]] = []
    threads = []
    for k in range(mix.py_threads):
        mailbox = Mailbox(team, dialect=get_dialect(STYLES[k % 2]), durable=k % 2 == 0)
        t = threading.Thread(
            target=_thread_writer,
            args=(mailbox, f"pythread-{k}", mix, next(offsets), go, thread_out),
        )
        t.start()
        threads.append(t)
    try:
        peers.start_together([*also, *node, *procs])
    finally:
        go.set()
    result = MixResult()
    for (name, _style), p in zip(node_specs, node, strict=True):
        summary = p.result(timeout=45)
        result.node.append(summary)
        result.expected += texts(name, mix.count, summary["failed"])
    for k, p in enumerate(procs):
        summary = p.result(timeout=45)
        result.python.append(summary)
        result.expected += texts(f"pyproc-{k}", mix.count, summary["failed"])
    for t in threads:
        t.join(45)
        assert not t.is_alive()
    for summary in thread_out:
        result.python.append(summary)
        result.expected += texts(summary["sender"], mix.count, summary["failed"])
    return result


# -- (a) concurrent writers ----------------------------------------------------------------


def test_python_and_node_writers_share_one_inbox(
    team: TeamPaths, inbox: Path, reap: list[Peer]
) -> None:
    """Six paced writers (~60 msgs/s in all, far above a real team): all there once, no drops."""
    mix = Mix(py_threads=2, py_procs=2, node_per_style=1, count=20, delay_ms=100)
    result = run_mix(team, inbox, reap, mix)

    assert result.node_lock_failures == 0, result.node
    assert result.node_corrupt_reads == 0
    assert result.python_failures == 0, result.python
    entries = read_json_array(inbox)  # a valid array of objects, or this raises
    assert len(result.expected) == 6 * mix.count
    assert file_texts(entries) == result.expected
    assert_unique_identities(entries)
    assert_no_leftovers(inbox)


def test_saturated_writers_lose_nothing_they_reported_written(
    team: TeamPaths, inbox: Path, reap: list[Peer]
) -> None:
    """Back-to-back writers saturate the lock. Claude Code may then drop a message after
    its ~655 ms of retries (and Node alone does too); whatever any writer reported as
    written must be in the file exactly once, and nothing else."""
    mix = Mix(py_threads=2, py_procs=2, node_per_style=2, count=30, delay_ms=0)
    result = run_mix(team, inbox, reap, mix)

    assert result.python_failures == 0, result.python
    assert result.node_corrupt_reads == 0
    entries = read_json_array(inbox)
    assert file_texts(entries) == result.expected
    assert len(entries) == 8 * mix.count - result.node_lock_failures
    assert_unique_identities(entries)
    assert_no_leftovers(inbox)


def test_group_commit_beside_claude_code_writers(
    team: TeamPaths, inbox: Path, reap: list[Peer]
) -> None:
    """Twelve threads of one process (the server's tool calls: their appends share
    group writes) and Claude Code's writers, back to back on one inbox: every message a
    writer reported written is there exactly once, each writer's in its own order, and
    Claude Code never read anything it could not parse."""
    before = commit_stats()
    mix = Mix(py_threads=12, py_procs=0, node_per_style=1, count=25, delay_ms=0)
    result = run_mix(team, inbox, reap, mix)
    after = commit_stats()

    assert result.python_failures == 0, result.python
    assert result.node_corrupt_reads == 0
    entries = read_json_array(inbox)
    assert file_texts(entries) == result.expected
    assert_unique_identities(entries)
    order: dict[str, list[int]] = {}
    for e in entries:
        sender, _, i = str(e["text"]).rpartition("#")
        order.setdefault(sender, []).append(int(i))
    assert len(order) == 14
    assert all(seq == sorted(seq) for seq in order.values()), order
    appended = after["entries"] - before["entries"]
    assert appended == 12 * mix.count
    assert after["groups"] - before["groups"] < appended  # some appends shared a write
    assert_no_leftovers(inbox)


# -- (b) writers while Claude Code's poller drains -------------------------------------------


@pytest.mark.parametrize("mode", ["prune", "flag"])
def test_writers_while_node_poller_drains(
    team: TeamPaths,
    inbox: Path,
    reap: list[Peer],
    tmp_path: Path,
    mode: Literal["prune", "flag"],
) -> None:
    out, stop = tmp_path / "drained.jsonl", tmp_path / "stop"
    poller = peers.drain(inbox, mode, 50, out, stop, wait=True)
    mix = Mix(py_threads=2, py_procs=1, node_per_style=1, count=20, delay_ms=80)
    result = run_mix(team, inbox, reap, mix, also=[poller])
    stop.touch()
    poll = poller.result(timeout=20)

    assert result.node_lock_failures == 0, result.node
    assert result.python_failures == 0, result.python
    assert poll["corrupt_reads"] == 0
    drained_entries = [orjson.loads(line)["entry"] for line in out.read_bytes().splitlines()]
    drained = file_texts(drained_entries)
    remaining_entries = read_json_array(inbox)
    remaining = file_texts(remaining_entries)
    assert max(drained.values()) == 1, "an entry was delivered twice"
    assert poll["drained"] == len(drained_entries)
    if mode == "prune":
        assert not drained & remaining, "a delivered entry was left in the inbox"
        assert drained + remaining == result.expected
    else:
        assert remaining == result.expected
        unread = Counter(str(e["text"]) for e in remaining_entries if e.get("read") is not True)
        assert drained + unread == result.expected
    assert_unique_identities(remaining_entries)
    assert_no_leftovers(inbox)


@pytest.mark.parametrize("dialect", STYLES)
def test_python_poller_marks_read_while_node_writes(
    team: TeamPaths, inbox: Path, reap: list[Peer], dialect: Style
) -> None:
    """ExoMonad's side of delivery: read, then ``mark_read`` by identity, under Node writers
    (2.1.330 style, which replaces the file atomically)."""
    mailbox = Mailbox(team, dialect=get_dialect(dialect), durable=False)
    writers = [
        peers.node_writer(inbox, f"node-{k}", 40, "2.1.330", delay_ms=10, wait=True)
        for k in range(2)
    ]
    reap.extend(writers)
    peers.start_together(writers)
    delivered: Counter[str] = Counter()
    seen: set[str] = set()

    def poll_once() -> None:
        fresh = [e for e in mailbox.read_raw("team-lead") if message_identity(e) not in seen]
        fresh = [e for e in fresh if e.get("read") is not True]
        if fresh:
            ids = [message_identity(e) for e in fresh]
            assert mailbox.mark_read("team-lead", ids) == len(ids)
            seen.update(ids)
            delivered.update(str(e["text"]) for e in fresh)

    while any(w.proc.poll() is None for w in writers):
        poll_once()
        time.sleep(0.02)  # the poll interval, not a wait on a condition
    summaries = [w.result(timeout=30) for w in writers]
    poll_once()

    expected = texts("node-0", 40, summaries[0]["failed"]) + texts(
        "node-1", 40, summaries[1]["failed"]
    )
    assert sum(s["lock_failures"] for s in summaries) == 0
    assert delivered == expected
    remaining = read_json_array(inbox)
    if dialect == "2.1.330":
        assert remaining == []
    else:
        assert file_texts(remaining) == expected
        assert all(e.get("read") is True for e in remaining)


def test_read_during_in_place_writes_sees_whole_files(
    team: TeamPaths, inbox: Path, reap: list[Peer]
) -> None:
    """Regression: 2.1.112 rewrites the inbox in place (truncate, then write), so a
    lock-free reader used to see an empty or cut-off file in ~45% of reads."""
    mailbox = Mailbox(team, durable=False)
    writer = peers.node_writer(inbox, "node", 200, "2.1.112", wait=True)
    reap.append(writer)
    peers.start_together([writer])
    torn = 0
    last = 0
    while writer.proc.poll() is None:
        try:
            n = len(mailbox.read_raw("team-lead"))
        except CorruptFileError:
            torn += 1
            continue
        torn += n < last  # entries are only ever appended here
        last = max(last, n)
    assert writer.result(timeout=30)["written"] == 200
    assert torn == 0, f"{torn} torn reads"


# -- (c) stale lock takeover ---------------------------------------------------------------


def _stale_lock(inbox: Path, age: float) -> Path:
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b"[]")
    lock = lock_dir_for(inbox)
    lock.mkdir()
    past = time.time() - age
    os.utime(lock, (past, past))
    return lock


def test_python_takes_over_a_stale_lock(team: TeamPaths, inbox: Path) -> None:
    _stale_lock(inbox, 20)
    # One attempt, no retry budget: it succeeds only if the stale lock is taken over.
    Mailbox(team, lock=CLAUDE_INBOX_LOCK, attempts=1).send("team-lead", sender="py", text="hi")
    assert file_texts(read_json_array(inbox)) == Counter(["hi"])
    assert_no_leftovers(inbox)


@pytest.mark.parametrize("style", STYLES)
def test_node_takes_over_a_stale_lock(inbox: Path, reap: list[Peer], style: Style) -> None:
    _stale_lock(inbox, 20)
    writer = peers.node_writer(inbox, "node", 1, style)
    reap.append(writer)
    summary = writer.result(timeout=20)
    assert summary["written"] == 1
    assert summary["lock_failures"] == 0  # a lock left standing fails the write: no retry ends it
    assert file_texts(read_json_array(inbox)) == texts("node", 1)
    assert_no_leftovers(inbox)


def test_python_never_removes_a_fresh_lock(team: TeamPaths, inbox: Path) -> None:
    """5 s old is fresh (stale is 10 s): wait the budget out, raise, leave the dir alone."""
    lock = _stale_lock(inbox, 5)
    before = lock.stat().st_mtime_ns
    with pytest.raises(LockError):
        FileLock(inbox, CLAUDE_INBOX_LOCK).acquire()
    assert lock.is_dir()
    assert lock.stat().st_mtime_ns == before
    assert inbox.read_bytes() == b"[]"


# -- (d) fresh locks are respected, both ways --------------------------------------------------


@pytest.fixture
def node_holds_lock(inbox: Path, reap: list[Peer]) -> Peer:
    """Node holds the inbox lock for 1.5 s; returns once ``locked`` was printed."""
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b"[]")
    holder = peers.hold_lock(inbox, 1500)
    reap.append(holder)
    assert holder.read_line(timeout=15) == "locked"
    return holder


def test_python_waiting_on_node_is_woken_by_its_release(
    inbox: Path, node_holds_lock: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our waiter's one wait is a minute long; proper-lockfile's release (its ``rmdir``)
    ends it, and the lock is ours."""
    woken = record_release_waits(monkeypatch)
    with FileLock(inbox, LockSettings(retries=1, min_timeout=60.0, max_timeout=60.0)) as lock:
        assert lock.held
        held = node_holds_lock.result(timeout=15)
    assert held["intact"] is True
    assert woken.results == [True]


def test_node_held_lock_makes_python_wait(
    team: TeamPaths, inbox: Path, node_holds_lock: Peer
) -> None:
    t0 = time.monotonic()
    # With Claude Code's own budget (~655 ms) we give up, and say so...
    with pytest.raises(DeliveryError):
        Mailbox(team, lock=CLAUDE_INBOX_LOCK, attempts=1).send("team-lead", sender="a", text="1")
    assert lock_dir_for(inbox).is_dir()
    assert inbox.read_bytes() == b"[]"
    # ...with ours (~3.6 s) we wait for Node's release.
    Mailbox(team).send("team-lead", sender="b", text="2")
    waited = time.monotonic() - t0
    held = node_holds_lock.result(timeout=15)
    assert held["intact"] is True, "Python touched or removed Node's fresh lock"
    assert held["compromised"] is False
    assert waited >= 1.2
    assert file_texts(read_json_array(inbox)) == Counter(["2"])
    assert_no_leftovers(inbox)


def _python_holds_lock_while_node_writes(inbox: Path, reap: list[Peer], hold: float) -> Any:
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b"[]")
    writer = peers.node_writer(inbox, "node", 1, "2.1.330", wait=True)
    reap.append(writer)
    writer.wait_ready(15)
    with FileLock(inbox):
        writer.go()
        time.sleep(hold)  # how long we hold the lock (the quantity under test)
    return writer.result(timeout=20)


def test_python_held_lock_makes_node_wait(inbox: Path, reap: list[Peer]) -> None:
    summary = _python_holds_lock_while_node_writes(inbox, reap, 0.3)
    assert summary["lock_failures"] == 0
    assert summary["written"] == 1
    assert summary["latencies_ms"][0] >= 200  # it waited for us (node startup excluded)
    assert file_texts(read_json_array(inbox)) == texts("node", 1)
    assert_no_leftovers(inbox)


def test_python_lock_held_past_claude_budget_makes_node_drop(inbox: Path, reap: list[Peer]) -> None:
    """Why we hold the lock only briefly: past ~655 ms Claude Code drops its message."""
    summary = _python_holds_lock_while_node_writes(inbox, reap, 1.2)
    assert summary["lock_failures"] == 1
    assert summary["written"] == 0
    assert read_json_array(inbox) == []
    assert_no_leftovers(inbox)


# -- (e) corrupt inboxes are left alone -------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b'{"not": "array"}', b"[1,2", b"[1, 2]", b'[{"from": "a"}, "x"]'],
    ids=["object", "truncated", "numbers", "mixed"],
)
def test_corrupt_inbox_is_not_overwritten(team: TeamPaths, inbox: Path, content: bytes) -> None:
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(content)
    with pytest.raises(CorruptFileError):
        Mailbox(team).send("team-lead", sender="py", text="hello")
    assert inbox.read_bytes() == content
    assert_no_leftovers(inbox)


def test_claude_code_overwrites_a_non_array_inbox(inbox: Path, reap: list[Peer]) -> None:
    """Documents the asymmetry: Claude Code reads a non-array as [] and overwrites it, so
    a bad write of ours would cost the whole inbox. (Hence: never write one.)"""
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b'{"not": "array"}')
    writer = peers.node_writer(inbox, "node", 1, "2.1.112")
    reap.append(writer)
    summary = writer.result(timeout=20)
    assert summary["corrupt_reads"] == 1
    assert file_texts(read_json_array(inbox)) == texts("node", 1)
