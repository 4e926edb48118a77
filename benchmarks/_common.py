"""What every benchmark module shares: settings, statistics, environment facts, fixtures."""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from exomonad.teams import TeamPaths, create_team

__all__ = [
    "Benchmark",
    "Settings",
    "environment",
    "fmt_ms",
    "percentile",
    "prefill_entries",
    "summarize",
    "team_dir",
]


@dataclass(frozen=True)
class Settings:
    """Options every benchmark receives.

    ``quick`` shrinks every loop (a smoke run, not a measurement). ``base_dir`` is where
    the temporary config roots go: put it on the filesystem your ``~/.claude`` is on.
    """

    quick: bool = False
    base_dir: Path | None = None

    def scale(self, full: int, quick: int) -> int:
        """``quick`` in quick mode, else ``full``."""
        return quick if self.quick else full


class Benchmark(Protocol):
    """A benchmark module: ``NAME``, ``TITLE``, ``run`` and ``render``."""

    NAME: str
    TITLE: str

    def run(self, settings: Settings, console: Console) -> dict[str, Any]:
        """Measure; return JSON-ready data (also what :meth:`render` shows)."""
        ...

    def render(self, data: dict[str, Any], console: Console) -> None:
        """Print ``data`` as a table."""
        ...


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of sorted values, by linear interpolation.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
    """
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def summarize(values_ms: Sequence[float]) -> dict[str, float | int]:
    """n, p50, p90, p99, max and mean of latencies in ms.

    >>> summarize([1.0, 3.0])["p50"]
    2.0
    """
    s = sorted(values_ms)
    return {
        "n": len(s),
        "p50": percentile(s, 50),
        "p90": percentile(s, 90),
        "p99": percentile(s, 99),
        "max": s[-1] if s else float("nan"),
        "mean": sum(s) / len(s) if s else float("nan"),
    }


def fmt_ms(value: float) -> str:
    """Milliseconds with sensible precision."""
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def prefill_entries(n: int, sender: str = "teammate") -> list[dict[str, Any]]:
    """``n`` realistic 2.1.330 inbox entries (about 330 bytes each, pretty-printed)."""
    return [
        {
            "from": sender,
            "text": f"message {i}: " + "please look at src/exomonad/teams/mailbox.py " * 2,
            "summary": f"note {i}",
            "timestamp": "2026-11-21T12:00:00.000Z",
            "msgV": 1,
            "msg_id": f"00000000-0000-4000-8000-{i:012d}",
            "type": "message",
        }
        for i in range(n)
    ]


@contextmanager
def team_dir(settings: Settings, name: str = "bench") -> Iterator[TeamPaths]:
    """A fresh team under a temporary config root, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="exomonad-bench-", dir=settings.base_dir))
    try:
        paths = TeamPaths(name, root)
        create_team(paths)
        yield paths
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _fs_type(path: Path) -> str:
    """The filesystem type holding ``path`` (from /proc/mounts; "?" elsewhere)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "?"
    best, fstype = "", "?"
    target = str(path.resolve())
    for line in mounts:
        parts = line.split()
        if len(parts) >= 3 and target.startswith(parts[1]) and len(parts[1]) > len(best):
            best, fstype = parts[1], parts[2]
    return fstype


def environment(settings: Settings) -> dict[str, Any]:
    """Facts that make numbers comparable: machine, load, filesystem, versions."""
    from tests.interop.peers import PROPER_LOCKFILE_VERSION, node_version

    base = settings.base_dir or Path(tempfile.gettempdir())
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
        "node": node_version(),
        "proper_lockfile": PROPER_LOCKFILE_VERSION,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_1m": os.getloadavg()[0],
        "bench_dir": str(base),
        "fs_type": _fs_type(base),
        "quick": settings.quick,
    }
