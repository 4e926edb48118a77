"""A scripted stand-in for the Gemini API, for driving the real Gemini CLI offline.

`ScriptedGemini` is an HTTP server on 127.0.0.1 (port chosen by the OS) that speaks just
enough of the Generative Language API (`POST /v1beta/models/<model>:generateContent` and
`:streamGenerateContent?alt=sse`) for Gemini CLI 0.61.0. Point the CLI at it with
`GOOGLE_GEMINI_BASE_URL=<server.url>`.

Gemini CLI sends two kinds of model request:

* **agent turns**: requests that carry `tools` (function declarations). These consume
  the reply script, one scripted reply per request, and fall back to `default_text`
  when the script is empty.
* **utility requests** without `tools`: the model router (a classifier that must
  answer JSON matching `generationConfig.responseJsonSchema`, e.g.
  `{"complexity_reasoning": ..., "complexity_score": ...}`), session summaries and the
  like. They never consume the script; they get a small JSON object built from the
  response schema, or a short text when no schema is given.

Every request is recorded (`server.requests`), parsed JSON included, and waiters block
on a `threading.Condition` (`wait_for_request`) instead of sleeping.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from exomonad.scripted.base import JSON, RecordedRequestBase, ScriptedHandler, ScriptedServer

Part = dict[str, Any]
ReplySpec = str | Part | Sequence[Part]

DEFAULT_TEXT = "Done. (scripted default reply)"
UTILITY_TEXT = "Scripted utility reply."


@dataclass(frozen=True)
class RecordedRequest(RecordedRequestBase):
    """One request as Gemini CLI sent it (`path` e.g.
    "...:streamGenerateContent?alt=sse")."""

    @property
    def model(self) -> str | None:
        """`gemini-3.1-pro-preview` for `/v1beta/models/gemini-3.1-pro-preview:...`."""
        tail = self.route.rsplit("/models/", 1)
        if len(tail) != 2:
            return None
        return tail[1].split(":", 1)[0]

    @property
    def method_name(self) -> str | None:
        """The RPC after the colon: `generateContent`, `streamGenerateContent`, ..."""
        p = self.route
        return p.rsplit(":", 1)[1] if ":" in p else None

    @property
    def streaming(self) -> bool:
        return self.method_name == "streamGenerateContent"

    @property
    def is_generate(self) -> bool:
        return self.method_name in ("generateContent", "streamGenerateContent")

    @property
    def has_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def is_agent_turn(self) -> bool:
        """A main-loop model call (it offers tools); the router and helpers do not."""
        return self.is_generate and self.has_tools

    @property
    def contents(self) -> list[JSON]:
        c = self.body.get("contents")
        return [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []

    def parts(self, role: str | None = None) -> list[Part]:
        out: list[Part] = []
        for content in self.contents:
            if role is not None and content.get("role") != role:
                continue
            ps = content.get("parts")
            if isinstance(ps, list):
                out.extend(p for p in ps if isinstance(p, dict))
        return out

    def user_texts(self) -> list[str]:
        """Every `text` part in every `role: user` content, in order (the whole history)."""
        return [p["text"] for p in self.parts("user") if isinstance(p.get("text"), str)]

    def last_user_texts(self) -> list[str]:
        """The text parts of the last `role: user` content, i.e. the newest user turn.

        Note: Gemini CLI puts the first prompt of a session in the same content as its
        `<session_context>` preamble, so this can hold more than the typed text.
        """
        for content in reversed(self.contents):
            if content.get("role") == "user":
                ps = content.get("parts")
                if not isinstance(ps, list):
                    return []
                return [
                    p["text"] for p in ps if isinstance(p, dict) and isinstance(p.get("text"), str)
                ]
        return []

    def function_calls(self) -> list[JSON]:
        """`functionCall` payloads in the history (model turns)."""
        return [p["functionCall"] for p in self.parts() if isinstance(p.get("functionCall"), dict)]

    def function_responses(self) -> list[JSON]:
        """`functionResponse` payloads in the history (user turns)."""
        return [
            p["functionResponse"]
            for p in self.parts()
            if isinstance(p.get("functionResponse"), dict)
        ]

    def tool_names(self) -> list[str]:
        names: list[str] = []
        for tool in self.body.get("tools") or []:
            if isinstance(tool, dict):
                for decl in tool.get("functionDeclarations") or []:
                    if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                        names.append(decl["name"])
        return names

    def mentions(self, needle: str) -> bool:
        """True when `needle` occurs in any user text part."""
        return any(needle in t for t in self.user_texts())


def text_reply(text: str) -> list[Part]:
    return [{"text": text}]


def function_call_reply(name: str, args: dict[str, Any] | None = None) -> list[Part]:
    return [{"functionCall": {"name": name, "args": dict(args or {})}}]


def _normalize_reply(reply: ReplySpec) -> list[Part]:
    if isinstance(reply, str):
        return text_reply(reply)
    if isinstance(reply, dict):
        if "candidates" in reply:  # a complete response body: send as is
            return [{"__raw_response__": reply}]
        return [dict(reply)]
    parts = [dict(p) for p in reply]
    if not parts:
        raise ValueError("a scripted reply needs at least one part")
    return parts


def _value_for_schema(schema: Any, depth: int = 0) -> Any:
    """A minimal value that satisfies a (Gemini-style, upper-case) JSON schema."""
    if not isinstance(schema, dict) or depth > 8:
        return "scripted"
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return schema["enum"][0]
    kind = str(schema.get("type", "STRING")).upper()
    if kind == "OBJECT":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        return {k: _value_for_schema(v, depth + 1) for k, v in props.items()}
    if kind == "ARRAY":
        return []
    if kind == "INTEGER":
        return 10
    if kind == "NUMBER":
        return 0.5
    if kind == "BOOLEAN":
        return False
    return "scripted"


def default_utility_text(body: JSON) -> str:
    """Answer for a tool-less request (router, summaries): schema-shaped JSON or text."""
    cfg = body.get("generationConfig")
    cfg = cfg if isinstance(cfg, dict) else {}
    schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema")
    if schema is not None:
        return json.dumps(_value_for_schema(schema))
    if cfg.get("responseMimeType") == "application/json":
        return "{}"
    return UTILITY_TEXT


def _response_body(parts: list[Part]) -> JSON:
    if len(parts) == 1 and "__raw_response__" in parts[0]:
        return cast(JSON, parts[0]["__raw_response__"])
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "scripted",
    }


class ScriptedGemini(ScriptedServer[RecordedRequest, list[Part], ReplySpec]):
    """A scripted Gemini API on 127.0.0.1; use as a context manager.

    >>> with ScriptedGemini(["first reply", function_call_reply("x", {})]) as model:
    ...     env = {"GOOGLE_GEMINI_BASE_URL": model.url}
    """

    request_type = RecordedRequest
    thread_name = "scripted-gemini"
    request_noun = "model request"

    def __init__(
        self,
        script: Iterable[ReplySpec] = (),
        *,
        default_text: str = DEFAULT_TEXT,
        utility_reply: Callable[[RecordedRequest], str] | None = None,
    ) -> None:
        super().__init__(script, default_text=default_text)
        self.utility_reply = utility_reply

    def normalize(self, reply: ReplySpec) -> list[Part]:
        """A str, a part, parts, or a full response body (sent as is)."""
        return _normalize_reply(reply)

    # -- script ------------------------------------------------------------------
    def add_text(self, text: str) -> None:
        self.add_reply(text_reply(text))

    def add_function_call(self, name: str, args: dict[str, Any] | None = None) -> None:
        self.add_reply(function_call_reply(name, args))

    # -- log ---------------------------------------------------------------------
    def latest_user_texts(self, *, agent_only: bool = True) -> list[str]:
        """Texts of the newest user turn of the latest (agent) request; [] if none yet."""
        req = self.latest_request(agent_only=agent_only)
        return req.last_user_texts() if req is not None else []

    def _describe(self, since: int) -> str:
        return "".join(
            f"\n  #{r.index} {r.path} tools={r.has_tools} last_user={r.last_user_texts()[-1:]!r}"
            for r in self._requests[since:]
        )

    # -- internals (called from handler threads) ---------------------------------
    def respond(self, handler: ScriptedHandler, req: RecordedRequest) -> None:
        if not req.is_generate:
            if req.method_name == "countTokens":
                handler.send(200, "application/json", b'{"totalTokens": 10}')
            else:
                handler.send(
                    404, "application/json", b'{"error": {"code": 404, "message": "not scripted"}}'
                )
            return
        resp = _response_body(self._next_parts(req))
        if req.streaming:
            data = b"data: " + json.dumps(resp).encode() + b"\r\n\r\n"
            handler.send(200, "text/event-stream", data)
        else:
            handler.send(200, "application/json", json.dumps(resp).encode())

    def _next_parts(self, req: RecordedRequest) -> list[Part]:
        if not req.has_tools:
            make = self.utility_reply or (lambda r: default_utility_text(r.body))
            return text_reply(make(req))
        scripted = self._pop_script()
        return scripted if scripted is not None else text_reply(self.default_text)


__all__ = [
    "DEFAULT_TEXT",
    "RecordedRequest",
    "ScriptedGemini",
    "default_utility_text",
    "function_call_reply",
    "text_reply",
]
