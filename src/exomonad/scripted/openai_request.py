"""What Codex sent the scripted Responses API (:mod:`exomonad.scripted.openai`): one
recorded request, read as input items (messages, echoed calls, tool outputs), its tools
and its structured-output schema."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from exomonad.scripted.base import JSON, RecordedRequestBase

__all__ = ["SHELL_TOOL", "Item", "RecordedRequest", "output_text", "texts"]

Item = dict[str, Any]

#: Codex's shell tool; only a main-loop turn offers it.
SHELL_TOOL = "exec_command"


def texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(p["text"]) for p in content if isinstance(p, dict) and "text" in p]


def output_text(output: Any) -> str:
    """The text of a tool output (`output` is a string or a list of content items)."""
    if isinstance(output, str):
        return output
    return "\n".join(texts(output))


@dataclass(frozen=True)
class RecordedRequest(RecordedRequestBase):
    """One request as Codex sent it (`path` e.g. "/v1/responses")."""

    @property
    def is_responses(self) -> bool:
        return self.method == "POST" and self.route.endswith("/responses")

    @property
    def streaming(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def model(self) -> str | None:
        m = self.body.get("model")
        return m if isinstance(m, str) else None

    @property
    def tools(self) -> list[JSON]:
        t = self.body.get("tools")
        return [x for x in t if isinstance(x, dict)] if isinstance(t, list) else []

    @property
    def has_tools(self) -> bool:
        return bool(self.tools)

    @property
    def is_agent_turn(self) -> bool:
        """A main-loop turn: it offers the shell tool (side requests do not)."""
        return self.is_responses and SHELL_TOOL in self.tool_names()

    @property
    def is_side_request(self) -> bool:
        return self.is_responses and not self.is_agent_turn

    @property
    def output_schema(self) -> JSON | None:
        """The JSON schema of `text.format` when the request asks for structured output."""
        text = self.body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = fmt.get("schema")
            return schema if isinstance(schema, dict) else {}
        return None

    def tool_names(self) -> list[str]:
        """Top-level tool names (`tool_search` and `web_search` by their type)."""
        return [str(t.get("name") or t.get("type")) for t in self.tools]

    def tool(self, name: str) -> JSON | None:
        return next((t for t in self.tools if (t.get("name") or t.get("type")) == name), None)

    def turn_metadata(self) -> JSON:
        """The `x-codex-turn-metadata` header, parsed ({} when absent)."""
        raw = next((v for k, v in self.headers.items() if k.lower() == "x-codex-turn-metadata"), "")
        try:
            meta = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return meta if isinstance(meta, dict) else {}

    @property
    def input(self) -> list[Item]:
        i = self.body.get("input")
        return [x for x in i if isinstance(x, dict)] if isinstance(i, list) else []

    def items(self, kind: str) -> list[Item]:
        return [i for i in self.input if i.get("type") == kind]

    def messages(self, role: str | None = None) -> list[Item]:
        return [m for m in self.items("message") if role is None or m.get("role") == role]

    def user_texts(self) -> list[str]:
        """Every text part of every `role: user` message, in order (the whole history)."""
        return [t for m in self.messages("user") for t in texts(m.get("content"))]

    def last_user_texts(self) -> list[str]:
        users = self.messages("user")
        return texts(users[-1].get("content")) if users else []

    def developer_text(self) -> str:
        return "\n".join(t for m in self.messages("developer") for t in texts(m.get("content")))

    def mentions(self, needle: str) -> bool:
        return any(needle in t for t in self.user_texts())

    def calls(self) -> list[Item]:
        """Echoed call items (`function_call`, `custom_tool_call`, `tool_search_call`)."""
        kinds = ("function_call", "custom_tool_call", "tool_search_call")
        return [i for i in self.input if i.get("type") in kinds]

    def outputs(self, call_id: str | None = None) -> list[Item]:
        """Tool result items (`*_output`), optionally only those for `call_id`."""
        return [
            i
            for i in self.input
            if str(i.get("type", "")).endswith("_output")
            and (call_id is None or i.get("call_id") == call_id)
        ]

    def output_text(self, call_id: str) -> str | None:
        """The text of the tool result for `call_id`, or None when it is not here."""
        found = [o for o in self.outputs(call_id) if "output" in o]
        return output_text(found[-1]["output"]) if found else None

    def tool_search_tools(self, call_id: str | None = None) -> list[JSON]:
        """The `tools` of the `tool_search_output` items (namespaces with functions)."""
        return [
            t
            for o in self.outputs(call_id)
            if o.get("type") == "tool_search_output"
            for t in o.get("tools") or []
            if isinstance(t, dict)
        ]
