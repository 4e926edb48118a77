"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code.

`ScriptedClaude` is an HTTP server on 127.0.0.1 (port chosen by the OS) that speaks just
enough of the Anthropic API for Claude Code 2.1.112 (`cli.js`) and 2.1.330 (native
binary). Point the client at it with `ANTHROPIC_BASE_URL=<server.url>`.

* `POST /v1/messages`: answered as Anthropic's SSE stream (`message_start`,
  `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
  `content_block_stop`, `message_delta` with `stop_reason` `end_turn` or `tool_use`,
  `message_stop`) when the body says `"stream": true`, else as one JSON message.
* `POST /v1/messages/count_tokens`: `{"input_tokens": <rough count>}`.
* anything else: recorded, then 404 with an Anthropic-style error body.

Claude Code sends two kinds of `/v1/messages` request:

* **agent turns**: the main loop (and subagents). They carry the tool list (2.1.112:
  `claude-sonnet-4-6`, `max_tokens` 32000; 2.1.330: `claude-opus-5-5`, 128000). They
  consume the reply script, one scripted reply per request, and fall back to
  `default_text` when the script is empty.
* **side requests** (`is_side_request`): `tools: []`. The only one seen with both pinned
  versions is session-title generation (on the haiku model, `max_tokens` as large as the
  agent's, `output_config.format` = a JSON schema `{title: string}`), and only when
  `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` is unset. They never consume the script;
  `side_reply` answers them (by default JSON built from the requested schema).

Besides, the clients probe the server with `HEAD /` (2.1.112) or `HEAD /api/hello`
(2.1.330): answered 200. `count_tokens` was never called in these flows, but is served.

A `responder(request) -> reply | None` is consulted first for every `/v1/messages`
request; a non-None reply wins over the script (use it to answer by content, or to block
until the test has looked at the disk: the responder runs in the handler thread, so
Claude Code simply waits for the HTTP response).

Every request is recorded (`server.requests`), parsed JSON included, and waiters block on
a `threading.Condition` (`wait_for_request`) instead of sleeping.
"""

from __future__ import annotations

import gzip
import json
import re
import secrets
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

JSON = dict[str, Any]
Block = dict[str, Any]

DEFAULT_TEXT = "Done. (scripted default reply)"
SIDE_TEXT = "Scripted side reply."

_TEAMMATE_RE = re.compile(
    r"<teammate-message\s+teammate_id=\"(?P<from>[^\"]*)\"(?P<attrs>[^>]*)>"
    r"(?P<text>.*?)</teammate-message>",
    re.DOTALL,
)
_ATTR_RE = re.compile(r"(\w+)=\"([^\"]*)\"")


@dataclass(frozen=True)
class Reply:
    """One assistant message: content blocks, plus how to send it.

    `stop_reason` defaults to `tool_use` when a block is a tool_use, else `end_turn`.
    `delay` sleeps before answering (the request is already recorded).
    """

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    delay: float = 0.0
    status: int = 200  # a non-200 sends an Anthropic error body instead
    error_type: str = "api_error"

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(b.get("type") == "tool_use" for b in self.blocks) else "end_turn"


ReplySpec = str | Block | Sequence[Block] | Reply


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: Mapping[str, Any] | None = None, *, id: str = "") -> Block:
    return {
        "type": "tool_use",
        "id": id or f"toolu_{secrets.token_hex(12)}",
        "name": name,
        "input": dict(input or {}),
    }


def text_reply(text: str) -> Reply:
    return Reply((text_block(text),))


def tool_reply(name: str, input: Mapping[str, Any] | None = None, *, text: str = "") -> Reply:
    """A tool call, optionally preceded by a text block (as a real model often does)."""
    blocks = (text_block(text),) if text else ()
    return Reply((*blocks, tool_use_block(name, input)))


def error_reply(
    status: int = 529, message: str = "Overloaded", kind: str = "overloaded_error"
) -> Reply:
    return Reply((text_block(message),), status=status, error_type=kind)


def normalize_reply(reply: ReplySpec) -> Reply:
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, str):
        return text_reply(reply)
    if isinstance(reply, Mapping):
        return Reply((_fill_block(reply),))
    blocks = tuple(_fill_block(b) for b in reply)
    if not blocks:
        raise ValueError("a scripted reply needs at least one block")
    return Reply(blocks)


def _fill_block(block: Mapping[str, Any]) -> Block:
    out = dict(block)
    if out.get("type") == "tool_use":
        out.setdefault("id", f"toolu_{secrets.token_hex(12)}")
        out.setdefault("input", {})
    return out


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class TeammateMessage:
    """One `<teammate-message teammate_id=".." ...>text</teammate-message>` in a request."""

    teammate_id: str
    text: str
    attrs: dict[str, str]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as Claude Code sent it."""

    index: int
    method: str
    path: str  # with the query string, e.g. "/v1/messages?beta=true"
    headers: dict[str, str]
    body: JSON  # parsed JSON body ({} when empty or not JSON)
    received_at: float  # time.monotonic()

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def is_count_tokens(self) -> bool:
        return self.route == "/v1/messages/count_tokens"

    @property
    def streaming(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def model(self) -> str | None:
        m = self.body.get("model")
        return m if isinstance(m, str) else None

    @property
    def max_tokens(self) -> int:
        m = self.body.get("max_tokens")
        return m if isinstance(m, int) else 0

    @property
    def tools(self) -> list[JSON]:
        t = self.body.get("tools")
        return [x for x in t if isinstance(x, dict)] if isinstance(t, list) else []

    @property
    def has_tools(self) -> bool:
        return bool(self.tools)

    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tools if isinstance(t.get("name"), str)]

    def tool(self, name: str) -> JSON | None:
        """The offered tool definition (`name`, `description`, `input_schema`)."""
        return next((t for t in self.tools if t.get("name") == name), None)

    @property
    def system_text(self) -> str:
        s = self.body.get("system")
        if isinstance(s, str):
            return s
        if isinstance(s, list):
            return "\n".join(
                b["text"] for b in s if isinstance(b, dict) and isinstance(b.get("text"), str)
            )
        return ""

    @property
    def is_side_request(self) -> bool:
        """Not a main-loop turn: a `/v1/messages` call that offers no tools (`tools: []`
        or none). Every agent turn of both pinned versions offers tools; the title
        request does not. `max_tokens` does not tell them apart (both are large).
        """
        return self.is_messages and not self.has_tools

    @property
    def is_agent_turn(self) -> bool:
        return self.is_messages and self.has_tools

    @property
    def messages(self) -> list[JSON]:
        m = self.body.get("messages")
        return [x for x in m if isinstance(x, dict)] if isinstance(m, list) else []

    def blocks(self, role: str | None = None) -> list[Block]:
        """Content blocks of all messages (of `role`), a string content as a text block."""
        out: list[Block] = []
        for msg in self.messages:
            if role is not None and msg.get("role") != role:
                continue
            out.extend(_content_blocks(msg.get("content")))
        return out

    def user_texts(self) -> list[str]:
        """Every text of every user message, in order; tool_result texts included."""
        out: list[str] = []
        for block in self.blocks("user"):
            out.extend(_texts_of(block))
        return out

    def last_user_texts(self) -> list[str]:
        """Texts of the newest user message (tool_result contents included)."""
        for msg in reversed(self.messages):
            if msg.get("role") == "user":
                out: list[str] = []
                for block in _content_blocks(msg.get("content")):
                    out.extend(_texts_of(block))
                return out
        return []

    def mentions(self, needle: str) -> bool:
        return any(needle in t for t in self.user_texts())

    def tool_uses(self) -> list[Block]:
        """`tool_use` blocks of the assistant turns in the history."""
        return [b for b in self.blocks("assistant") if b.get("type") == "tool_use"]

    def tool_results(self, tool_use_id: str | None = None) -> list[Block]:
        """`tool_result` blocks of the user turns (of one tool_use id if given)."""
        return [
            b
            for b in self.blocks("user")
            if b.get("type") == "tool_result"
            and (tool_use_id is None or b.get("tool_use_id") == tool_use_id)
        ]

    def tool_result_text(self, tool_use_id: str) -> str | None:
        """The text of the result of `tool_use_id`, or None if not in this request."""
        results = self.tool_results(tool_use_id)
        if not results:
            return None
        return "\n".join(_texts_of(results[-1]))

    def newest_tool_results(self) -> list[tuple[str, str]]:
        """(tool name, result text) for each tool_result in the newest user message,
        the name looked up from the tool_use blocks in the history ("" if not found)."""
        names = {b.get("id"): str(b.get("name", "")) for b in self.tool_uses()}
        for msg in reversed(self.messages):
            if msg.get("role") != "user":
                continue
            return [
                (names.get(b.get("tool_use_id"), ""), "\n".join(_texts_of(b)))
                for b in _content_blocks(msg.get("content"))
                if b.get("type") == "tool_result"
            ]
        return []

    def teammate_messages(self) -> list[TeammateMessage]:
        """Every `<teammate-message>` in the user texts, oldest first."""
        out: list[TeammateMessage] = []
        for text in self.user_texts():
            out.extend(find_teammate_messages(text))
        return out


def find_teammate_messages(text: str) -> list[TeammateMessage]:
    return [
        TeammateMessage(
            teammate_id=m.group("from"),
            text=m.group("text").strip(),
            attrs=dict(_ATTR_RE.findall(m.group("attrs"))),
        )
        for m in _TEAMMATE_RE.finditer(text)
    ]


def _content_blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [text_block(content)]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _texts_of(block: Block) -> list[str]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return [block["text"]]
    if kind == "tool_result":
        out: list[str] = []
        for inner in _content_blocks(block.get("content")):
            out.extend(_texts_of(inner))
        return out
    return []


# ----------------------------------------------------------------------------- replies


def value_for_schema(schema: Any, depth: int = 0) -> Any:
    """A minimal value that satisfies a (lower-case, JSON Schema) `schema`."""
    if not isinstance(schema, dict) or depth > 8:
        return "scripted"
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return value_for_schema(options[0], depth + 1)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        return {
            k: ("Scripted session" if k == "title" else value_for_schema(v, depth + 1))
            for k, v in props.items()
        }
    if kind == "array":
        return []
    if kind == "integer":
        return 1
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "scripted"


def default_side_reply(req: RecordedRequest) -> Reply:
    """A short answer for a tool-less request.

    Both pinned versions ask for the session title with `tools: []` and
    `output_config.format = {"type": "json_schema", "schema": {title: string}}` (2.1.112
    on the haiku model, 2.1.330 on its haiku); a value built from the schema answers any
    such request. Older JSON asks without a schema get `{"isNewTopic", "title"}`;
    everything else a short text.
    """
    output_config = req.body.get("output_config")
    fmt = output_config.get("format") if isinstance(output_config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return text_reply(json.dumps(value_for_schema(fmt.get("schema"))))
    system = req.system_text.lower()
    if "json" in system and ("title" in system or "topic" in system):
        return text_reply(json.dumps({"isNewTopic": False, "title": "Scripted session"}))
    return text_reply(SIDE_TEXT)


def _rough_tokens(body: JSON) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _message_json(reply: Reply, model: str, input_tokens: int) -> JSON:
    return {
        "id": f"msg_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(b) for b in reply.blocks],
        "stop_reason": reply.effective_stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _event(kind: str, **data: Any) -> tuple[str, JSON]:
    return kind, {"type": kind, **data}


def _block_events(i: int, block: Block) -> Iterator[tuple[str, JSON]]:
    kind = block.get("type")
    if kind == "tool_use":
        head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        yield _event("content_block_start", index=i, content_block=head)
        args = json.dumps(block.get("input") or {})
        cut = len(args) // 2  # two deltas: exercises the client's partial-JSON assembly
        for part in (args[:cut], args[cut:]):
            delta = {"type": "input_json_delta", "partial_json": part}
            yield _event("content_block_delta", index=i, delta=delta)
    elif kind == "thinking":
        head = {"type": "thinking", "thinking": "", "signature": ""}
        yield _event("content_block_start", index=i, content_block=head)
        thought = {"type": "thinking_delta", "thinking": str(block.get("thinking", ""))}
        yield _event("content_block_delta", index=i, delta=thought)
        sig = {"type": "signature_delta", "signature": str(block.get("signature", "x"))}
        yield _event("content_block_delta", index=i, delta=sig)
    else:
        yield _event("content_block_start", index=i, content_block={"type": "text", "text": ""})
        delta = {"type": "text_delta", "text": str(block.get("text", ""))}
        yield _event("content_block_delta", index=i, delta=delta)
    yield _event("content_block_stop", index=i)


def sse_events(reply: Reply, model: str, input_tokens: int) -> Iterator[tuple[str, JSON]]:
    """(event name, data) pairs of the SSE stream for `reply`."""
    msg = _message_json(reply, model, input_tokens)
    start = dict(msg, content=[], stop_reason=None)
    start["usage"] = dict(msg["usage"], output_tokens=1)
    yield _event("message_start", message=start)
    for i, block in enumerate(reply.blocks):
        yield from _block_events(i, block)
    yield _event(
        "message_delta",
        delta={"stop_reason": msg["stop_reason"], "stop_sequence": None},
        usage={"output_tokens": msg["usage"]["output_tokens"]},
    )
    yield _event("message_stop")


# ----------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 120  # idle keep-alive connections close after this

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        enc = (self.headers.get("Content-Encoding") or "").lower()
        if enc == "gzip":
            raw = gzip.decompress(raw)
        elif enc == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_{secrets.token_hex(8)}")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, "application/json", json.dumps(obj).encode())

    def _handle(self) -> None:
        raw = self._read_body()
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"__unparsed__": raw.decode("utf-8", "replace")}
        body = parsed if isinstance(parsed, dict) else {"__json__": parsed}
        owner = self.server.owner
        req = owner._record(self.command, self.path, dict(self.headers.items()), body)
        if req.is_count_tokens:
            self._send_json(200, {"input_tokens": _rough_tokens(body)})
            return
        if self.command == "HEAD":  # connectivity probes (`HEAD /`, `HEAD /api/hello`)
            self._send(200, "text/plain", b"")
            return
        if not req.is_messages:
            self._send_json(
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}},
            )
            return
        reply = owner._next_reply(req)
        if reply.delay > 0:
            time.sleep(reply.delay)
        if reply.status != 200:
            message = " ".join(str(b.get("text", "")) for b in reply.blocks) or "scripted error"
            self._send_json(
                reply.status,
                {"type": "error", "error": {"type": reply.error_type, "message": message}},
            )
            return
        model = req.model or "claude-scripted"
        tokens = _rough_tokens(body)
        if req.streaming:
            chunks = [
                f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                for name, data in sse_events(reply, model, tokens)
            ]
            self._send(200, "text/event-stream; charset=utf-8", b"".join(chunks))
        else:
            self._send_json(200, _message_json(reply, model, tokens))

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: ScriptedClaude) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops a keep-alive connection (the CLI exiting) is normal here.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


Responder = Callable[[RecordedRequest], ReplySpec | None]


@dataclass
class _State:
    script: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    served: list[tuple[int, Reply, str]] = field(default_factory=list)  # (index, reply, source)


class ScriptedClaude:
    """A scripted Anthropic API on 127.0.0.1; use as a context manager.

    >>> with ScriptedClaude([tool_reply("Bash", {"command": "true"}), "done"]) as model:
    ...     env = {"ANTHROPIC_BASE_URL": model.url}
    """

    def __init__(
        self,
        script: Iterable[ReplySpec] = (),
        *,
        default_text: str = DEFAULT_TEXT,
        responder: Responder | None = None,
        side_reply: Callable[[RecordedRequest], ReplySpec] | None = None,
    ) -> None:
        self._cond = threading.Condition()
        self._state = _State(script=deque(normalize_reply(r) for r in script))
        self.default_text = default_text
        self.responder = responder
        self.side_reply = side_reply
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> ScriptedClaude:
        if self._server is not None:
            return self
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="scripted-claude",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedClaude:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("ScriptedClaude is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script ------------------------------------------------------------------
    def add_reply(self, reply: ReplySpec) -> None:
        """Queue a reply for the next agent turn (str, block, blocks or `Reply`)."""
        with self._cond:
            self._state.script.append(normalize_reply(reply))

    def add_text(self, text: str) -> None:
        self.add_reply(text_reply(text))

    def add_tool_use(
        self, name: str, input: Mapping[str, Any] | None = None, *, text: str = ""
    ) -> None:
        self.add_reply(tool_reply(name, input, text=text))

    @property
    def pending_replies(self) -> int:
        with self._cond:
            return len(self._state.script)

    # -- log ---------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._state.requests)

    def agent_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_agent_turn]

    def side_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_side_request]

    def served(self) -> list[tuple[int, Reply, str]]:
        """(request index, reply, source) for every answered `/v1/messages` request;
        source is `responder`, `script`, `default` or `side`."""
        with self._cond:
            return list(self._state.served)

    @property
    def next_index(self) -> int:
        """The index the next recorded request will get (a `since=` for waiters)."""
        with self._cond:
            return len(self._state.requests)

    def latest_request(self, *, agent_only: bool = True) -> RecordedRequest | None:
        reqs = self.agent_requests() if agent_only else self.requests
        return reqs[-1] if reqs else None

    def wait_for_request(
        self,
        predicate: Callable[[RecordedRequest], bool],
        timeout: float = 30.0,
        *,
        since: int = 0,
    ) -> RecordedRequest:
        """The first recorded request with `index >= since` that satisfies `predicate`.

        Blocks on a condition variable until one arrives; raises TimeoutError (listing
        what did arrive) after `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            checked = since
            while True:
                for req in self._state.requests[checked:]:
                    if predicate(req):
                        return req
                checked = max(checked, len(self._state.requests))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"no matching request within {timeout:.1f}s; requests since "
                        f"#{since}: {self._describe(since) or 'none'}"
                    )
                self._cond.wait(remaining)

    def wait_for_user_text(
        self, needle: str, timeout: float = 30.0, *, since: int = 0
    ) -> RecordedRequest:
        """The first agent turn (index >= since) whose user texts contain `needle`."""
        return self.wait_for_request(
            lambda r: r.is_agent_turn and r.mentions(needle), timeout, since=since
        )

    def wait_for_teammate_message(
        self, teammate_id: str, needle: str = "", timeout: float = 30.0, *, since: int = 0
    ) -> RecordedRequest:
        """The first agent turn carrying a `<teammate-message>` from `teammate_id` whose
        text contains `needle`."""
        return self.wait_for_request(
            lambda r: (
                r.is_agent_turn
                and any(
                    m.teammate_id == teammate_id and needle in m.text for m in r.teammate_messages()
                )
            ),
            timeout,
            since=since,
        )

    def wait_for_tool_result(
        self, tool_use_id: str, timeout: float = 30.0, *, since: int = 0
    ) -> RecordedRequest:
        return self.wait_for_request(
            lambda r: r.is_agent_turn and bool(r.tool_results(tool_use_id)), timeout, since=since
        )

    def describe(self, since: int = 0) -> str:
        with self._cond:
            return self._describe(since)

    def _describe(self, since: int) -> str:
        lines = []
        for r in self._state.requests[since:]:
            kind = "agent" if r.is_agent_turn else "side" if r.is_side_request else "other"
            last = r.last_user_texts()[-1:] if r.is_messages else []
            lines.append(
                f"\n  #{r.index} {r.method} {r.path} {kind} model={r.model} "
                f"max_tokens={r.max_tokens} last_user={[t[:120] for t in last]!r}"
            )
        return "".join(lines)

    # -- internals (called from handler threads) ---------------------------------
    def _record(
        self, method: str, path: str, headers: dict[str, str], body: JSON
    ) -> RecordedRequest:
        with self._cond:
            req = RecordedRequest(
                index=len(self._state.requests),
                method=method,
                path=path,
                headers=headers,
                body=body,
                received_at=time.monotonic(),
            )
            self._state.requests.append(req)
            self._cond.notify_all()
            return req

    def _next_reply(self, req: RecordedRequest) -> Reply:
        reply: Reply | None = None
        source = "responder"
        if self.responder is not None:
            spec = self.responder(req)  # may block: runs outside the lock
            if spec is not None:
                reply = normalize_reply(spec)
        if reply is None and req.is_side_request:
            source = "side"
            reply = normalize_reply(
                self.side_reply(req) if self.side_reply is not None else default_side_reply(req)
            )
        with self._cond:
            if reply is None:
                if self._state.script:
                    source, reply = "script", self._state.script.popleft()
                else:
                    source, reply = "default", text_reply(self.default_text)
            self._state.served.append((req.index, reply, source))
            self._cond.notify_all()
            return reply


def tool_use_ids(reply: Reply) -> list[str]:
    return [cast(str, b["id"]) for b in reply.blocks if b.get("type") == "tool_use"]


__all__ = [
    "DEFAULT_TEXT",
    "SIDE_TEXT",
    "Block",
    "RecordedRequest",
    "Reply",
    "ReplySpec",
    "Responder",
    "ScriptedClaude",
    "TeammateMessage",
    "default_side_reply",
    "error_reply",
    "find_teammate_messages",
    "normalize_reply",
    "sse_events",
    "text_block",
    "text_reply",
    "tool_reply",
    "tool_use_block",
    "tool_use_ids",
    "value_for_schema",
]
