"""What checking the lead's token against the connecting process costs.

A request with the lead's token is the lead's only from a process in no other agent's
session: the server reads the peer's pid (``SO_PEERCRED``) and walks its parents in
``/proc`` (:func:`exomonad.ancestry.other_agent`). Measured here for a process
``depth`` shells below this one (a Claude Code lead's hook is about 4-6 deep under
tmux), next to the token lookup alone: the peer is the check's whole cost.
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
from exomonad.ancestry import other_agent
from exomonad.server.identity import Identity, TokenStore

NAME = "peer"
TITLE = "Lead token: token lookup alone vs. lookup + peer ancestry walk"
DEPTHS = (1, 4, 8)


def _chain(script: Path, depth: int) -> tuple[subprocess.Popen[bytes], int]:
    """A ``sleep`` ``depth`` shells below us, and its pid."""
    proc = subprocess.Popen([str(script), str(depth)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        leaf = _leaf(proc.pid)
        if leaf is not None and Path(f"/proc/{leaf}/comm").read_text().strip() == "sleep":
            return proc, leaf
        time.sleep(0.01)
    proc.kill()
    raise RuntimeError(f"no sleep {depth} deep")


def _leaf(pid: int) -> int | None:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return _leaf(int(children[0])) if children else pid


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Per depth: p50/p99 of lookup alone and of lookup + ``other_agent``."""
    rounds = settings.scale(2000, 50)
    out: dict[str, Any] = {"rounds": rounds, "depths": {}}
    with tempfile.TemporaryDirectory() as tmp:
        store = TokenStore(Path(tmp))
        script = Path(tmp) / "chain.sh"
        script.write_text(
            '#!/bin/sh\nif [ "$1" -gt 1 ]; then "$0" $(($1 - 1)); :; else exec sleep 60; fi\n'
        )
        script.chmod(0o755)
        token = store.issue(Identity(name="team-lead", role="tl"))
        for depth in DEPTHS:
            proc, pid = _chain(script, depth)
            try:
                lookup, checked = [], []
                for _ in range(rounds):
                    t0 = time.perf_counter()
                    store.lookup(token)
                    t1 = time.perf_counter()
                    store.lookup(token)
                    if other_agent(pid, token) is not None:
                        raise RuntimeError("a plain shell chain judged an agent's")
                    t2 = time.perf_counter()
                    lookup.append((t1 - t0) * 1000)
                    checked.append((t2 - t1) * 1000)
            finally:
                subprocess.run(["pkill", "-P", str(proc.pid)], check=False)
                proc.kill()
                proc.wait()
            levels = depth + len(list(_ancestors_of_self()))
            out["depths"][str(depth)] = {"levels": levels, "lookup": summarize(lookup),
                                         "lookup+peer": summarize(checked)}  # fmt: skip
    console.log(f"peer: {rounds} rounds per depth {DEPTHS}")
    return out


def _ancestors_of_self() -> list[int]:
    from exomonad.ancestry import ancestors

    return [p.pid for p in ancestors(os.getpid())]


def render(data: dict[str, Any], console: Console) -> None:
    """One row per depth."""
    table = Table(title=TITLE, caption=f"{data['rounds']} rounds per depth; ms")
    for col in ("depth", "processes walked", "lookup p50", "lookup p99", "+peer p50",
                "+peer p99"):  # fmt: skip
        table.add_column(col, justify="right")
    for depth, d in data["depths"].items():
        a, b = d["lookup"], d["lookup+peer"]
        table.add_row(depth, str(d["levels"]), fmt_ms(a["p50"]), fmt_ms(a["p99"]),
                      fmt_ms(b["p50"]), fmt_ms(b["p99"]))  # fmt: skip
    console.print(table)
