"""``python -m benchmarks [name ...] [--quick] [--dir DIR] [--out FILE] [--list]``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any, cast

import orjson
from rich.console import Console
from tests.interop.peers import SetupMissing, node_binary

from benchmarks import REGISTRY
from benchmarks._common import Benchmark, Settings, environment

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "latest.json"


def _load(name: str) -> Benchmark:
    return cast(Benchmark, importlib.import_module(REGISTRY[name]))


def _merge(out: Path, fresh: dict[str, Any]) -> None:
    """Update ``out`` with this run's benchmarks, keeping the others' last results."""
    try:
        doc = orjson.loads(out.read_bytes())
        if not isinstance(doc, dict):
            doc = {}
    except (FileNotFoundError, orjson.JSONDecodeError):
        doc = {}
    doc.update(fresh)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def main(argv: list[str] | None = None) -> int:
    """Run the named benchmarks (default: all), print tables, write JSON."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    ap.add_argument("names", nargs="*", metavar="name", help=f"any of: {', '.join(REGISTRY)}")
    ap.add_argument("--quick", action="store_true", help="tiny loops: a smoke run, not numbers")
    ap.add_argument("--dir", type=Path, help="where temp inboxes go (default: system temp)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    ap.add_argument("--list", action="store_true", help="list benchmarks and exit")
    args = ap.parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # piped output: do not squeeze the tables to 80 columns

    if args.list:
        for name in REGISTRY:
            console.print(f"{name:16} {_load(name).TITLE}")
        return 0
    unknown = [n for n in args.names if n not in REGISTRY]
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    try:
        node_binary()
    except SetupMissing as exc:
        console.print(f"[bold red]cannot benchmark:[/] {exc}")
        return 2

    settings = Settings(quick=args.quick, base_dir=args.dir)
    fresh: dict[str, Any] = {}
    for name in args.names or list(REGISTRY):
        bench = _load(name)
        env = environment(settings)
        t0 = time.perf_counter()
        data = bench.run(settings, console)
        env["duration_s"] = round(time.perf_counter() - t0, 2)
        env["loadavg_1m_after"] = os.getloadavg()[0]
        fresh[name] = {"env": env, "data": data}
        bench.render(data, console)
        console.print(
            f"[dim]{name}: {env['duration_s']} s; load avg {env['loadavg_1m']:.2f} → "
            f"{env['loadavg_1m_after']:.2f} on {env['cpus']} cpus; {env['fs_type']} at "
            f"{env['bench_dir']}; node {env['node']}[/]\n"
        )
    _merge(args.out, fresh)
    console.print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
