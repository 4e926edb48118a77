"""A tiny stdio MCP server (stdlib only) standing in for ExoMonad's `exo` server.

Run as `python exo_mcp_stub.py <calls.jsonl>`. It speaks newline-delimited JSON-RPC 2.0 on
stdin/stdout and implements only `initialize`, `ping`, `tools/list` and `tools/call`,
exposing one tool, `notify_parent(status, message)`, which appends its arguments as one
JSON line to `<calls.jsonl>`. Gemini CLI offers it to the model as
`mcp_exo_notify_parent`. A line `{"event": "initialized"}` is appended when the client
finishes the handshake, so tests can tell that the server is connected.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

SERVER_NAME = "exo"
TOOL_NAME = "notify_parent"
PROTOCOL_VERSION = "2025-06-18"

TOOLS: list[dict[str, Any]] = [
    {
        "name": TOOL_NAME,
        "description": "Tell the parent agent about this worker's status.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["success", "failure", "progress"],
                    "description": "Outcome to report.",
                },
                "message": {"type": "string", "description": "Free-text message."},
            },
            "required": ["status", "message"],
        },
    }
]


def _append(path: str, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def handle(msg: dict[str, Any], log_path: str) -> dict[str, Any] | None:
    method = msg.get("method")
    msg_id = msg.get("id")
    params = msg.get("params") or {}
    if msg_id is None:  # a notification
        if method == "notifications/initialized":
            _append(log_path, {"event": "initialized", "time": time.time()})
        return None
    if method == "initialize":
        version = params.get("protocolVersion") or PROTOCOL_VERSION
        return _result(
            msg_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "version": "0.0.1"},
            },
        )
    if method == "ping":
        return _result(msg_id, {})
    if method == "tools/list":
        return _result(msg_id, {"tools": TOOLS})
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name != TOOL_NAME:
            return _error(msg_id, -32602, f"unknown tool {name!r}")
        _append(log_path, {"event": "call", "tool": name, "args": args, "time": time.time()})
        text = f"notified parent: {args.get('status')}"
        return _result(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    return _error(msg_id, -32601, f"method not found: {method}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: exo_mcp_stub.py <calls.jsonl>", file=sys.stderr)
        return 2
    log_path = argv[1]
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            out: dict[str, Any] | None = _error(None, -32700, "parse error")
        else:
            out = handle(msg, log_path) if isinstance(msg, dict) else None
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
