"""Append latency: our ``Mailbox.send`` against Claude Code's write (``writer.js``).

Each cell is one inbox size (10, 100, 1000 pre-filled entries) and one durability
setting. Both sides do the same work, one message at a time, no contention:

* Python: ``Mailbox(dialect=2.1.330, durable=...).send(..., check_member=False)``, timed
  around the whole call (mkdir -p, create-if-absent, lock, read, parse, append, write to
  temp + rename, read-back verify, unlock).
* Node: ``writer.js`` in 2.1.330 style, timed inside Node around the same steps
  (mkdir -p, create-if-absent, proper-lockfile lock, read, parse, append, temp + rename,
  unlock). ``--durable`` adds the same fsyncs as ours (file before rename, dir after);
  Claude Code itself never fsyncs, so the non-durable Node column *is* Claude Code.

Keeping the size constant: before **every** timed append the harness copies the
pre-filled snapshot (N entries) back over the inbox, untimed, so each timed append reads
N entries and writes N + 1. Both sides first do 20 untimed warm-up appends per block.
Background load drifts (a shared 2-core box), so each side runs in 4 blocks, interleaved
py, node, node, py, py, node, node, py: both see the same mix of quiet and busy moments.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tests.interop import peers

from benchmarks._common import Settings, fmt_ms, prefill_entries, summarize, team_dir
from exomonad.teams import Mailbox, TeamPaths, get_dialect
from exomonad.teams.atomic import dump_json

NAME = "append_latency"
TITLE = "Append latency, Python Mailbox vs Node writer (Claude Code's write)"

SIZES = (10, 100, 1000)
WARMUP = 20
BLOCKS = 4


def _appends(settings: Settings, size: int) -> int:
    return settings.scale(300 if size < 1000 else 200, 30)


def _python(paths: TeamPaths, snapshot: bytes, count: int, durable: bool) -> list[float]:
    mailbox = Mailbox(paths, dialect=get_dialect("2.1.330"), durable=durable)
    inbox = paths.inbox("team-lead")
    out: list[float] = []
    for i in range(-WARMUP, count):
        inbox.write_bytes(snapshot)  # reset to N entries, untimed
        t0 = time.perf_counter()
        mailbox.send("team-lead", sender="bench-py", text=f"py#{i}", check_member=False)
        dt = (time.perf_counter() - t0) * 1000
        if i >= 0:
            out.append(dt)
    return out


def _node(inbox: Path, prefill: Path, count: int, durable: bool) -> list[float]:
    writer = peers.node_writer(
        inbox,
        "bench-node",
        count,
        "2.1.330",
        durable=durable,
        prefill_from=prefill,
        reset_every=1,
        warmup=WARMUP,
    )
    summary = writer.result(timeout=300)
    if summary["lock_failures"] or summary["written"] != count:
        raise RuntimeError(f"node writer did not write everything: {summary}")
    return [float(x) for x in summary["latencies_ms"]]


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Measure every (size, durable) cell; return per-cell stats for both sides."""
    cells: list[dict[str, Any]] = []
    for durable in (True, False):
        for size in SIZES:
            count = _appends(settings, size)
            blocks = [count // BLOCKS + (k < count % BLOCKS) for k in range(BLOCKS)]
            console.log(f"append latency: {size} entries, durable={durable}, {count} appends")
            with team_dir(settings) as paths:
                inbox = paths.inbox("team-lead")
                inbox.parent.mkdir(parents=True, exist_ok=True)
                snapshot = dump_json(prefill_entries(size))
                prefill = paths.root / "prefill.json"
                prefill.write_bytes(snapshot)
                py: list[float] = []
                node: list[float] = []
                for k, n in enumerate(blocks):
                    if k % 2 == 0:
                        py += _python(paths, snapshot, n, durable)
                        node += _node(inbox, prefill, n, durable)
                    else:
                        node += _node(inbox, prefill, n, durable)
                        py += _python(paths, snapshot, n, durable)
            py_s, node_s = summarize(py), summarize(node)
            cells.append(
                {
                    "entries": size,
                    "durable": durable,
                    "appends": count,
                    "inbox_bytes": len(snapshot),
                    "python": py_s,
                    "node": node_s,
                    "ratio_p50": py_s["p50"] / node_s["p50"],
                    "ratio_p99": py_s["p99"] / node_s["p99"],
                }
            )
    return {
        "method": (
            "sequential single writer; inbox reset to N entries before every timed append "
            f"(untimed); {BLOCKS} interleaved blocks per side, {WARMUP} warm-up appends per "
            "block discarded; Node timed in-process"
        ),
        "cells": cells,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per cell: p50/p99 for both sides and the py/node ratios."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("entries", "fsync", "n", "py p50", "node p50", "py/node", "py p99",
                "node p99", "py/node", "py max", "node max"):  # fmt: skip
        table.add_column(col, justify="right")
    for c in data["cells"]:
        py, node = c["python"], c["node"]
        table.add_row(
            str(c["entries"]),
            "yes" if c["durable"] else "no",
            str(c["appends"]),
            fmt_ms(py["p50"]),
            fmt_ms(node["p50"]),
            f"{c['ratio_p50']:.2f}",
            fmt_ms(py["p99"]),
            fmt_ms(node["p99"]),
            f"{c['ratio_p99']:.2f}",
            fmt_ms(py["max"]),
            fmt_ms(node["max"]),
        )
    console.print(table)
    console.print("times in ms; 'node, fsync=no' is exactly Claude Code's write")
