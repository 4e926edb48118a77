"""What Claude Code sent the scripted Anthropic API (:mod:`exomonad.scripted.anthropic`):
one recorded request, read as the Messages API's content blocks, tool uses and results,
and the ``<teammate-message>`` elements a lead's requests carry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from exomonad.scripted.base import JSON, RecordedRequestBase

__all__ = ["Block", "RecordedRequest", "TeammateMessage", "find_teammate_messages", "text_block"]

Block = dict[str, Any]

_TEAMMATE_RE = re.compile(
    r"<teammate-message\s+teammate_id=\"(?P<from>[^\"]*)\"(?P<attrs>[^>]*)>"
    r"(?P<text>.*?)</teammate-message>",
    re.DOTALL,
)
_ATTR_RE = re.compile(r"(\w+)=\"([^\"]*)\"")


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


@dataclass(frozen=True)
class TeammateMessage:
    """One `<teammate-message teammate_id=".." ...>text</teammate-message>` in a request."""

    teammate_id: str
    text: str
    attrs: dict[str, str]


@dataclass(frozen=True)
class RecordedRequest(RecordedRequestBase):
    """One request as Claude Code sent it (`path` e.g. "/v1/messages?beta=true")."""

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
