"""`exomonad.demo.stage.open_models`: offline, the models are scripted with the demo's
scene; with `--live` keys, the same servers relay to the real APIs (here: loopback
stand-ins named by the *_BASE_URL variables), so the scene and its hops do not change."""

from __future__ import annotations

import httpx2

from exomonad.demo.script import GEMINI, WORKERS
from exomonad.demo.stage import open_models
from exomonad.scripted.anthropic import ScriptedClaude
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.scripted.openai import ScriptedCodex

KEYS = {"ANTHROPIC_API_KEY": "a-key", "GEMINI_API_KEY": "g-key", "OPENAI_API_KEY": "o-key"}
TOOLS = [{"name": "Agent"}]


def test_offline_the_models_play_the_scene() -> None:
    with open_models(None, {}) as models:
        assert models.lead.upstream is None
        assert models.gemini.pending_replies == 2  # notify_parent, then a text
        assert models.codex.pending_replies == 4  # push, tool_search, notify_parent, text
        body = {
            "model": "m",
            "stream": False,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": GEMINI.prompt}],
        }
        answer = httpx2.post(f"{models.lead.url}/v1/messages", json=body).json()
        [call] = [b for b in answer["content"] if b["type"] == "tool_use"]
        assert (call["name"], call["input"]["name"]) == ("Agent", "gemini-1")
        assert call["input"]["subagent_type"] == "gemini-worker"
        assert call["input"]["prompt"] == GEMINI.task
    assert [w.name for w in WORKERS] == ["gemini-1", "codex-1"]


def test_live_the_same_servers_relay_to_the_apis() -> None:
    with (
        ScriptedClaude(["from Claude"]) as claude,
        ScriptedGemini(["from Gemini"]) as gemini,
        ScriptedCodex(["from Codex"]) as codex,
    ):
        env = {
            "ANTHROPIC_BASE_URL": claude.url,
            "GOOGLE_GEMINI_BASE_URL": gemini.url,
            "OPENAI_BASE_URL": codex.base_url,
        }
        with open_models(KEYS, env) as models:
            assert models.lead.responder is None
            assert models.gemini.pending_replies == models.codex.pending_replies == 0
            turn = {
                "stream": False,
                "tools": TOOLS,
                "messages": [{"role": "user", "content": "hi"}],
            }
            lead = httpx2.post(
                f"{models.lead.url}/v1/messages",
                json=turn,
                headers={"x-api-key": KEYS["ANTHROPIC_API_KEY"]},
            )
            assert "from Claude" in lead.text
            assert claude.requests[0].headers.get("x-api-key") == "a-key"
            gem = httpx2.post(
                f"{models.gemini.url}/v1beta/models/g:generateContent",
                json={"tools": [{}], "contents": []},
            )
            assert "from Gemini" in gem.text
            resp = httpx2.post(
                f"{models.codex.base_url}/responses",
                json={"stream": False, "tools": [{"name": "exec_command"}]},
            )
            assert "from Codex" in resp.text
            assert codex.requests[0].path == "/v1/responses"  # one /v1, not two
