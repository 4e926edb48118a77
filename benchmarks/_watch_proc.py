"""A watcher process for ``watch_cpu``: an :class:`InboxWatcher` over in-memory panes.

Usage: ``python benchmarks/_watch_proc.py ROOT TEAM LEDGER OPTIONS MEMBER...``

Each member is served by a :class:`FakePaneBackend` pane named ``fake:<member>`` (bind
the members to those ids first). ``OPTIONS`` is a JSON object of extra
:class:`InboxWatcher` keyword arguments (``{}``: the server's defaults). Prints ``ready``
once the watcher's initial scan is queued; then answers each stdin line ``stats`` with one
JSON line of :class:`WatcherStats` plus the fake panes' submitted-line count; stops when
stdin closes, printing the final stats line, which adds ``latencies_ms``: per delivered
entry, from its ``timestamp`` (set by the writer just before its write, ms resolution) to
the start of its pane delivery.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.render import render
from exomonad.bridge.watcher import InboxWatcher
from exomonad.panes import FakePaneBackend


class _Renderer:
    """The default renderer, noting (entry timestamp, render time) per entry: rendering
    happens right before the pane delivery, in the same thread."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []

    def __call__(self, entry: dict[str, Any]) -> str:
        self.seen.append((str(entry.get("timestamp")), time.time()))
        return render(entry)

    def latencies_ms(self) -> list[float]:
        """Write (entry timestamp, ms resolution) → delivery start, per entry."""
        return [(t - datetime.fromisoformat(ts).timestamp()) * 1000 for ts, t in self.seen]


def _stats(watcher: InboxWatcher, fake: FakePaneBackend, members: list[str],
           renderer: _Renderer | None = None) -> bytes:  # fmt: skip
    s = watcher.stats
    doc: dict[str, Any] = {
        "passes": s.passes, "delivered": s.delivered, "failed_passes": s.failed_passes,
        "pending": sum(s.pending.values()),
        "submitted": sum(len(fake.submitted(f"fake:{m}")) for m in members),
    }  # fmt: skip
    if renderer is not None:
        doc["latencies_ms"] = renderer.latencies_ms()
    return orjson.dumps(doc) + b"\n"


async def _main(
    root: Path, team: str, ledger_path: Path, options: dict[str, Any], members: list[str]
) -> None:
    fake = FakePaneBackend()
    for m in members:
        fake.add_pane(f"fake:{m}")
    ledger = SqliteLedger(ledger_path)
    renderer = _Renderer()
    watcher = InboxWatcher(ledger, fake, root=root, teams=[team], renderer=renderer,
                           **options)  # fmt: skip
    ready = asyncio.Event()
    task = asyncio.create_task(watcher.run(ready))
    await ready.wait()
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip() == b"stats":
            out.write(_stats(watcher, fake, members))
            out.flush()
    watcher.request_stop()
    await task
    ledger.close()
    out.write(_stats(watcher, fake, members, renderer))
    out.flush()


if __name__ == "__main__":
    asyncio.run(
        _main(
            Path(sys.argv[1]),
            sys.argv[2],
            Path(sys.argv[3]),
            orjson.loads(sys.argv[4]),
            sys.argv[5:],
        )
    )
