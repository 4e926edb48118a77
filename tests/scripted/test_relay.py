"""`exomonad.scripted`: answers are recorded, and relay mode (what `exomonad demo --live`
puts between each CLI and its vendor's API) passes requests and streamed answers through
and records them. The "real API" here is a second scripted server on loopback."""

from __future__ import annotations

import gzip
import json
import socket

import httpx2

from exomonad.scripted.anthropic import ScriptedClaude, tool_reply
from exomonad.scripted.gemini import ScriptedGemini

GENERATE = "/v1beta/models/gemini-3:streamGenerateContent?alt=sse"
TURN = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}]}  # fmt: skip


def test_answers_are_recorded_with_the_request_they_answer() -> None:
    with ScriptedClaude([tool_reply("Agent", {"name": "gemini-1"})]) as model:
        body = {"model": "m", "stream": True, "tools": [{"name": "Agent"}],
                "messages": [{"role": "user", "content": "spawn"}]}  # fmt: skip
        httpx2.post(f"{model.url}/v1/messages", json=body)
        [req] = model.requests
        answer = model.wait_for_answer(lambda a: '"name": "Agent"' in a.body, 5)
        assert (answer.index, answer.status) == (req.index, 200)
        assert answer.sent_at >= req.received_at
        assert "event: message_stop" in answer.body


def test_relay_passes_requests_and_streamed_answers_through() -> None:
    with ScriptedGemini(["from the real model"]) as api, ScriptedGemini() as relay:
        relay.relay_to(api.url + "/")
        headers = {"x-goog-api-key": "k-123", "Content-Encoding": "gzip"}
        resp = httpx2.post(relay.url + GENERATE, headers=headers,
                           content=gzip.compress(json.dumps(TURN).encode()))  # fmt: skip
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "text/event-stream"
        assert "from the real model" in resp.text
        [upstream] = api.requests  # it reached the "real" API, key and body intact
        assert upstream.path == GENERATE
        assert upstream.headers.get("x-goog-api-key") == "k-123"
        assert upstream.body == TURN
        [seen] = relay.requests  # ...and the relay recorded both sides
        assert seen.is_agent_turn
        assert seen.mentions("hello")
        answer = relay.wait_for_answer(lambda a: True, 5)  # recorded once fully sent
        assert (answer.index, answer.status) == (seen.index, 200)
        assert answer.body == resp.text


def test_relay_answers_probes_itself_and_says_when_the_api_is_unreachable() -> None:
    with socket.socket() as s, ScriptedClaude() as relay:  # s: bound, never listening
        s.bind(("127.0.0.1", 0))  # (held, so no later bind takes the port: it stays dead)
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
        relay.relay_to(dead)
        assert httpx2.head(f"{relay.url}/api/hello").status_code == 200
        resp = httpx2.post(f"{relay.url}/v1/messages", json={"messages": []})
        assert resp.status_code == 502
        error = resp.json()["error"]
        assert error["type"] == "relay_error"
        assert dead in error["message"], error
        relay.wait_for_answer(lambda a: a.status == 502, 5)
        assert [a.status for a in relay.answers()] == [200, 502]
