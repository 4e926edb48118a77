"""What looking for planted links costs a worker's call (``exomonad.policy.planted``).

A worker's call that may read files it does not name (a tree read, a directory searched,
a name made at run time) walks its worktree's directories: one ``stat`` each, a listing
where one changed. Here a worker's ``grep -r x .`` is decided in worktrees of 100, 1,000
and 10,000 directories (five files each, and one ordinary link), beside the same call
with no worktree (the lead's, no census): the difference is the census. The first call
lists every directory; the rest are timed. Calls that name their files take no census.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import temp_root
from exomonad.policy import PolicyEngine, ToolRequest

NAME = "census"
TITLE = "Planted-link census: a worker's call decided in worktrees of growing size"

SIZES = (100, 1_000, 10_000)


def _tree(root: Path, dirs: int) -> None:
    for i in range(dirs):
        d = root / f"d{i // 100}" / f"e{i}"
        d.mkdir(parents=True)
        for k in range(5):
            (d / f"f{k}.py").write_text("x = 1\n")
    (root / "python").symlink_to("/usr/bin/env")


def _timed(engine: PolicyEngine, worktree: str | None, cwd: str, n: int) -> list[float]:
    req = ToolRequest("claude", "worker", "w1", "Bash", {"command": "grep -r x ."}, cwd=cwd,
                      worktree=worktree, branch="exo/w1")  # fmt: skip
    engine.decide(req)  # the first lists the tree
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        engine.decide(req)
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """For each size: the worker's call with and without its worktree looked through."""
    n = settings.scale(300, 50)
    rows = []
    for size in SIZES:
        console.log(f"census: {size} directories, {n} calls each way")
        with temp_root(settings, "exomonad-bench-census-") as tmp:
            state, wt = tmp / "p" / ".exomonad", tmp / "p" / ".worktrees" / "w1"
            state.mkdir(parents=True)
            _tree(wt, size)
            engine = PolicyEngine(state_dir=state)
            t0 = time.perf_counter_ns()
            _timed(engine, str(wt), str(wt), 0)  # the first call only: the tree listed
            listing = (time.perf_counter_ns() - t0) / 1e6
            with_census = _timed(engine, str(wt), str(wt), n)
            without = _timed(engine, None, str(wt), n)
        rows.append({"dirs": size, "first_ms": listing, "with": summarize(with_census),
                     "without": summarize(without)})  # fmt: skip
    return {"method": __doc__.split("\n\n")[1].replace("\n", " "), "rows": rows}


def render(data: dict[str, Any], console: Console) -> None:
    """One row per worktree size."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("directories", "first call", "p50 census", "p99 census", "p50 none",
                "p99 none", "census p50"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in data["rows"]:
        w, o = r["with"], r["without"]
        table.add_row(f"{r['dirs']:,}", fmt_ms(r["first_ms"]), fmt_ms(w["p50"]),
                      fmt_ms(w["p99"]), fmt_ms(o["p50"]), fmt_ms(o["p99"]),
                      fmt_ms(w["p50"] - o["p50"]))  # fmt: skip
    console.print(table)
    console.print("times in ms")
