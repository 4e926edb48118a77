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
import socket
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from exomonad.server.identity import TOKEN_HEADER

__all__ = ["RawMcp"]


class RawMcp:
    """A minimal JSON-RPC client over one keep-alive HTTP/1.1 connection (no MCP SDK).

    HTTP is spoken by hand: a request is one prepared byte string and one ``sendall``,
    an answer is read by its ``Content-Length`` (or chunks). ``http.client`` parses
    every answer's headers with the ``email`` package: ~0.3 ms of the client's CPU per
    call, more than the server spends on a cheap tool, on the same 2 cores.
    """

    def __init__(self, sock: Path, token: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(str(sock))
        self.buf = bytearray()
        self.headers: dict[str, str] = {
            "Host": "localhost",
            "Content-Type": "application/json",
            TOKEN_HEADER: token,
            "Accept": "application/json, text/event-stream",
        }
        self._prepare()
        self.next_id = 1
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "exomonad-bench", "version": "0"},
        }
        _, headers, _ = self._post(
            {"jsonrpc": "2.0", "id": self._id(), "method": "initialize", "params": init}
        )
        for name in ("mcp-session-id", "mcp-protocol-version"):
            if name in headers:
                self.headers[name] = headers[name]
        self._prepare()
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _prepare(self) -> None:
        lines = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        self.head = f"POST /mcp HTTP/1.1\r\n{lines}Content-Length: ".encode()

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _post(self, doc: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """One request and its answer: status, headers (names lower-case), body."""
        body = orjson.dumps(doc)
        self.sock.sendall(b"%b%d\r\n\r\n%b" % (self.head, len(body), body))
        head = self._until(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            return status, headers, self._exactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self._until(b"\r\n").split(b";")[0], 16):
                chunks.append(self._exactly(size))
                self._until(b"\r\n")
            self._until(b"\r\n")  # no trailers are sent
            return status, headers, b"".join(chunks)
        raise RuntimeError(f"an answer without a length: {head!r}")

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise RuntimeError("the server closed the connection")
        self.buf += data

    def _until(self, mark: bytes) -> bytes:
        """Bytes up to ``mark`` (consumed, not returned)."""
        while (end := self.buf.find(mark)) < 0:
            self._fill()
        out = bytes(self.buf[:end])
        del self.buf[: end + len(mark)]
        return out

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """``tools/call``; the result's structured content (raises on an error result)."""
        status, _, body = self._post(
            {
                "jsonrpc": "2.0",
                "id": self._id(),
                "method": "tools/call",
                "params": {"name": tool, "arguments": args},
            }
        )
        doc = orjson.loads(body)
        result = doc.get("result") if isinstance(doc, dict) else None
        if status != 200 or not isinstance(result, dict) or result.get("isError"):
            raise RuntimeError(f"{tool} failed: {doc!r}")
        structured = result.get("structuredContent")
        return structured if isinstance(structured, dict) else {}

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()


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
