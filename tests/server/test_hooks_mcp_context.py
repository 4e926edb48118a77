"""Gemini CLI's BeforeTool input names the MCP server and tool it is about to run
(``mcp_context``): the server's hook handler hands it to the policy, which judges the call
as that tool where Gemini's name for it is the call's ``tool_name`` (see
``tests/policy/test_mcp_names.py``; a real Gemini CLI's input,
``tests/e2e/test_gemini_worktree.py``)."""

from __future__ import annotations

import orjson

from exomonad.server.hooks import hook_request
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.teams import register_synthetic


def _before_tool(svc: Services, told: dict[str, object] | None) -> dict[str, object]:
    register_synthetic(svc.paths("proj"), "w1")
    token = svc.tokens.issue(Identity(name="w1", role="worker", team="proj", parent="team-lead"))
    payload: dict[str, object] = {"session_id": "w1-s", "hook_event_name": "BeforeTool",
                                  "tool_name": "mcp_github_get_merge_base",
                                  "tool_input": {"limit": 5}}  # fmt: skip
    if told is not None:
        payload["mcp_context"] = told
    answer = hook_request(svc, "before-tool", "gemini", orjson.dumps(payload), token, "%1")
    return answer.output


def test_the_servers_hook_judges_by_the_context_gemini_sends(svc: Services) -> None:
    told: dict[str, object] = {"server_name": "github", "tool_name": "get_merge_base",
                               "command": "gh-mcp"}  # fmt: skip
    assert _before_tool(svc, told).get("decision") != "deny"
    entry = orjson.loads((svc.state_dir / "audit.jsonl").read_bytes().splitlines()[-1])
    assert entry["decision"] == "allow", entry
    assert entry["actions"][0]["server"] == "github", entry
    assert entry["actions"][0]["tool"] == "get_merge_base", entry


def test_without_it_the_name_is_split_every_way(svc: Services) -> None:
    """No context: ``github_get``'s ``merge_base`` may be meant, asked (nobody answers:
    denied at the approval time-out)."""
    assert _before_tool(svc, None).get("decision") == "deny"
    entry = orjson.loads((svc.state_dir / "audit.jsonl").read_bytes().splitlines()[-1])
    assert entry["actions"][0]["server"] == "github_get", entry
