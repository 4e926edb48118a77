"""Taking a lock its holder has just let go: how long after the release a waiter has it.

A holder process takes a lock dir (``mkdir``, as proper-lockfile does), holds it for a
while, notes the time and lets it go (``rmdir``); this process, already waiting in
:class:`~exomonad.teams.lock.FileLock` with our writers' settings, notes when it has
the lock. The hand-off is the difference (both clocks ``CLOCK_MONOTONIC``). With the
watch (``exomonad.teams.lockwait``: woken by the removal) and without it (each wait of
the back-off slept whole, as before), trial by trial, for holds of 1 ms, 3.4 ms (one of
Claude Code's writes to a lead inbox of a few hundred KB) and 10 ms (its poller's prune).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize, team_dir
from exomonad.teams.lock import DEFAULT_LOCK, FileLock, lock_dir_for

NAME = "lock_handoff"
TITLE = "A held lock let go: how long until the waiter has it"

HOLDS_MS = (1.0, 3.4, 10.0)
METHOD = (
    "a holder process takes the lock dir (mkdir), holds it, notes the time, lets it go "
    "(rmdir); this process, waiting in FileLock with our writers' settings, notes when it "
    "has it; watched (woken by the removal) and back-off only, trial by trial"
)
MODES = {"watched": DEFAULT_LOCK, "back-off only": dataclasses.replace(DEFAULT_LOCK, watch=False)}

#: The holder: per line read (a hold in ms), take the lock dir, say so, hold it, note the
#: time, let it go, print the time.
_HOLDER = """
import os, sys, time
lock = sys.argv[1]
for line in sys.stdin:
    os.mkdir(lock)
    print("locked", flush=True)
    time.sleep(float(line) / 1000)
    let_go = time.monotonic_ns()
    os.rmdir(lock)
    print(let_go, flush=True)
"""


def _trial(holder: subprocess.Popen[str], target: Path, hold_ms: float, mode: str) -> float:
    assert holder.stdin is not None
    assert holder.stdout is not None
    holder.stdin.write(f"{hold_ms}\n")
    holder.stdin.flush()
    if holder.stdout.readline().strip() != "locked":
        raise RuntimeError("the holder did not take the lock")
    lock = FileLock(target, MODES[mode])
    lock.acquire()
    taken = time.monotonic_ns()
    lock.release()
    return (taken - int(holder.stdout.readline())) / 1e6


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Trials for each hold, the modes taking turns."""
    trials = settings.scale(300, 10)
    rows = []
    with team_dir(settings) as paths:
        target = paths.inbox("team-lead")
        target.parent.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(lock_dir_for(target))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            for hold in HOLDS_MS:
                times: dict[str, list[float]] = {mode: [] for mode in MODES}
                for _ in range(trials):
                    for mode, values in times.items():
                        values.append(_trial(holder, target, hold, mode))
                rows.append({"hold_ms": hold, **{m: summarize(v) for m, v in times.items()}})
        finally:
            if holder.stdin is not None:
                holder.stdin.close()
            holder.wait(timeout=30)
    return {"rows": rows, "method": METHOD}


def render(data: dict[str, Any], console: Console) -> None:
    """One row per hold: the hand-off, watched and not."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("hold", "watched p50", "p90", "p99", "back-off only p50", "p90 ", "p99 ",
                "p50 ratio"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in data["rows"]:
        w, b = r["watched"], r["back-off only"]
        table.add_row(fmt_ms(r["hold_ms"]), fmt_ms(w["p50"]), fmt_ms(w["p90"]), fmt_ms(w["p99"]),
                      fmt_ms(b["p50"]), fmt_ms(b["p90"]), fmt_ms(b["p99"]),
                      f"{w['p50'] / b['p50']:.2f}")  # fmt: skip
    console.print(table)
    console.print("hand-off in ms: from the holder's release to the waiter having the lock")
