"""Fast checks of the scripted Gemini server itself (no Gemini CLI, no tmux)."""

from __future__ import annotations

import json
import threading
import urllib.request
from typing import Any

import pytest

from exomonad.scripted.gemini import DEFAULT_TEXT, ScriptedGemini, function_call_reply

TOOLS = [{"functionDeclarations": [{"name": "mcp_exo_notify_parent"}]}]


def _post(url: str, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    req = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = data["candidates"][0]["content"]["parts"]
    return parts


def test_script_is_consumed_by_agent_turns_only() -> None:
    call = function_call_reply("mcp_exo_notify_parent", {"status": "success", "message": "m"})
    with ScriptedGemini(["first", call]) as model:
        assert model.url.startswith("http://127.0.0.1:")
        agent = {"contents": [_user("hi")], "tools": TOOLS}
        ctype, raw = _post(model.url, "/v1beta/models/m:generateContent", agent)
        assert ctype.startswith("application/json")
        assert _parts(json.loads(raw)) == [{"text": "first"}]

        # A router request (no tools) gets schema-shaped JSON and leaves the script alone.
        schema = {
            "type": "OBJECT",
            "properties": {
                "complexity_reasoning": {"type": "STRING"},
                "complexity_score": {"type": "INTEGER"},
            },
        }
        router = {"contents": [_user("hi")], "generationConfig": {"responseJsonSchema": schema}}
        _, raw = _post(model.url, "/v1beta/models/lite:generateContent", router)
        answer = json.loads(_parts(json.loads(raw))[0]["text"])
        assert set(answer) == {"complexity_reasoning", "complexity_score"}
        assert isinstance(answer["complexity_score"], int)
        assert model.pending_replies == 1

        ctype, raw = _post(model.url, "/v1beta/models/m:streamGenerateContent?alt=sse", agent)
        assert ctype.startswith("text/event-stream")
        events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
        assert [_parts(json.loads(e)) for e in events] == [call]

        _, raw = _post(model.url, "/v1beta/models/m:generateContent", agent)
        assert _parts(json.loads(raw)) == [{"text": DEFAULT_TEXT}]

        reqs = model.requests
        assert [r.is_agent_turn for r in reqs] == [True, False, True, True]
        assert reqs[2].streaming
        assert reqs[2].model == "m"
        assert reqs[1].model == "lite"
        assert model.latest_user_texts() == ["hi"]
        assert reqs[0].tool_names() == ["mcp_exo_notify_parent"]


def test_wait_for_request_blocks_until_match_and_times_out() -> None:
    with ScriptedGemini() as model:
        body = {"contents": [_user("later")], "tools": TOOLS}
        timer = threading.Timer(
            0.3, lambda: _post(model.url, "/v1beta/models/m:generateContent", body)
        )
        timer.start()
        try:
            # A wait that looked only at its end would outlast pytest's time-out.
            req = model.wait_for_user_text("later", timeout=3600)
            assert req.last_user_texts() == ["later"]
        finally:
            timer.join()
        with pytest.raises(TimeoutError, match="no matching model request"):
            model.wait_for_user_text("later", timeout=0.2, since=req.index + 1)


def test_function_response_helpers() -> None:
    with ScriptedGemini() as model:
        body = {
            "contents": [
                _user("go"),
                {"role": "model", "parts": [{"functionCall": {"name": "t", "args": {"a": 1}}}]},
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "t", "response": {"ok": True}}}],
                },
            ],
            "tools": TOOLS,
        }
        _post(model.url, "/v1beta/models/m:streamGenerateContent?alt=sse", body)
        req = model.wait_for_request(lambda r: bool(r.function_responses()), timeout=5)
        assert req.function_calls() == [{"name": "t", "args": {"a": 1}}]
        assert req.function_responses() == [{"name": "t", "response": {"ok": True}}]
        assert req.last_user_texts() == []
