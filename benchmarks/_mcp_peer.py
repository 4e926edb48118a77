"""A plain MCP client: JSON-RPC over one keep-alive HTTP connection on the server's socket.

:class:`RawMcp` is the floor of what a client has to do per call (no MCP SDK): the
benchmarks use it where the client's own CPU must not hide the server's. Run by path it
is one session of its own process (an agent's MCP client is a process of its own)::

    python benchmarks/_mcp_peer.py --sock S --token T --tool NAME [--args JSON]
        --count N [--warmup W] [--wait]

It connects and initializes, makes ``W`` untimed calls, prints ``ready`` (``--wait``) and
starts on a line from stdin, then makes ``N`` calls back to back. The last stdout line is
``{"latencies_ms", "message_ids", "started", "finished"}``: ``message_ids`` are the
``messageId`` of every call that returned one (warm-up included), ``started`` and
``finished`` are ``time.monotonic()`` (one clock for every process on the machine).
"""

from __future__ import annotations

import argparse
import http.client
import socket
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from exomonad.server.identity import TOKEN_HEADER

__all__ = ["RawMcp"]


class RawMcp:
    """A minimal JSON-RPC client over one keep-alive HTTP connection (no MCP SDK)."""

    def __init__(self, sock: Path, token: str) -> None:
        self.conn = http.client.HTTPConnection("localhost", timeout=60)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(sock))
        self.conn.sock = s
        self.headers = {
            "Content-Type": "application/json",
            TOKEN_HEADER: token,
            "Accept": "application/json, text/event-stream",
        }
        self.next_id = 1
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "exomonad-bench", "version": "0"},
        }
        resp = self._post(
            {"jsonrpc": "2.0", "id": self._id(), "method": "initialize", "params": init}
        )
        session = resp.getheader("mcp-session-id")
        resp.read()
        if session:
            self.headers["mcp-session-id"] = session
        version = resp.getheader("mcp-protocol-version")
        if version:
            self.headers["mcp-protocol-version"] = version
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}).read()

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _post(self, doc: dict[str, Any]) -> http.client.HTTPResponse:
        self.conn.request("POST", "/mcp", orjson.dumps(doc), self.headers)
        return self.conn.getresponse()

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """``tools/call``; the result's structured content (raises on an error result)."""
        resp = self._post(
            {
                "jsonrpc": "2.0",
                "id": self._id(),
                "method": "tools/call",
                "params": {"name": tool, "arguments": args},
            }
        )
        doc = orjson.loads(resp.read())
        result = doc.get("result") if isinstance(doc, dict) else None
        if resp.status != 200 or not isinstance(result, dict) or result.get("isError"):
            raise RuntimeError(f"{tool} failed: {doc!r}")
        structured = result.get("structuredContent")
        return structured if isinstance(structured, dict) else {}

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def main(argv: list[str] | None = None) -> int:
    """One session: connect, warm up, wait for ``go``, call, print the summary."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sock", type=Path, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--args", default="{}", help="the tool's arguments, a JSON object")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--wait", action="store_true")
    args = ap.parse_args(argv)
    arguments = orjson.loads(args.args)
    client = RawMcp(args.sock, args.token)
    ids: list[str] = []

    def call(i: int) -> None:
        if args.tool == "notify_parent":  # every message distinct: checked exactly once
            arguments["message"] = f"{args.token[:8]} call {i}"
        mid = client.call(args.tool, arguments).get("messageId")
        if isinstance(mid, str):
            ids.append(mid)

    for i in range(-args.warmup, 0):
        call(i)
    if args.wait:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        sys.stdin.readline()
    latencies: list[float] = []
    started, cpu0 = time.monotonic(), time.process_time()
    for i in range(args.count):
        t0 = time.perf_counter()
        call(i)
        latencies.append((time.perf_counter() - t0) * 1000)
    finished, cpu1 = time.monotonic(), time.process_time()
    client.close()
    summary = {
        "latencies_ms": latencies,
        "message_ids": ids,
        "started": started,
        "finished": finished,
        "cpu_s": cpu1 - cpu0,
    }
    sys.stdout.write(orjson.dumps(summary).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
