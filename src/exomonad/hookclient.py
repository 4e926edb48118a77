"""``exomonad hook EVENT --runtime NAME``: the thin hook client.

Reads the hook's JSON on stdin, posts it to the project's server over its Unix socket,
prints the answer (JSON on stdout), writes its message to stderr and exits with the code
the server chose. Standard library only: it starts with every tool call of every agent.

Fail closed. Claude Code and Gemini CLI both let a tool call through when its hook
crashes, so a tool-gating hook (``pre-tool-use``, Gemini ``before-tool``: see
:mod:`exomonad.runtimes`) never does:

* input above the bounds (:data:`MAX_BODY` bytes, :data:`MAX_DEPTH` levels of nesting)
  is not parsed: the call is escalated (``ask``) to whoever the runtime asks;
* input that is not a JSON object, a server that fails, answers badly or not within the
  time-out, and any error of this client itself deny the call, with the reason;
* a call of an agent ExoMonad started (``$EXOMONAD_TOKEN`` set) is denied when no
  server runs: its server is gone (killed by the agent itself, say), not absent;
* only when no server runs for the project (no pid file, its process gone, the socket
  refusing connections) and the caller holds no token (the lead's own Claude Code, a
  person's session in an ``init``-ed checkout) does the client fail open (empty answer,
  exit 0), saying so on stderr, except that a call the built-in policy would deny is
  denied.

Other events never block the agent's session: on any failure they exit 0 with ``{}`` on
stdout and a note on stderr.

A worker's hook, and the lead's under ``exomonad up``, usually never reaches this
client: ``exomonad init`` puts the shell front ``exomonad-hook``
(``scripts/exomonad-hook``) before it, which answers with ``sh`` and netcat-openbsd and
runs this client for everyone else, stdin untouched. When the front has read stdin and
then fails, it runs this client with ``--refuse too-large`` (escalate), ``--refuse
unanswered`` or ``--refuse misanswered`` (deny), which answers without reading stdin or
asking the server, in the runtime's shape (docs/architecture.md, "Hooks: the shell
front").

Which server judges: the project's, never one the agent chose
(:func:`exomonad.state.agent_state_dir`). The agent moves the hook input's ``cwd``
(Claude Code's follows a ``cd`` below the project, and so does its hook's own working
directory; Codex's is a tool call's ``workdir``, any path) and can make a
``.exomonad/`` of its own wherever its code writes, with a permissive ``exomonad serve``
in it. So the input's ``cwd`` is never used to find the project:

* ``$EXOMONAD_DIR`` is used when set: ExoMonad gives it, with ``$EXOMONAD_TOKEN``, to
  every agent it starts, and Claude Code, Gemini CLI and Codex CLI pass both to their
  hooks (observed: 2.1.330, 0.61, 0.169);
* a worker's hook (``$EXOMONAD_TOKEN``) without ``$EXOMONAD_DIR`` is denied (another
  event: a note, no decision), never failed open;
* a tokenless hook (the lead's own Claude Code started by hand, a Claude teammate, which
  gets ``$EXOMONAD_DIR`` only from the tmux session ``exomonad up`` created) walks up
  from where the runtime started its session (``$CLAUDE_PROJECT_DIR``, which Claude Code
  and Gemini CLI set and a ``cd`` does not move; else the hook's own working directory),
  and a ``.exomonad/`` inside a linked git worktree gives way to its project's.

The bounds: a Claude Code ``Write`` carries the whole file in ``tool_input.content``, so
a legitimately large payload is a few MiB; 8 MiB keeps every ordinary Write judged by the
policy. Real payloads nest 3 to 6 levels (an ``Edit``'s ``edits`` list of objects, an MCP
tool's arguments); 64 leaves room for any MCP schema and stays far below what recursive
parsers survive.
"""

from __future__ import annotations

import os
import sys

from exomonad import runtimes, uds
from exomonad.errors import ExomonadError, ServerNotRunningError, StateDirError
from exomonad.state import agent_state_dir
from exomonad.util.fastjson import dumps, loads

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "GATING_EVENTS",
    "MAX_BODY",
    "MAX_DEPTH",
    "NO_SERVER_FOR_AGENT",
    "TIMEOUT",
    "decision_output",
    "main",
    "stdout_line",
    "too_deep",
]

_USAGE = (
    f"usage: exomonad hook EVENT [--runtime {'|'.join(runtimes.RUNTIMES)}] [--timeout SECONDS]"
    " [--refuse too-large|unanswered|misanswered]"
)
#: Seconds the client waits for the server in all (the server may be waiting for an
#: approval, ``[policy] approval_timeout``, 50 s by default); ``exomonad init`` passes
#: ``--timeout`` to match the project's approval time-out, below the runtime's own.
TIMEOUT = 70.0
#: Largest hook input judged (bytes); above it a tool-gating call is escalated unparsed.
MAX_BODY = 8 << 20
#: Deepest nesting of arrays and objects judged (the top-level object is level 1).
MAX_DEPTH = 64
#: Hook events that gate a tool call (every runtime's names for them).
GATING_EVENTS = runtimes.gating_events()
#: Why an agent's tool call (or push) is refused when its project's server is gone.
NO_SERVER_FOR_AGENT = (
    "no ExoMonad server is running for this project, and an agent ExoMonad started is "
    "never judged without it (was the server stopped? `exomonad up` starts it)"
)

#: A JSON string; its closing quote is optional, so a match never fails and the scan
#: stays linear on malformed input. Compiled on first use (``re`` caches it): most hook
#: processes never need it.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"?'
_NOT_BRACKET = bytes(range(256)).translate(None, b"[]{}")
_OPENERS = frozenset(b"[{")


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """True if ``body`` nests arrays/objects deeper than ``limit`` (brackets inside
    strings do not count), found without parsing it; linear in ``len(body)``.

    >>> too_deep(b'{"a": [[1]], "s": "[[[["}', 3), too_deep(b'[[[[]]]]', 3)
    (False, True)
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # the common case: a couple of bytes.count calls
    import re  # ~7 ms of imports (enum): only for input that has this many brackets

    depth = 0
    for byte in re.sub(_STRING, b"", body, flags=re.DOTALL).translate(None, _NOT_BRACKET):
        if byte in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def decision_output(runtime: str, kind: str, reason: str, event: str = "") -> dict[str, Any]:
    """A tool-gating hook's answer (``allow``/``deny``/``ask``) in the runtime's shape
    for ``event`` (:meth:`exomonad.runtimes.Runtime.answer`); Claude Code's for a runtime
    we do not know, so an answer is never missing."""
    return runtimes.RUNTIMES.get(runtime, runtimes.CLAUDE).answer(event, kind, reason)


def stdout_line(runtime: str, output: dict[str, Any]) -> str:
    """The line a hook prints for ``output`` (JSON, no newline): empty for an empty
    answer of a runtime that wants nothing then (Codex: ``{}`` is not "no output")."""
    known = runtimes.RUNTIMES.get(runtime)
    return dumps(output) if output or known is None or not known.silent_empty else ""


def _print(runtime: str, output: dict[str, Any]) -> None:
    """Write a hook's answer (:func:`stdout_line`), if there is one."""
    line = stdout_line(runtime, output)
    if line:
        sys.stdout.write(line + "\n")


def _token(state: str, runtime: str = "claude") -> str | None:
    """``$EXOMONAD_TOKEN``; else, for a runtime that can lead (Claude Code) only, the
    root lead's token, if this hook runs for the lead's own Claude Code (not for a Claude
    teammate, not below any other agent: see :func:`exomonad.uds.caller_token`).

    A worker runtime's hook without a token gets no fallback (the least role): a worker
    whose environment lost its token must never be judged as the lead.
    """
    return uds.caller_token(state, may_lead=runtimes.get(runtime).can_lead)


def _offline_deny(runtime: str, payload: dict[str, Any], state: str | None,
                  event: str = "") -> bool:  # fmt: skip
    """No server: deny what the built-in policy would deny (else fail open). Imports the
    policy package, so only this rare path pays for it."""
    try:
        from exomonad.policy import Deny, PolicyEngine, ToolRequest
        from exomonad.policy.hook_output import hook_output

        role, name = _offline_role(state, runtime)
        req = ToolRequest.from_hook(runtime, payload, role=role, agent=name)
        engine = PolicyEngine(state_dir=state) if state is not None else PolicyEngine()
        decision = engine.decide(req)
    except Exception as exc:  # the fallback must never break the agent's tool call
        sys.stderr.write(f"exomonad: offline policy check failed: {exc}\n")
        return False
    if not isinstance(decision, Deny):
        return False
    _print(runtime, hook_output(runtime, decision, event))
    sys.stderr.write("exomonad: no server running; denied by the built-in policy\n")
    return True


def _offline_role(state: str | None, runtime: str) -> tuple[str, str]:
    """Role and name behind our token, read from the server's token file; else worker."""
    if state is not None:
        token = _token(state, runtime)
        try:
            with open(os.path.join(state, "tokens.json"), "rb") as fh:
                found = loads(fh.read()).get(token or "")
        except (OSError, ValueError, AttributeError):
            found = None
        if isinstance(found, dict):
            return str(found.get("role", "worker")), str(found.get("name", "unknown"))
    return "worker", "unknown"


def _fail_open(event: str, runtime: str, why: str) -> int:
    _print(runtime, {})
    sys.stderr.write(f"exomonad: {why}; hook {event} answered with no decision (fail-open)\n")
    return 0


def _gates(event: str, runtime: str) -> bool:
    """Whether ``event`` gates a tool call (for a runtime we do not know: any name that
    gates one for some runtime)."""
    known = runtimes.RUNTIMES.get(runtime)
    return known.gates(event) if known is not None else event in GATING_EVENTS


def _refuse(event: str, runtime: str, kind: str, why: str) -> int:
    """A gating hook is denied (``kind="deny"``) or escalated (``"ask"``); any other
    event goes ahead with a note: it must never block the agent's session."""
    if _gates(event, runtime):
        reason = f"ExoMonad: {why}"
        kind = runtimes.RUNTIMES.get(runtime, runtimes.CLAUDE).unattended(kind)
        _print(runtime, decision_output(runtime, kind, reason, event))
        verdict = "denied" if kind == "deny" else "escalated"
        sys.stderr.write(f"exomonad: {why}; tool call {verdict}\n")
    else:
        _print(runtime, {})
        sys.stderr.write(f"exomonad: {why}; hook {event} answered with no decision\n")
    return 0


def _read_stdin() -> bytes | None:
    """The hook input, or None if it is larger than :data:`MAX_BODY` (the rest is read
    and dropped, so the runtime never writes into a closed pipe)."""
    stream = sys.stdin.buffer
    body = stream.read(MAX_BODY + 1)
    if len(body) <= MAX_BODY:
        return body
    while stream.read(1 << 20):
        pass
    return None


def _run(event: str, runtime: str, timeout: float) -> int:
    body = _read_stdin()
    if body is None:
        return _refuse(event, runtime, *_refusal("too-large"))
    if too_deep(body):
        return _refuse(event, runtime, "ask", f"hook input nested deeper than {MAX_DEPTH}")
    try:
        payload = loads(body or b"{}")
    except ValueError as exc:
        return _refuse(event, runtime, "deny", f"hook input is not JSON ({exc})")
    if not isinstance(payload, dict):
        return _refuse(event, runtime, "deny", "hook input is not a JSON object")
    try:
        state = agent_state_dir()  # never from the input's cwd: the agent moves that
    except StateDirError as exc:
        return _refuse(event, runtime, "deny", str(exc))
    server = uds.live_server(state) if state is not None else None
    if state is not None and server is not None:
        try:
            return _ask_server(event, runtime, body, state, server[1], timeout)
        except ServerNotRunningError:
            pass
    if os.environ.get("EXOMONAD_TOKEN"):  # an agent ExoMonad started: never judged offline
        return _refuse(event, runtime, "deny", NO_SERVER_FOR_AGENT)
    if _gates(event, runtime) and _offline_deny(runtime, payload, state, event):
        return 0
    return _fail_open(event, runtime, "no ExoMonad server is running for this project")


def _ask_server(event: str, runtime: str, body: bytes, state: str, sock: str,
                timeout: float) -> int:  # fmt: skip
    headers = {"Content-Type": "application/json"}
    token = _token(state, runtime)
    if token:
        headers[uds.TOKEN_HEADER] = token
    if os.environ.get("TMUX_PANE"):
        headers["x-exomonad-pane"] = os.environ["TMUX_PANE"]
    try:
        reply = uds.request(sock, "POST", f"/hook/{event}?runtime={runtime}", body, headers,
                            timeout=timeout)  # fmt: skip
    except ServerNotRunningError:
        raise
    except (OSError, ExomonadError) as exc:
        return _refuse(event, runtime, "deny", f"server on {sock} did not answer ({exc})")
    try:
        answer = reply.json()
    except ValueError:
        answer = None
    if reply.status != 200 or not isinstance(answer, dict):
        error = answer.get("error") if isinstance(answer, dict) else None
        return _refuse(event, runtime, "deny",
                       f"server failed on the hook ({error or reply.status})")  # fmt: skip
    output, code = answer.get("output") or {}, answer.get("exit_code", 0)
    if not isinstance(output, dict) or type(code) is not int:
        return _refuse(event, runtime, "deny", "server answered the hook in a wrong shape")
    _print(runtime, output)
    if answer.get("stderr"):
        sys.stderr.write(str(answer["stderr"]) + "\n")
    return code


def _refusal(reason: str) -> tuple[str, str]:
    """``--refuse REASON``: what the shell front (``exomonad-hook``) could not finish, as
    a refusal's kind and why; it has read stdin by then, so the client decides alone."""
    if reason == "too-large":
        return "ask", f"hook input larger than {MAX_BODY} bytes"
    if reason == "unanswered":
        return "deny", (
            "the server did not answer the hook's shell front (exomonad-hook): it is not "
            "running (`exomonad up`), or the call waited past the hook's --timeout"
        )
    if reason == "misanswered":
        return "deny", (
            "the server's answer to the hook's shell front (exomonad-hook) is not one it "
            "reads (a server older than this install? restart it)"
        )
    raise ValueError(reason)


def _parse_args(argv: list[str]) -> tuple[str, str, float, tuple[str, str] | None]:
    event, runtime, timeout, refuse = argv[0], "claude", TIMEOUT, None
    rest = argv[1:]
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--runtime" and value in runtimes.RUNTIMES:
            runtime = value
        elif flag == "--timeout" and float(value) > 0:
            timeout = float(value)
        elif flag == "--refuse":
            refuse = _refusal(value)
        else:
            raise ValueError(flag)
    return event, runtime, timeout, refuse


def main(argv: list[str]) -> int:
    """Run the hook client; returns the process exit code. Never raises: an error of its
    own denies a tool-gating call (see the module doc)."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE + "\n")
        return 0 if argv else 2
    try:
        event, runtime, timeout, refuse = _parse_args(argv)
    except (IndexError, ValueError):
        sys.stderr.write(_USAGE + "\n")
        return 2
    try:
        if refuse is not None:
            return _refuse(event, runtime, *refuse)
        return _run(event, runtime, timeout)
    except Exception as exc:  # the catch-all that keeps a gating hook closed
        try:
            return _refuse(event, runtime, "deny", f"hook client error ({type(exc).__name__})")
        except Exception:  # cannot even answer: a blocking exit code
            return 2
