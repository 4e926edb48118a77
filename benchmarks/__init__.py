"""ExoMonad benchmarks: ``python -m benchmarks [name ...]`` from the repo root (``make bench``).

Each benchmark is a module here exposing ``NAME``, ``TITLE``, ``run(settings, console)``
(returns JSON-ready data) and ``render(data, console)``; register it in :data:`REGISTRY`
and it can be run alone by name. Results print as tables and are merged, per benchmark,
into ``benchmarks/results/latest.json``.

The Node peers (``writer.js`` and friends) live in ``tests/interop``; run ``make setup``
first so ``tests/interop/node_modules`` holds the pinned ``proper-lockfile``.
"""

from __future__ import annotations

#: Benchmark name -> module (imported lazily, in this order for a full run).
REGISTRY: dict[str, str] = {
    "append_latency": "benchmarks.append_latency",
    "append_phases": "benchmarks.append_phases",
    "lock_handoff": "benchmarks.lock_handoff",
    "throughput": "benchmarks.throughput",
    "watch_latency": "benchmarks.watch_latency",
    "watch_cpu": "benchmarks.watch_cpu",
    "notify": "benchmarks.notify",
    "team_load": "benchmarks.team_load",
    "hooks": "benchmarks.hooks",
    "mcp_stdio": "benchmarks.mcp_stdio",
    "policy": "benchmarks.policy",
    "census": "benchmarks.census",
    "worktrees": "benchmarks.worktrees",
    "peer": "benchmarks.peer",
    "github_poll": "benchmarks.github_poll",
    "events": "benchmarks.events",
    "roundtrip": "benchmarks.roundtrip",
}

__all__ = ["REGISTRY"]
