"""What the scripted Responses API answers (:mod:`exomonad.scripted.openai`): a reply's
output items (a message, a shell or ``apply_patch`` call, a ``tool_search``, an MCP tool
call found through it) and the builders the scripts use."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from exomonad.scripted.openai_request import SHELL_TOOL, Item

__all__ = [
    "APPLY_PATCH_TOOL",
    "Reply",
    "ReplySpec",
    "apply_patch_item",
    "apply_patch_reply",
    "error_reply",
    "function_call_item",
    "mcp_call_item",
    "mcp_reply",
    "message_item",
    "new_id",
    "normalize_reply",
    "shell_call_item",
    "shell_reply",
    "text_reply",
    "tool_search_item",
    "tool_search_reply",
]

APPLY_PATCH_TOOL = "apply_patch"


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass(frozen=True)
class Reply:
    """One model response: output items, plus how to send it.

    `delay` sleeps before answering (the request is already recorded); a non-200
    `status` sends an OpenAI error body with `error_message` instead of a stream.
    """

    items: tuple[Item, ...]
    delay: float = 0.0
    status: int = 200
    error_message: str = "scripted error"

    def call_ids(self) -> list[str]:
        """The `call_id` of every tool call item in this reply."""
        return [str(i["call_id"]) for i in self.items if "call_id" in i]


ReplySpec = str | Item | Sequence[Item] | Reply


def message_item(text: str) -> Item:
    """An assistant message with one `output_text` part."""
    return {
        "type": "message",
        "id": new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    namespace: str | None = None,
    call_id: str = "",
) -> Item:
    """A `function_call`; `namespace` (e.g. `mcp__exo`) for a tool found by tool_search."""
    item: Item = {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": call_id or new_id("call"),
        "name": name,
        "arguments": json.dumps(dict(arguments or {})),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def shell_call_item(cmd: str, *, call_id: str = "", **extra: Any) -> Item:
    """Codex's shell tool: `exec_command {"cmd": cmd, ...}` (`/bin/bash -lc <cmd>`).

    `extra` adds arguments, e.g. `sandbox_permissions="require_escalated"` and a
    `justification` to ask for approval to leave the sandbox.
    """
    return function_call_item(SHELL_TOOL, {"cmd": cmd, **extra}, call_id=call_id)


def apply_patch_item(patch: str, *, call_id: str = "") -> Item:
    """Codex's freeform `apply_patch` tool: a `custom_tool_call` whose input is the patch
    (`*** Begin Patch` ... `*** End Patch`)."""
    return {
        "type": "custom_tool_call",
        "id": new_id("ctc"),
        "call_id": call_id or new_id("call"),
        "name": APPLY_PATCH_TOOL,
        "input": patch,
        "status": "completed",
    }


def tool_search_item(query: str, *, limit: int | None = None, call_id: str = "") -> Item:
    """A client-executed `tool_search_call`: Codex searches its deferred tools (MCP) and
    answers with a `tool_search_output` in the next request."""
    arguments: dict[str, Any] = {"query": query}
    if limit is not None:
        arguments["limit"] = limit
    return {
        "type": "tool_search_call",
        "id": new_id("ts"),
        "call_id": call_id or new_id("call"),
        "execution": "client",
        "status": "completed",
        "arguments": arguments,
    }


def mcp_call_item(
    server: str, tool: str, arguments: Mapping[str, Any] | None = None, *, call_id: str = ""
) -> Item:
    """A call of MCP tool `tool` of server `server`, as offered after a tool_search:
    a `function_call` in namespace `mcp__<server>`."""
    return function_call_item(tool, arguments, namespace=f"mcp__{server}", call_id=call_id)


def text_reply(text: str) -> Reply:
    return Reply((message_item(text),))


def _with_text(item: Item, text: str) -> Reply:
    return Reply((message_item(text), item) if text else (item,))


def shell_reply(cmd: str, *, text: str = "", **extra: Any) -> Reply:
    return _with_text(shell_call_item(cmd, **extra), text)


def apply_patch_reply(patch: str, *, text: str = "") -> Reply:
    return _with_text(apply_patch_item(patch), text)


def tool_search_reply(query: str, *, limit: int | None = None) -> Reply:
    return Reply((tool_search_item(query, limit=limit),))


def mcp_reply(server: str, tool: str, arguments: Mapping[str, Any] | None = None) -> Reply:
    return Reply((mcp_call_item(server, tool, arguments),))


def error_reply(status: int = 500, message: str = "scripted server error") -> Reply:
    return Reply((), status=status, error_message=message)


def normalize_reply(reply: ReplySpec) -> Reply:
    """A str (a message), one item, items, or a `Reply`."""
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, str):
        return text_reply(reply)
    if isinstance(reply, Mapping):
        return Reply((dict(reply),))
    items = tuple(dict(i) for i in reply)
    if not items:
        raise ValueError("a scripted reply needs at least one item")
    return Reply(items)
