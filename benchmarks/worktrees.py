"""A worker's worktree: what making it, judging it (state) and removing it cost.

A scratch repository of ``files`` tracked files (a small project: 300 files, 1.2 MB) on
the benchmark's filesystem; each round makes ``.worktrees/bN`` on ``exo/bN`` from HEAD
(``WorktreeManager.create``, as ``spawn_workers`` does before the pane opens), reads its
state (``status``, merged, pushed: what removal decides by) and removes it. No peer: git
itself is the cost; the figures say what a worker's start and end add.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from exomonad.worktrees import WorktreeManager

NAME = "worktrees"
TITLE = "Worker worktrees: create (git worktree add -b), state, remove"
FILES = 300
_GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid", "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@b.invalid", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip


def _repo(root: Path) -> None:
    for i in range(FILES):
        sub = root / f"pkg{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"mod{i}.py").write_text(f"# module {i}\n" + "x = 1\n" * 600)
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Create, inspect and remove ``rounds`` worktrees; per-phase latencies in ms."""
    rounds = settings.scale(30, 3)
    phases: dict[str, list[float]] = {"create": [], "state": [], "remove": []}
    with tempfile.TemporaryDirectory(dir=settings.base_dir) as tmp:
        root = Path(tmp) / "project"
        _repo(root)
        manager = WorktreeManager(root)
        console.log(f"worktrees: {rounds} rounds over {FILES} tracked files")
        for i in range(rounds):
            t0 = time.perf_counter()
            wt = manager.create(f"b{i}")
            t1 = time.perf_counter()
            state = manager.state(wt.path)
            t2 = time.perf_counter()
            removal = manager.remove(f"b{i}")
            t3 = time.perf_counter()
            if not (state.removable and removal.removed):
                raise RuntimeError(f"a clean worktree was not removed: {removal.message()}")
            for name, (a, b) in (("create", (t0, t1)), ("state", (t1, t2)),
                                 ("remove", (t2, t3))):  # fmt: skip
                phases[name].append((b - a) * 1000)
    return {"files": FILES, "rounds": rounds,
            "phases": {k: summarize(v) for k, v in phases.items()}}  # fmt: skip


def render(data: dict[str, Any], console: Console) -> None:
    """One row per phase."""
    table = Table(title=TITLE, caption=f"{data['rounds']} rounds, {data['files']} files; ms")
    for col in ("phase", "n", "p50", "p90", "p99", "max"):
        table.add_column(col, justify="right")
    for name, s in data["phases"].items():
        table.add_row(name, str(s["n"]), fmt_ms(s["p50"]), fmt_ms(s["p90"]), fmt_ms(s["p99"]),
                      fmt_ms(s["max"]))  # fmt: skip
    console.print(table)
