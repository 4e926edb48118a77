"""A scripted stand-in for the OpenAI Responses API, for driving the real Codex CLI offline.

`ScriptedCodex` is an HTTP server on 127.0.0.1 (port chosen by the OS) that speaks just
enough of the Responses API for Codex CLI 0.169.0 configured with a custom provider
(`[model_providers.<id>] base_url = "<server.url>/v1"`, `wire_api = "responses"`; see
`codex_cli.provider_config`).

* `POST /v1/responses`: answered as the SSE stream Codex parses (codex-rs `codex-api`
  `sse/responses.rs`): `response.created`, then per output item
  `response.output_item.added` (+ `response.output_text.delta` for a message) and
  `response.output_item.done`, then `response.completed` carrying the response id and
  `usage`. Codex ignores event types it does not know and fails a turn whose stream ends
  without `response.completed`. A body with `"stream": false` gets one JSON response.
* `GET /v1/models`: an OpenAI-style model list (never called by `codex exec` 0.169).
* anything else: recorded, then 404 with an OpenAI-style error body.

What an agent turn looks like (0.169.0, model `gpt-5.5`; recorded with this server):

* body keys `model`, `stream` (true), `input`, `tools`, `tool_choice`,
  `parallel_tool_calls`, `reasoning`, `store` (false), `include`, `prompt_cache_key`,
  `client_metadata`, `text`; no `instructions` key: the system prompt is the first
  `input` item, a `role: developer` message. The prompt typed by the user is the last
  `role: user` message of the first turn (an `<environment_context>` user message comes
  before it).
* `tools`: `exec_command` (function, `{"cmd": ...}`, run as `/bin/bash -lc <cmd>`),
  `write_stdin`, `request_user_input`, `apply_patch` (a *custom* freeform tool: the
  model sends `custom_tool_call` with the patch text as `input`), `view_image`,
  `get_goal` / `create_goal` / `update_goal`, `tool_search` (`execution: "client"`) and
  `web_search`. MCP tools are not listed: they are deferred behind `tool_search`.
* tool results come back in the next request as input items `function_call_output` /
  `custom_tool_call_output` (`call_id`, `output`) or `tool_search_output` (`tools`: the
  matching namespaces with their functions), after the echoed call item.

Requests that offer the shell tool are **agent turns**: they consume the reply script,
one scripted reply per request, and fall back to `default_text` when the script is
empty. Other Responses requests are **side requests** and never consume the script: the
TUI's task title after the first prompt (tools `[apply_patch]` only, `text.format` a
`json_schema` `{title: string <= 36}`; `codex exec` sends none). They get `side_reply`,
by default JSON built from the requested schema, else a short text.

A `responder(request) -> reply | None` is consulted first for every Responses request;
a non-None reply wins (it runs in the handler thread, so Codex simply waits for the HTTP
response).

Every request is recorded (`server.requests`), parsed JSON included, and waiters block on
a `threading.Condition` (`wait_for_request`) instead of sleeping.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from exomonad.scripted.base import JSON, ScriptedHandler, ScriptedServer
from exomonad.scripted.openai_reply import (
    APPLY_PATCH_TOOL,
    Reply,
    ReplySpec,
    apply_patch_item,
    apply_patch_reply,
    error_reply,
    function_call_item,
    mcp_call_item,
    mcp_reply,
    message_item,
    new_id,
    normalize_reply,
    shell_call_item,
    shell_reply,
    text_reply,
    tool_search_item,
    tool_search_reply,
)
from exomonad.scripted.openai_request import (
    SHELL_TOOL,
    Item,
    RecordedRequest,
    output_text,
    texts,
)
from exomonad.scripted.schema import value_for_schema

DEFAULT_TEXT = "Done. (scripted default reply)"
SIDE_TEXT = "Scripted side reply."


def default_side_reply(req: RecordedRequest) -> Reply:
    """JSON built from the requested schema (the TUI's `{title}`), else `SIDE_TEXT`."""
    schema = req.output_schema
    if schema is not None:
        return text_reply(json.dumps(value_for_schema(schema)))
    return text_reply(SIDE_TEXT)


# ----------------------------------------------------------------------------- wire


def _usage(body: JSON) -> JSON:
    tokens = max(1, len(json.dumps(body)) // 4)
    return {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + 5,
    }


def response_json(reply: Reply, response_id: str, model: str, body: JSON) -> JSON:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": [dict(i) for i in reply.items],
        "usage": _usage(body),
    }


def sse_events(reply: Reply, response_id: str, model: str, body: JSON) -> Iterator[JSON]:
    """The events of the SSE stream for `reply`, in order."""
    head = {"id": response_id, "object": "response", "status": "in_progress", "model": model}
    yield {"type": "response.created", "sequence_number": 0, "response": head}
    seq = 1
    for index, item in enumerate(reply.items):
        events: list[JSON] = [{"type": "response.output_item.added", "item": item}]
        if item.get("type") == "message":
            for text in texts(item.get("content")):
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item.get("id"),
                        "content_index": 0,
                        "delta": text,
                    }
                )
        events.append({"type": "response.output_item.done", "item": item})
        for event in events:
            yield {**event, "output_index": index, "sequence_number": seq}
            seq += 1
    done = response_json(reply, response_id, model, body)
    yield {"type": "response.completed", "sequence_number": seq, "response": done}


def sse_bytes(events: Iterable[JSON]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# ----------------------------------------------------------------------------- server


class _Handler(ScriptedHandler):
    timeout = 120  # idle keep-alive connections close after this

    def extra_headers(self) -> dict[str, str]:
        return {"x-request-id": new_id("req")}


Responder = Callable[[RecordedRequest], ReplySpec | None]


class ScriptedCodex(ScriptedServer[RecordedRequest, Reply, ReplySpec]):
    """A scripted Responses API on 127.0.0.1; use as a context manager.

    >>> with ScriptedCodex([shell_reply("touch x"), "done"]) as model:
    ...     base_url = model.base_url  # http://127.0.0.1:<port>/v1
    """

    request_type = RecordedRequest
    handler = _Handler
    thread_name = "scripted-codex"
    request_noun = "model request"

    def __init__(
        self,
        script: Iterable[ReplySpec] = (),
        *,
        default_text: str = DEFAULT_TEXT,
        responder: Responder | None = None,
        side_reply: Callable[[RecordedRequest], ReplySpec] | None = None,
        models: Sequence[str] = ("gpt-5.5",),
    ) -> None:
        super().__init__(script, default_text=default_text)
        self.responder = responder
        self.side_reply = side_reply
        self.models = tuple(models)
        self._served: list[tuple[int, Reply, str]] = []  # (index, reply, source)

    @property
    def base_url(self) -> str:
        """What Codex's provider `base_url` must be (it appends `/responses`)."""
        return f"{self.url}/v1"

    def normalize(self, reply: ReplySpec) -> Reply:
        return normalize_reply(reply)

    # -- script ------------------------------------------------------------------
    def add_text(self, text: str) -> None:
        self.add_reply(text_reply(text))

    def add_shell(self, cmd: str, **extra: Any) -> Reply:
        """Queue a shell call; returns the reply (its `call_ids()` name the result)."""
        reply = shell_reply(cmd, **extra)
        self.add_reply(reply)
        return reply

    # -- log ---------------------------------------------------------------------
    def served(self) -> list[tuple[int, Reply, str]]:
        """(request index, reply, source) for every answered Responses request; source
        is `responder`, `script`, `default` or `side`."""
        with self._cond:
            return list(self._served)

    def wait_for_output(
        self, call_id: str, timeout: float = 30.0, *, since: int = 0
    ) -> RecordedRequest:
        """The first agent turn that carries the tool result for `call_id` (any
        `*_output` item: a function, custom tool or tool_search result)."""
        return self.wait_for_request(
            lambda r: r.is_agent_turn and bool(r.outputs(call_id)), timeout, since=since
        )

    def _describe(self, since: int) -> str:
        lines = []
        for r in self._requests[since:]:
            kind = "agent" if r.is_agent_turn else "side" if r.is_side_request else "other"
            last = r.input[-1:] if r.is_responses else []
            lines.append(
                f"\n  #{r.index} {r.method} {r.path} {kind} model={r.model} "
                f"last_input={json.dumps(last)[:200]}"
            )
        return "".join(lines)

    # -- internals (called from handler threads) ---------------------------------
    def respond(self, handler: ScriptedHandler, req: RecordedRequest) -> None:
        if req.method == "GET" and req.route.endswith("/models"):
            models = [{"id": m, "object": "model", "owned_by": "scripted"} for m in self.models]
            handler.send_json(200, {"object": "list", "data": models})
            return
        if not req.is_responses:
            error = {"message": "not scripted", "type": "invalid_request_error", "code": None}
            handler.send_json(404, {"error": error})
            return
        reply = self._next_reply(req)
        if reply.delay > 0:
            time.sleep(reply.delay)
        if reply.status != 200:
            error = {"message": reply.error_message, "type": "server_error", "code": None}
            handler.send_json(reply.status, {"error": error})
            return
        response_id, model = new_id("resp"), req.model or "scripted"
        if req.streaming:
            data = sse_bytes(sse_events(reply, response_id, model, req.body))
            handler.send(200, "text/event-stream", data)
        else:
            handler.send_json(200, response_json(reply, response_id, model, req.body))

    def _next_reply(self, req: RecordedRequest) -> Reply:
        reply: Reply | None = None
        source = "responder"
        if self.responder is not None:
            spec = self.responder(req)  # may block: runs outside the lock
            if spec is not None:
                reply = normalize_reply(spec)
        if reply is None and req.is_side_request:
            source = "side"
            side = self.side_reply(req) if self.side_reply is not None else default_side_reply(req)
            reply = normalize_reply(side)
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


__all__ = [
    "APPLY_PATCH_TOOL",
    "DEFAULT_TEXT",
    "SHELL_TOOL",
    "SIDE_TEXT",
    "Item",
    "RecordedRequest",
    "Reply",
    "ReplySpec",
    "Responder",
    "ScriptedCodex",
    "apply_patch_item",
    "apply_patch_reply",
    "default_side_reply",
    "error_reply",
    "function_call_item",
    "mcp_call_item",
    "mcp_reply",
    "message_item",
    "normalize_reply",
    "output_text",
    "response_json",
    "shell_call_item",
    "shell_reply",
    "sse_bytes",
    "sse_events",
    "text_reply",
    "tool_search_item",
    "tool_search_reply",
]
