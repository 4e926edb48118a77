"""The inbox appender process beside Claude Code's own writers and poller (real Node
``proper-lockfile`` peers): what the server's event loop hands it lands exactly once."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest

from exomonad.server.appender import InboxAppender
from exomonad.teams import Mailbox, TeamPaths, read_json_array
from tests.interop import peers
from tests.interop.peers import Peer
from tests.interop.test_lock_interop import (
    STYLES,
    assert_no_leftovers,
    assert_unique_identities,
    file_texts,
    texts,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SESSIONS, PER_SESSION, NODE_COUNT = 12, 25, 60


async def test_appender_beside_claude_code_writers_and_poller(
    team: TeamPaths, inbox: Path, reap: list[Peer], tmp_path: Path
) -> None:
    """Twelve sessions' appends written by the appender process while Claude Code's
    writers (both styles) append to the same inbox and its poller prunes it: every
    message is in what was drained or what is left, once; Claude Code never read a
    torn file and never gave up on the lock; the appender wrote the sessions' appends."""
    service = InboxAppender(tmp_path / "journal", enabled=True)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready))
    await ready.wait()
    box = Mailbox(team)

    async def session(name: str) -> list[str]:
        sent = []
        for i in range(PER_SESSION):
            entry = {"from": name, "text": f"{name}#{i}", "timestamp": "2026-11-28T00:00:00.000Z"}
            pending = box.prepare("team-lead", entry)
            await service.commit(box, "team-lead", pending)
            sent.append(box.delivered("team-lead", pending))
        return sent

    try:
        await session("warm")  # the first starts the process
        deadline = time.monotonic() + 30
        while not service.health()["running"]:
            assert time.monotonic() < deadline, "the appender never said ready"
            await asyncio.sleep(0.01)
        out, stop = tmp_path / "drained.jsonl", tmp_path / "stop"
        poller = peers.drain(inbox, "prune", 50, out, stop, wait=True)
        writers = [peers.node_writer(inbox, f"node-{s}", NODE_COUNT, s, delay_ms=5, wait=True)
                   for s in STYLES]  # fmt: skip
        reap.extend([poller, *writers])
        await asyncio.to_thread(peers.start_together, [poller, *writers])
        await asyncio.gather(*(session(f"s{k}") for k in range(SESSIONS)))
        node = [await asyncio.to_thread(w.result, 60) for w in writers]
        stop.touch()
        poll = await asyncio.to_thread(poller.result, 30)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 30)

    assert [s["lock_failures"] for s in node] == [0, 0]
    assert [s["corrupt_reads"] for s in node] == [0, 0]
    assert poll["corrupt_reads"] == 0
    drained = [orjson.loads(line)["entry"] for line in out.read_bytes().splitlines()]
    seen = [*drained, *read_json_array(inbox)]
    expected: Counter[str] = Counter()
    for name in ["warm", *(f"s{k}" for k in range(SESSIONS))]:
        expected += texts(name, PER_SESSION)
    for s in STYLES:
        expected += texts(f"node-{s}", NODE_COUNT)
    assert file_texts(seen) == expected
    assert_unique_identities(seen)
    health = service.health()
    assert health["appended"] >= SESSIONS * PER_SESSION  # the sessions', by the process
    assert_no_leftovers(inbox)
