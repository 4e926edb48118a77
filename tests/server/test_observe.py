"""``/events`` and ``/status`` in-process: who may read them, and what they carry.

The live stream against a real server process is in ``test_observe_process.py``; here
the bus is stopped before reading, so the stream replays what was published and ends.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient

from exomonad.server.app import build_app
from exomonad.server.events import PresenceChanged, SseMessage, parse_sse
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.services import Services
from exomonad.server.tools import call_tool
from exomonad.server.workers import provision
from exomonad.teams import register_synthetic


@pytest.fixture
def client(svc: Services) -> TestClient:
    return TestClient(build_app(svc))


def _lead_token(svc: Services) -> str:
    return svc.tokens.lead_path.read_text().strip()


def _events(client: TestClient, token: str, query: str = "since=0",
            headers: dict[str, str] | None = None) -> list[SseMessage]:  # fmt: skip
    res = client.get(f"/events?{query}", headers={TOKEN_HEADER: token, **(headers or {})})
    assert res.status_code == 200, res.text
    assert res.headers["content-type"].startswith("text/event-stream")
    return list(parse_sse([res.content]))


def test_a_worker_token_is_refused_on_events_and_status(svc: Services, client: TestClient) -> None:
    """Workers must not read the team's stream: it carries other agents' messages."""
    worker = provision(svc, "gemini-1", "proj")
    for path in ("/events?since=0", "/status"):
        for token in (worker.token, None, "exo_forged"):
            res = client.get(path, headers={TOKEN_HEADER: token} if token else {})
            assert res.status_code == 403, (path, token, res.text)
            assert "other agents' messages" in res.json()["error"]
    assert client.get("/status", headers={TOKEN_HEADER: _lead_token(svc)}).status_code == 200


def test_events_replay_the_code_paths_as_server_sent_events(
    svc: Services, client: TestClient
) -> None:
    register_synthetic(svc.paths("proj"), "gemini-1")
    who = Identity(name="gemini-1", role="worker", team="proj", parent="team-lead")
    call_tool(svc, who, "notify_parent", {"status": "success", "message": "parser done"})
    svc.bus.on_stop()  # the stream replays what is kept, then ends
    messages = _events(client, _lead_token(svc))
    hello, *rest = messages
    assert hello.event == "hello"
    assert orjson.loads(hello.data)["last_seq"] == svc.bus.last_seq
    kinds = [m.event for m in rest]
    assert kinds == ["policy_decision", "message_out", "presence"]
    assert [m.id for m in rest] == ["1", "2", "3"]
    decision, out, presence = (orjson.loads(m.data) for m in rest)
    assert (decision["agent"], decision["tool"], decision["decision"]) == (
        "gemini-1", "notify_parent", "allow")  # fmt: skip
    assert (out["sender"], out["to"], out["team"]) == ("gemini-1", "team-lead", "proj")
    assert out["text"] == "[from: gemini-1] success: parser done"
    assert (presence["member"], presence["state"]) == ("gemini-1", "active")
    # Resuming: Last-Event-ID wins over since; a team filter keeps only that team.
    resumed = _events(client, _lead_token(svc), "since=0", {"last-event-id": "2"})
    assert [m.id for m in resumed[1:]] == ["3"]
    assert _events(client, _lead_token(svc), "since=0&team=other")[1:] == []
    bad = client.get("/events?since=x", headers={TOKEN_HEADER: _lead_token(svc)})
    assert bad.status_code == 400


def test_status_has_members_tasks_approvals_and_the_user_inbox(
    svc: Services, client: TestClient, lead: Identity
) -> None:
    worker = provision(svc, "gemini-1", "proj", runtime="gemini")
    register_synthetic(svc.paths("proj"), "gemini-1", agent_type="gemini", pane="%9")
    call_tool(svc, lead, "task_create", {"subject": "parser"})
    who = svc.identify(worker.token)
    call_tool(svc, who, "send_message", {"to": "user", "text": "a question for you"})
    call_tool(svc, lead, "send_message", {"to": "gemini-1", "text": "go"})
    res = client.get("/status", headers={TOKEN_HEADER: _lead_token(svc)})
    assert res.status_code == 200
    doc: dict[str, Any] = res.json()
    assert doc["seq"] == svc.bus.last_seq
    assert doc["current_team"] == "proj"
    [team] = doc["teams"]
    assert [t["subject"] for t in team["tasks"]] == ["parser"]
    assert [e["text"] for e in team["user_inbox"]] == ["a question for you"]
    [row] = [m for m in team["members"] if m["name"] == "gemini-1"]
    assert {k: row[k] for k in ("kind", "runtime", "presence", "presenceFrom", "pane",
                                "unread", "worker")} == {
        "kind": "synthetic", "runtime": "gemini", "presence": "active",
        "presenceFrom": "server", "pane": "%9", "unread": 1, "worker": True,
    }  # fmt: skip
    assert row["worktree"].endswith(".worktrees/gemini-1")
    assert row["branch"] == "exo/gemini-1"
    assert row["lastEventAge"] >= 0
    assert doc["approvals"] == []
    assert doc["policy"]["error"] is None
    services = doc["server"]["services"]
    assert list(services) == [
        "events",
        "inbox_appender",
        "lead",
        "watcher",
        "github",
        "dashboard",
    ]  # start order


def test_a_worker_joins_active_and_leaves_terminated(svc: Services, lead: Identity) -> None:
    provision(svc, "gemini-1", "proj")
    register_synthetic(svc.paths("proj"), "gemini-1")
    call_tool(svc, lead, "remove_worker", {"name": "gemini-1"})
    states = [(e.member, e.state, e.source) for e in svc.bus.recent()
              if isinstance(e, PresenceChanged)]  # fmt: skip
    assert states == [("gemini-1", "active", "provisioned"),
                      ("gemini-1", "terminated", "released")]  # fmt: skip
