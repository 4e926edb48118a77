"""Hook process wall time: ``exomonad hook pre-tool-use`` against a real server.

Every tool call of every agent starts one hook process, so its whole wall time (start
Python, import the stdlib-only client, find the project, post to the server over its Unix
socket, the server's policy decision, print, exit) is what an agent waits for. Measured
per run from ``Popen`` to exit (``subprocess.run`` with the stdin JSON), for:

* ``python -c pass``: bare interpreter start-up, the floor;
* ``python -c 'import exomonad.hookclient'``: start-up plus the client's imports;
* ``python -m exomonad hook pre-tool-use --runtime claude`` and the installed console
  script ``.venv/bin/exomonad hook ...``: a Claude Code PreToolUse for Bash ``ls``, as the
  lead started by hand (no ``EXOMONAD_TOKEN``: the client uses ``lead.token``);
* the lead's hook as under ``exomonad up`` (``EXOMONAD_DIR`` set): the console script
  behind the shell front, which sends ``lead.token`` as a claim the server checks;
* ``python -m exomonad hook before-tool --runtime gemini``: Gemini CLI's BeforeTool for
  ``run_shell_command`` ``ls``, with a worker's token;
* the same worker hook as ``exomonad init`` writes it: the installed console script
  behind the shell front, ``exomonad-hook .venv/bin/exomonad hook before-tool ...``
  (answered by ``sh`` and netcat-openbsd, no Python process), and the console script
  alone for comparison.

The project is found as in real use (:func:`exomonad.state.agent_state_dir`): the lead's
Claude Code hook started by hand has no ``EXOMONAD_DIR`` and walks up from
``$CLAUDE_PROJECT_DIR`` (the project, as Claude Code sets it) to ``.exomonad/``; a worker's
hook has the ``EXOMONAD_DIR`` ExoMonad gives it with its token. The lead's hooks are the
lead's only below a Claude Code lead, so while they run this process names itself
``claude`` (``/proc/self/comm``, put back after): its hook processes then have the
parents a real lead's have. Every answer is checked (exit 0, ``allow``, no fail-open;
a lead's ``allow`` given to the lead's role, and no claim declined). Sequential runs
interleave the variants round-robin so load drift hits all alike; then 16 at a time (a
thread pool of 16 ``subprocess.run``). For reference, the same hook posted directly over
the socket from this process (no hook process): the server's share. CPU per run: the
hook processes' own (user + system, from ``RUSAGE_CHILDREN``) and, 16 at a time, the
server's (``/proc``): on 2 cores, 16 runs at once take about 8 times their CPU each.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import ExoServer, exomonad_server, verdict

NAME = "hooks"
TITLE = "Hook process wall time: `exomonad hook pre-tool-use` against a running server"

TARGET_P50_MS = 50.0  # one hook process
#: Issue 14's target for 16 hook processes at once (on 2 cores).
TARGET_CONCURRENT_P50_MS = 100.0
WORKER = "gemini-1"
CONCURRENCY = 16


@dataclass(frozen=True)
class Variant:
    """One command line and its stdin."""

    name: str
    argv: list[str]
    stdin: bytes
    env: dict[str, str]
    runtime: str | None  # None: not a hook (no answer to check)
    lead: bool = False  # answered as the lead (its role's own reason)


def _payloads(server: ExoServer) -> tuple[dict[str, Any], dict[str, Any]]:
    cwd = str(server.state.parent)
    claude = {
        "session_id": "0b7c6f3e-bench-claude", "transcript_path": f"{cwd}/transcript.jsonl",
        "cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls", "description": "List files"},
        "tool_use_id": "toolu_01BenchBenchBenchBench",
    }  # fmt: skip
    gemini = {
        "session_id": "bench-gemini", "transcript_path": f"{cwd}/gemini.json", "cwd": cwd,
        "hook_event_name": "BeforeTool", "timestamp": "2026-11-21T12:00:00.000Z",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
    }  # fmt: skip
    return claude, gemini


def _variants(server: ExoServer) -> list[Variant]:
    py = sys.executable
    script = str(Path(sys.executable).parent / "exomonad")
    front = str(Path(sys.executable).parent / "exomonad-hook")
    env = {k: v for k, v in server.env.items() if k != "EXOMONAD_DIR"}
    env["CLAUDE_PROJECT_DIR"] = str(server.state.parent)  # what Claude Code sets
    worker_env = {**server.env, "EXOMONAD_TOKEN": server.workers[WORKER],
                  "EXOMONAD_DIR": str(server.state)}  # fmt: skip
    up_env = {**env, "EXOMONAD_DIR": str(server.state)}  # the lead under `exomonad up`
    claude, gemini = (orjson.dumps(p) for p in _payloads(server))
    return [
        Variant("python -c pass", [py, "-c", "pass"], b"", env, None),
        Variant("python -c 'import exomonad.hookclient'",
                [py, "-c", "import exomonad.hookclient"], b"", env, None),
        Variant("python -m exomonad hook pre-tool-use (claude)",
                [py, "-m", "exomonad", "hook", "pre-tool-use", "--runtime", "claude"],
                claude, env, "claude", lead=True),
        Variant("exomonad hook pre-tool-use (claude lead, console script)",
                [script, "hook", "pre-tool-use", "--runtime", "claude"], claude, env, "claude",
                lead=True),
        Variant("python -m exomonad hook before-tool (gemini)",
                [py, "-m", "exomonad", "hook", "before-tool", "--runtime", "gemini"],
                gemini, worker_env, "gemini"),
        Variant("exomonad hook before-tool (gemini worker, console script)",
                [script, "hook", "before-tool", "--runtime", "gemini"], gemini, worker_env,
                "gemini"),
        Variant("exomonad-hook exomonad hook before-tool (gemini worker, shell front)",
                [front, script, "hook", "before-tool", "--runtime", "gemini"], gemini,
                worker_env, "gemini"),
        Variant("exomonad-hook exomonad hook pre-tool-use (claude lead, up, shell front)",
                [front, script, "hook", "pre-tool-use", "--runtime", "claude"], claude,
                up_env, "claude", lead=True),
    ]  # fmt: skip


@contextmanager
def _named(name: str) -> Iterator[None]:
    """This process's name (``/proc/self/comm``, what ``ps`` and
    :mod:`exomonad.ancestry` read) is ``name`` meanwhile."""
    comm = Path("/proc/self/comm")
    was = comm.read_text().strip()
    comm.write_text(name)
    try:
        yield
    finally:
        comm.write_text(was)


def _children_cpu() -> float:
    """CPU seconds of this process's children so far (the hook processes, once reaped)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _once(v: Variant, cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(v.argv, input=v.stdin, env=v.env, cwd=cwd, capture_output=True,
                          timeout=60, check=False)  # fmt: skip
    dt = (time.perf_counter() - t0) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{v.name} exited {done.returncode}: {done.stderr.decode()}")
    if v.runtime is not None:
        out = orjson.loads(done.stdout)
        decision = (out.get("decision") if v.runtime == "gemini"
                    else out.get("hookSpecificOutput", {}).get("permissionDecision"))  # fmt: skip
        lead_role = b"tl may ls" in done.stdout
        if decision != "allow" or b"fail-open" in done.stderr or (v.lead and not lead_role):
            raise RuntimeError(f"{v.name}: unexpected answer {done.stdout!r} {done.stderr!r}")
    return dt


def _concurrent(v: Variant, cwd: Path, runs: int, server: ExoServer) -> dict[str, Any]:
    c0, s0, t0 = _children_cpu(), server.cpu_seconds(), time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        lat = list(pool.map(lambda _: _once(v, cwd), range(runs)))
    elapsed = time.perf_counter() - t0
    return {"latency": summarize(lat), "runs_per_s": runs / elapsed,
            "cpu_ms": (_children_cpu() - c0) * 1000 / runs,
            "server_cpu_ms": (server.cpu_seconds() - s0) * 1000 / runs}  # fmt: skip


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Sequential (interleaved), 16 concurrent, and direct posts for reference."""
    rounds = settings.scale(100, 8)
    conc_runs = settings.scale(8 * CONCURRENCY, 2 * CONCURRENCY)
    direct_n = settings.scale(200, 20)
    rows: list[dict[str, Any]] = []
    with exomonad_server(settings, workers=[WORKER]) as server, _named("claude"):
        cwd = server.state.parent
        variants = _variants(server)
        for v in variants:  # warm the page cache and .pyc files, untimed
            _once(v, cwd)
        counted = server.health()["counters"]
        before, front_before = (int(counted.get(k, 0)) for k in ("hook_pre_tool_use", "hook_front"))
        console.log(f"hooks: {rounds} rounds of {len(variants)} variants, sequential")
        seq: dict[str, list[float]] = {v.name: [] for v in variants}
        cpu = dict.fromkeys(seq, 0.0)
        for _ in range(rounds):
            for v in variants:
                c0 = _children_cpu()
                seq[v.name].append(_once(v, cwd))
                cpu[v.name] += _children_cpu() - c0
        for v in variants:
            rows.append({"case": v.name, "mode": "sequential", "hook": v.runtime is not None,
                         "runs": rounds, "latency": summarize(seq[v.name]),
                         "cpu_ms": cpu[v.name] * 1000 / rounds})  # fmt: skip
        for v in (variants[0], variants[3], variants[5], variants[6], variants[7]):
            console.log(f"hooks: {conc_runs} runs, {CONCURRENCY} at a time: {v.name}")
            rows.append({"case": v.name, "mode": f"{CONCURRENCY} concurrent",
                         "hook": v.runtime is not None, "runs": conc_runs,
                         **_concurrent(v, cwd, conc_runs, server)})  # fmt: skip
        console.log(f"hooks: {direct_n} direct posts (no hook process)")
        claude, _ = _payloads(server)
        lead = server.lead_token
        lat = []
        for _ in range(direct_n):
            t0 = time.perf_counter()
            answer = server.hook("pre-tool-use", claude, token=lead)
            lat.append((time.perf_counter() - t0) * 1000)
            if answer["output"]["hookSpecificOutput"]["permissionDecision"] != "allow":
                raise RuntimeError(f"direct post: unexpected answer {answer!r}")
        rows.append({"case": "POST /hook/pre-tool-use from this process (no hook process)",
                     "mode": "sequential", "hook": False, "runs": direct_n,
                     "latency": summarize(lat)})  # fmt: skip
        counted = server.health()["counters"]
        after, front_after = (int(counted.get(k, 0)) for k in ("hook_pre_tool_use", "hook_front"))
        if counted.get("lead_claim_declined"):
            raise RuntimeError(f"the server declined the lead's claim: {counted}")
    hook_runs = sum(r["runs"] for r in rows if r["hook"]) + direct_n
    front_runs = sum(r["runs"] for r in rows if "shell front" in r["case"])
    return {
        "method": (
            "wall time per process, Popen to exit, stdin = a realistic hook JSON; project found "
            "from $CLAUDE_PROJECT_DIR (lead) or $EXOMONAD_DIR (worker); sequential runs "
            "interleave the variants; then a pool of "
            f"{CONCURRENCY}; the server is a real `exomonad serve` (policy + audit on)"
        ),
        "rows": rows,
        "server_hook_count": after - before,
        "expected_hook_count": hook_runs,
        "server_front_count": front_after - front_before,
        "expected_front_count": front_runs,
        "target_p50_ms": TARGET_P50_MS,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per (variant, mode)."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("command", "mode", "runs", "p50", "p90", "p99", "max", "runs/s", "CPU/run",
                "server CPU/run", "target"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in data["rows"]:
        lat = r["latency"]
        target = ""
        if r["hook"]:
            bound = TARGET_P50_MS if r["mode"] == "sequential" else TARGET_CONCURRENT_P50_MS
            target = verdict(f"p50 < {bound:.0f}", lat["p50"] < bound)
        rate = f"{r['runs_per_s']:.0f}" if "runs_per_s" in r else ""
        cpu = fmt_ms(r["cpu_ms"]) if "cpu_ms" in r else ""
        server = fmt_ms(r["server_cpu_ms"]) if "server_cpu_ms" in r else ""
        table.add_row(r["case"], r["mode"], str(r["runs"]), fmt_ms(lat["p50"]),
                      fmt_ms(lat["p90"]), fmt_ms(lat["p99"]), fmt_ms(lat["max"]), rate, cpu,
                      server, target)  # fmt: skip
    console.print(table)
    console.print(
        f"times in ms; the server counted {data['server_hook_count']} PreToolUse/BeforeTool "
        f"hooks, {data['expected_hook_count']} expected (warm-up runs excluded); of them "
        f"{data['server_front_count']} answered to the shell front, "
        f"{data['expected_front_count']} expected"
    )
