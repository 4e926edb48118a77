"""``exomonad hook EVENT --runtime claude|gemini``: the thin hook client.

Reads the hook's JSON on stdin, posts it to the project's server over its Unix socket,
prints the answer (JSON on stdout), writes its message to stderr and exits with the code
the server chose. Standard library only: it starts with every tool call of every agent.

With no server running it fails open (empty answer, exit 0) and says so on stderr, except
that a PreToolUse / BeforeTool call the built-in policy would deny is denied.
"""

from __future__ import annotations

import json
import os
import socket
import sys

__all__ = ["main"]

_USAGE = "usage: exomonad hook EVENT [--runtime claude|gemini] [--timeout SECONDS]"
TIMEOUT = 30.0


def _post(sock_path: str, target: str, body: bytes, headers: dict[str, str],
          timeout: float) -> tuple[int, bytes]:  # fmt: skip
    """One HTTP/1.1 POST over the Unix socket, by hand (``http.client`` alone costs
    ~35 ms of imports, and this runs on every tool call)."""
    head = [f"POST {target} HTTP/1.1", "Host: localhost", "Connection: close",
            f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(sock_path)
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    lines = header.split(b"\r\n")
    status = int(lines[0].split()[1])
    if any(line.lower() == b"transfer-encoding: chunked" for line in lines[1:]):
        payload = _dechunk(payload)
    return status, payload


def _dechunk(data: bytes) -> bytes:
    out = []
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out.append(rest[:size])
        data = rest[size + 2 :]
    return b"".join(out)


def _state_dir(cwd: str | None) -> str | None:
    env = os.environ.get("EXOMONAD_DIR")
    if env:
        return env
    here = os.path.realpath(cwd or os.getcwd())
    while True:
        if os.path.isdir(os.path.join(here, ".exomonad")):
            return os.path.join(here, ".exomonad")
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _server_socket(state: str) -> str | None:
    try:
        info = json.loads(_read(os.path.join(state, "server.pid")))
        os.kill(int(info["pid"]), 0)
        return str(info["socket"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _token(state: str, runtime: str = "claude") -> str | None:
    """``$EXOMONAD_TOKEN``; else, for Claude Code hooks only, the root lead's token.

    A Gemini hook without a token gets no fallback (the least role): a worker whose
    environment lost its token must never be judged as the lead.
    """
    token = os.environ.get("EXOMONAD_TOKEN")
    if token:
        return token
    if runtime != "claude":
        return None
    try:
        return _read(os.path.join(state, "lead.token")).strip() or None
    except OSError:
        return None


_POLICY_EVENTS = ("pre-tool-use", "before-tool")


def _offline_deny(event: str, runtime: str, body: bytes, state: str | None) -> bool:
    """No server: deny what the built-in policy would deny (else fail open). Imports the
    policy package, so only this rare path pays for it."""
    if event not in _POLICY_EVENTS:
        return False
    try:
        from exomonad.policy import Deny, PolicyEngine, ToolRequest
        from exomonad.policy.hook_output import hook_output

        payload = json.loads(body or b"{}")
        role, name = _offline_role(state, runtime)
        req = ToolRequest.from_hook(
            "gemini" if runtime == "gemini" else "claude", payload, role=role, agent=name
        )
        engine = PolicyEngine(state_dir=state) if state is not None else PolicyEngine()
        decision = engine.decide(req)
    except Exception as exc:  # the fallback must never break the agent's tool call
        sys.stderr.write(f"exomonad: offline policy check failed: {exc}\n")
        return False
    if not isinstance(decision, Deny):
        return False
    sys.stdout.write(json.dumps(hook_output(runtime, decision)) + "\n")
    sys.stderr.write("exomonad: no server running; denied by the built-in policy\n")
    return True


def _offline_role(state: str | None, runtime: str) -> tuple[str, str]:
    """Role and name behind our token, read from the server's token file; else worker."""
    if state is not None:
        token = _token(state, runtime)
        try:
            found = json.loads(_read(os.path.join(state, "tokens.json"))).get(token or "")
        except (OSError, ValueError):
            found = None
        if isinstance(found, dict):
            return str(found.get("role", "worker")), str(found.get("name", "unknown"))
    return "worker", "unknown"


def _fail_open(event: str, why: str) -> int:
    sys.stdout.write("{}\n")
    sys.stderr.write(f"exomonad: {why}; hook {event} answered with no decision (fail-open)\n")
    return 0


def main(argv: list[str]) -> int:
    """Run the hook client; returns the process exit code."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE + "\n")
        return 0 if argv else 2
    event, runtime, timeout = argv[0], "claude", TIMEOUT
    rest = argv[1:]
    try:
        while rest:
            flag, value, rest = rest[0], rest[1], rest[2:]
            if flag == "--runtime" and value in ("claude", "gemini"):
                runtime = value
            elif flag == "--timeout":
                timeout = float(value)
            else:
                raise ValueError(flag)
    except (IndexError, ValueError):
        sys.stderr.write(_USAGE + "\n")
        return 2
    body = sys.stdin.buffer.read()
    try:
        cwd = json.loads(body or b"{}").get("cwd")
    except (ValueError, AttributeError):
        cwd = None
    state = _state_dir(cwd if isinstance(cwd, str) else None)
    sock = _server_socket(state) if state is not None else None
    if state is None or sock is None:
        if _offline_deny(event, runtime, body, state):
            return 0
        return _fail_open(event, "no ExoMonad server is running for this project")
    headers = {"Content-Type": "application/json"}
    token = _token(state, runtime)
    if token:
        headers["x-exomonad-token"] = token
    if os.environ.get("TMUX_PANE"):
        headers["x-exomonad-pane"] = os.environ["TMUX_PANE"]
    try:
        status, payload = _post(sock, f"/hook/{event}?runtime={runtime}", body, headers, timeout)
        answer = json.loads(payload)
    except (OSError, ValueError, IndexError) as exc:
        return _fail_open(event, f"server on {sock} did not answer ({exc})")
    if status != 200:
        return _fail_open(event, f"server refused the hook: {answer.get('error', status)}")
    sys.stdout.write(json.dumps(answer.get("output") or {}) + "\n")
    if answer.get("stderr"):
        sys.stderr.write(str(answer["stderr"]) + "\n")
    return int(answer.get("exit_code", 0))
