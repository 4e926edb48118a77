"""The event stream of a real server: 100 events/s to 5 SSE clients, lag and loss.

A real ``exomonad serve`` on a temporary project. A paced producer posts a worker's
Gemini ``BeforeTool`` hook (``run_shell_command ls``) over the server's socket at
:data:`RATE` per second (absolute schedule, no drift); each is one ``policy_decision``
event on the bus (the kind a working team publishes most). Five clients follow
``GET /events`` with the lead's token (:meth:`ServerClient.events`, each on its own
thread in this process), all subscribed from the same sequence id before the producer
starts.

Lag is, per event and client, the time the client parsed it minus the event's ``ts``
(stamped by the bus when published; one machine, one clock): publication to a client's
hands, through the subscriber queue, the SSE framing, uvicorn and the socket. Lost: the
sequence ids a client never got (or got as a ``gap``) out of every id published from
its start to the end; must be 0. Server CPU per event from ``/proc``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import ExoServer, exomonad_server, uds_request, verdict
from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.util.waiting import retry_until

NAME = "events"
TITLE = "Event stream: 100 events/s to 5 SSE clients, lag and loss"

RATE = 100.0
CLIENTS = 5
WORKER = "gemini-1"
TARGET_P99_MS = 50.0


@dataclass
class Follower:
    """One SSE client and what it saw."""

    name: str
    seqs: list[int] = field(default_factory=list)
    lags_ms: list[float] = field(default_factory=list)
    missed: int = 0
    error: str | None = None
    ready: threading.Event = field(default_factory=threading.Event)

    def follow(self, server: ExoServer, since: int) -> None:
        """Read ``/events`` from ``since`` until the server stops."""
        client = ServerClient(server.state, token=server.lead_token, timeout=120)
        try:
            with client.events(since=since) as stream:
                for msg in stream:
                    now = time.time()
                    if msg.event == "hello":
                        self.ready.set()
                    elif msg.event == "gap":
                        self.missed += int(orjson.loads(msg.data)["missed"])
                    else:
                        event = orjson.loads(msg.data)
                        self.seqs.append(int(event["seq"]))
                        self.lags_ms.append((now - float(event["ts"])) * 1000)
        except ExomonadError as exc:
            self.error = str(exc)
        finally:
            self.ready.set()


def _produce(server: ExoServer, count: int, token: str) -> float:
    """``count`` hooks at :data:`RATE` per second; the seconds it took."""
    t0 = time.perf_counter()
    for i in range(count):
        delay = t0 + i / RATE - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # the pace itself, not a wait for a condition
        body = {"session_id": "bench-worker", "tool_name": "run_shell_command",
                "tool_input": {"command": f"ls {i}"}, "cwd": str(server.state.parent)}  # fmt: skip
        status, doc = uds_request(server.sock, "POST", "/hook/before-tool?runtime=gemini",
                                  body, token=token)  # fmt: skip
        if status != 200 or doc["output"].get("decision") == "deny":
            raise RuntimeError(f"hook {i} answered {status}: {doc!r}")
    return time.perf_counter() - t0


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Start the server and the followers, produce, wait for every client to catch up."""
    seconds = settings.scale(60, 3)
    count = int(seconds * RATE)
    with exomonad_server(settings, workers=[WORKER]) as server:
        since = int(server.health()["services"]["events"]["last_seq"])
        followers = [Follower(f"client-{k + 1}") for k in range(CLIENTS)]
        threads = [threading.Thread(target=f.follow, args=(server, since), daemon=True)
                   for f in followers]  # fmt: skip
        for t in threads:
            t.start()
        for f in followers:
            f.ready.wait(30)
            if f.error:
                raise RuntimeError(f"{f.name}: {f.error}")
        console.log(f"events: {count} hooks at {RATE:.0f}/s, {CLIENTS} SSE clients")
        cpu0 = server.cpu_seconds()
        elapsed = _produce(server, count, server.workers[WORKER])
        last = int(server.health()["services"]["events"]["last_seq"])
        retry_until(lambda: all(f.error or (f.seqs and f.seqs[-1] >= last) for f in followers),
                    timeout=60, message="the clients did not catch up")  # fmt: skip
        cpu = server.cpu_seconds() - cpu0
        bus = server.health()["services"]["events"]
    for t in threads:
        t.join(30)  # the streams end with the server
    want = set(range(since + 1, last + 1))
    rows: list[dict[str, Any]] = []
    for f in followers:
        got = [s for s in f.seqs if s <= last]
        rows.append({"client": f.name, "events": len(got), "lost": len(want - set(got)),
                     "duplicates": len(got) - len(set(got)), "gaps_missed": f.missed,
                     "in_order": got == sorted(got), "error": f.error,
                     "lag": summarize(f.lags_ms[: len(got)])})  # fmt: skip
    published = last - since
    return {
        "method": (
            "real `exomonad serve`; a paced producer posts a worker's BeforeTool hook over the "
            f"socket at {RATE:.0f}/s (one policy_decision event each); {CLIENTS} clients follow "
            "GET /events (lead token, threads in this process); lag = client parse time - "
            "event ts (same clock)"
        ),
        "seconds": round(elapsed, 2),
        "published": published,
        "rate": round(published / elapsed, 1),
        "server_cpu_ms_per_event": round(cpu * 1000 / max(published, 1), 3),
        "bus": {k: bus[k] for k in ("dropped", "gaps", "queue", "ring")},
        "rows": rows,
        "lost_total": sum(r["lost"] + r["gaps_missed"] for r in rows),
        "targets": {"lost": 0, "lag_p99_ms": TARGET_P99_MS},
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per client: events, lost, lag percentiles."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("client", "events", "lost", "in order", "lag p50", "p90", "p99", "max",
                "target"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in data["rows"]:
        lag = r["lag"]
        ok = r["lost"] == 0 and r["gaps_missed"] == 0 and r["in_order"] and not r["error"]
        target = verdict(f"0 lost, p99 < {TARGET_P99_MS:.0f}",
                         ok and lag["p99"] < TARGET_P99_MS)  # fmt: skip
        table.add_row(r["client"], str(r["events"]), str(r["lost"] + r["gaps_missed"]),
                      "yes" if r["in_order"] else "NO", fmt_ms(lag["p50"]), fmt_ms(lag["p90"]),
                      fmt_ms(lag["p99"]), fmt_ms(lag["max"]), target)  # fmt: skip
    console.print(table)
    console.print(
        f"lag in ms; {data['published']} events in {data['seconds']} s ({data['rate']}/s); "
        f"server CPU {data['server_cpu_ms_per_event']} ms per event (hook + policy + 5 "
        f"streams); bus dropped {data['bus']['dropped']}, lost in all {data['lost_total']}"
    )
