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

import json
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from exomonad.scripted.anthropic_request import (
    Block,
    RecordedRequest,
    TeammateMessage,
    find_teammate_messages,
    text_block,
)
from exomonad.scripted.base import JSON, ScriptedHandler, ScriptedServer
from exomonad.scripted.schema import value_for_schema

DEFAULT_TEXT = "Done. (scripted default reply)"
SIDE_TEXT = "Scripted side reply."


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


# ----------------------------------------------------------------------------- replies


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


class _Handler(ScriptedHandler):
    timeout = 120  # idle keep-alive connections close after this

    def extra_headers(self) -> dict[str, str]:
        return {"request-id": f"req_{secrets.token_hex(8)}"}

    def do_HEAD(self) -> None:
        self._handle()


Responder = Callable[[RecordedRequest], ReplySpec | None]


class ScriptedClaude(ScriptedServer[RecordedRequest, Reply, ReplySpec]):
    """A scripted Anthropic API on 127.0.0.1; use as a context manager.

    >>> with ScriptedClaude([tool_reply("Bash", {"command": "true"}), "done"]) as model:
    ...     env = {"ANTHROPIC_BASE_URL": model.url}
    """

    request_type = RecordedRequest
    handler = _Handler
    thread_name = "scripted-claude"

    def __init__(
        self,
        script: Iterable[ReplySpec] = (),
        *,
        default_text: str = DEFAULT_TEXT,
        responder: Responder | None = None,
        side_reply: Callable[[RecordedRequest], ReplySpec] | None = None,
    ) -> None:
        super().__init__(script, default_text=default_text)
        self.responder = responder
        self.side_reply = side_reply
        self._served: list[tuple[int, Reply, str]] = []  # (index, reply, source)

    def normalize(self, reply: ReplySpec) -> Reply:
        return normalize_reply(reply)

    # -- script ------------------------------------------------------------------
    def add_text(self, text: str) -> None:
        self.add_reply(text_reply(text))

    def add_tool_use(
        self, name: str, input: Mapping[str, Any] | None = None, *, text: str = ""
    ) -> None:
        self.add_reply(tool_reply(name, input, text=text))

    # -- log ---------------------------------------------------------------------
    def side_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_side_request]

    def served(self) -> list[tuple[int, Reply, str]]:
        """(request index, reply, source) for every answered `/v1/messages` request;
        source is `responder`, `script`, `default` or `side`."""
        with self._cond:
            return list(self._served)

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

    def _describe(self, since: int) -> str:
        lines = []
        for r in self._requests[since:]:
            kind = "agent" if r.is_agent_turn else "side" if r.is_side_request else "other"
            last = r.last_user_texts()[-1:] if r.is_messages else []
            lines.append(
                f"\n  #{r.index} {r.method} {r.path} {kind} model={r.model} "
                f"max_tokens={r.max_tokens} last_user={[t[:120] for t in last]!r}"
            )
        return "".join(lines)

    # -- internals (called from handler threads) ---------------------------------
    def respond(self, handler: ScriptedHandler, req: RecordedRequest) -> None:
        if req.is_count_tokens:
            handler.send_json(200, {"input_tokens": _rough_tokens(req.body)})
            return
        if req.method == "HEAD":  # connectivity probes (`HEAD /`, `HEAD /api/hello`)
            handler.send(200, "text/plain", b"")
            return
        if not req.is_messages:
            handler.send_json(
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}},
            )
            return
        reply = self._next_reply(req)
        if reply.delay > 0:
            time.sleep(reply.delay)
        if reply.status != 200:
            message = " ".join(str(b.get("text", "")) for b in reply.blocks) or "scripted error"
            handler.send_json(
                reply.status,
                {"type": "error", "error": {"type": reply.error_type, "message": message}},
            )
            return
        model = req.model or "claude-scripted"
        tokens = _rough_tokens(req.body)
        if req.streaming:
            chunks = [
                f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                for name, data in sse_events(reply, model, tokens)
            ]
            handler.send(200, "text/event-stream; charset=utf-8", b"".join(chunks))
        else:
            handler.send_json(200, _message_json(reply, model, tokens))

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
                scripted = self._pop_script()
                if scripted is not None:
                    source, reply = "script", scripted
                else:
                    source, reply = "default", text_reply(self.default_text)
            self._served.append((req.index, reply, source))
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
