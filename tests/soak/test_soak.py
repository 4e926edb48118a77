"""Long runs (`make soak`; not part of `make test`): exactly-once at volume."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.teams import TeamPaths, create_team, get_dialect, register_synthetic
from tests.bridge.conftest import RecordingSink
from tests.interop.peers import Peer, Style, node_binary, node_writer, py_writer, start_together
from tests.server.fault_scenario import Load, run_faults
from tests.server.test_fault_injection import assert_guarantees, figures
from tests.support.tmux import TmuxServer

pytestmark = [pytest.mark.soak, pytest.mark.timeout(1800)]

PER_WRITER = int(os.environ.get("EXOMONAD_SOAK_MESSAGES", "1500"))
#: Node messages per worker in the fault-injection soak (the teammate gets half).
FAULT_MESSAGES = int(os.environ.get("EXOMONAD_SOAK_FAULT_MESSAGES", "600"))


@pytest.mark.parametrize("dialect", ["2.1.112", "2.1.330"])
async def test_watcher_under_mixed_writers(tmp_path: Path, dialect: str) -> None:
    """2 Node (Claude Code's write) + 2 Python writers stream into 4 members' inboxes
    while the watcher delivers and marks read; every message arrives exactly once."""
    root = tmp_path / "claude"
    team = TeamPaths("soak", root)
    create_team(team)
    members = [f"w{i}" for i in range(4)]
    for i, m in enumerate(members):
        register_synthetic(team, m, pane=f"%{i}")
    sink = RecordingSink()
    ledger = SqliteLedger(tmp_path / "ledger.db")
    watcher = InboxWatcher(ledger, sink, root=root, durable=False, dialect=get_dialect(dialect))
    ready = asyncio.Event()
    task = asyncio.create_task(watcher.run(ready))
    await ready.wait()
    peers: list[Peer] = [
        node_writer(team.inbox("w0"), "lead", PER_WRITER, "2.1.112", wait=True, delay_ms=2),
        node_writer(team.inbox("w1"), "lead", PER_WRITER, "2.1.330", wait=True, delay_ms=2),
        py_writer(root, "soak", "w2", "lead", PER_WRITER, "2.1.330", wait=True, durable=False),
        py_writer(root, "soak", "w3", "lead", PER_WRITER, "2.1.112", wait=True, durable=False),
    ]
    try:
        await asyncio.to_thread(start_together, peers)
        results = [await asyncio.to_thread(p.result, 1500) for p in peers]
        written = sum(int(r["written"]) for r in results)
        deadline = asyncio.get_running_loop().time() + 300
        while len(sink.texts()) < written:
            assert asyncio.get_running_loop().time() < deadline, f"{len(sink.texts())}/{written}"
            await asyncio.sleep(0.05)
    finally:
        watcher.request_stop()
        await task
        ledger.close()
    got = Counter(sink.got)
    assert max(got.values()) == 1, "a message was typed twice"
    assert len(got) == written
    assert sum(int(r.get("lock_failures", 0)) for r in results[:2]) == 0


@pytest.mark.parametrize("dialect", ["2.1.112", "2.1.330"])
def test_fault_injection_at_volume(tmp_path: Path, tmux_server: TmuxServer, dialect: Style) -> None:
    """`tests/server/test_fault_injection.py` bigger: 3 workers, 3 MCP clients, 6 server
    kills and 3 teammate kills while 3.5 x EXOMONAD_SOAK_FAULT_MESSAGES Node messages flow."""
    node_binary()
    load = Load(
        dialect,
        workers=3,
        per_writer=FAULT_MESSAGES,
        writer_delay_ms=60,
        mcp_clients=3,
        server_kills=6,
        teammate_kills=3,
    )
    out = run_faults(tmp_path, tmux_server, load)
    print(json.dumps(figures(out)))
    assert_guarantees(out)
