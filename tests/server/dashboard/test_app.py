"""The dashboard app in-process: its gates (a person's process on the Unix socket, the
token on TCP), a person's answer to an approval, and replies into a member's inbox."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from exomonad.errors import ExomonadError
from exomonad.policy.actions import MergePR
from exomonad.policy.approvals import Approval
from exomonad.policy.person import person
from exomonad.server.dashboard import dashboard
from exomonad.server.dashboard.access import DashboardTokens, TokenGate, security_headers
from exomonad.server.dashboard.routes import dashboard_app
from exomonad.server.services import Services
from exomonad.teams import Mailbox, register_synthetic
from tests.support.agents import stand_ins


def _as(svc: Services, pid: int | None) -> TestClient:
    """The Unix socket's dashboard as seen by process ``pid`` (None: peer not known)."""
    _, app = dashboard(svc)
    client = ("unix-peer", pid) if pid is not None else ("testclient", 50000)
    return TestClient(app, base_url="http://localhost", client=client)


@pytest.fixture
def me(svc: Services) -> Iterator[TestClient]:
    with _as(svc, os.getpid()) as client:  # the test runner: a person's process
        yield client


def _pending(svc: Services) -> Approval:
    return svc.approvals.create(agent="w1", role="worker", action=MergePR(3), reason="merge #3")


def test_the_unix_socket_dashboard_is_a_persons(svc: Services, me: TestClient) -> None:
    assert me.get("/api/status").json()["teams"][0]["name"] == "proj"
    page = me.get("/")
    assert page.status_code == 200
    assert 'src="static/app.js"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert me.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    approval = _pending(svc)
    with stand_ins() as agents:
        for name, why in (("gemini", "is an agent (gemini)"), ("lead", "is an agent (claude)"),
                          ("token", "runs with EXOMONAD_TOKEN")):  # fmt: skip
            with _as(svc, agents[name].pid) as agent:
                for method, path, body in (
                    ("GET", "/", None), ("GET", "/api/status", None),
                    ("GET", "/api/events", None), ("POST", "/api/open", {}),
                    ("POST", f"/api/approvals/{approval.id}", {"approve": True}),
                    ("POST", "/api/reply", {"team": "proj", "to": "team-lead", "text": "hi"}),
                ):  # fmt: skip
                    answer = agent.request(method, path, json=body)
                    assert answer.status_code == 403, (name, path)
                    assert why in answer.json()["error"]
    with _as(svc, None) as unknown:
        assert unknown.get("/api/status").status_code == 403  # no peer: nobody to trust
    assert svc.approvals.get(approval.id).state == "pending"
    assert Mailbox(svc.paths("proj")).read_raw("team-lead") == []


def test_a_persons_answer_releases_the_waiting_call(svc: Services, me: TestClient) -> None:
    approval = _pending(svc)
    waited: list[Approval] = []
    waiter = threading.Thread(target=lambda: waited.append(svc.approvals.wait(approval.id, 60)))
    waiter.start()
    done = me.post(f"/api/approvals/{approval.id[:4]}", json={"approve": True, "reason": "ok"})
    assert done.status_code == 200, done.text
    waiter.join(60)
    assert waited[0].state == "approved"
    assert waited[0].answered_by == f"{person()} (dashboard)"
    assert waited[0].answer_reason == "ok"
    again = me.post(f"/api/approvals/{approval.id}", json={"approve": False})
    assert (again.status_code, "already approved" in again.json()["error"]) == (409, True)
    assert me.post("/api/approvals/zzzzzzzz", json={"approve": True}).status_code == 404
    other = _pending(svc)
    for bad in ({}, {"approve": "yes"}, {"approve": True, "reason": 3}, [True]):
        assert me.post(f"/api/approvals/{other.id}", json=bad).status_code == 400, bad
    assert svc.approvals.get(other.id).state == "pending"
    denied = me.post(f"/api/approvals/{other.id}", json={"approve": False, "reason": "no"})
    assert denied.json()["state"] == "denied"


def test_a_reply_lands_in_the_members_inbox_from_user(svc: Services, me: TestClient) -> None:
    paths = svc.paths("proj")
    register_synthetic(paths, "w1", pane="%1")
    sent = me.post("/api/reply", json={"team": "proj", "to": "w1", "text": "<b>use v2</b>"})
    assert sent.status_code == 200, sent.text
    [entry] = Mailbox(paths).read_raw("w1")
    assert (entry["from"], entry["text"]) == ("user", "<b>use v2</b>")
    assert sent.json()["message_id"] in (entry.get("msg_id"), entry.get("messageId"))
    refused = {
        "ghost": ({"team": "proj", "to": "ghost", "text": "x"}, 400),  # no phantom inbox
        "user": ({"team": "proj", "to": "user", "text": "x"}, 400),
        "empty": ({"team": "proj", "to": "w1", "text": "  "}, 400),
        "no team": ({"team": "other", "to": "w1", "text": "x"}, 404),
        "not text": ({"team": "proj", "to": "w1", "text": 5}, 400),
        "too long": ({"team": "proj", "to": "w1", "text": "x" * 70_000}, 400),
    }
    for what, (body, code) in refused.items():
        assert me.post("/api/reply", json=body).status_code == code, what
    assert not paths.inbox("ghost").exists()
    assert len(Mailbox(paths).read_raw("w1")) == 1
    paths.inbox("w1").write_bytes(b'[{"from": "team-lead", "te')  # corrupt: left alone
    bad = me.post("/api/reply", json={"team": "proj", "to": "w1", "text": "again"})
    assert bad.status_code == 400
    assert paths.inbox("w1").read_bytes() == b'[{"from": "team-lead", "te'


def test_the_tcp_gate_wants_its_token_and_a_loopback_host(svc: Services, tmp_path: Path) -> None:
    tokens = DashboardTokens()
    token, old = tokens.issue(), tokens.issue()
    gate = TokenGate(security_headers(dashboard_app(svc)), tokens, lambda: 8765)
    lead_token = svc.tokens.lead_path.read_text().strip()
    with TestClient(gate, base_url="http://127.0.0.1:8765") as client:
        assert client.get(f"/{token}/api/status").status_code == 200
        assert client.get(f"/{old}/api/status").status_code == 200  # every token issued
        for prefix in ("", "/nope", f"/{token[:-2]}", f"/{lead_token}", f"/{token}x"):
            for path in ("/", "/static/app.js", "/api/status"):
                answer = client.get(prefix + path, headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == 401, prefix + path
                assert token not in answer.text
        slash = client.get(f"/{token}", follow_redirects=False)
        assert (slash.status_code, slash.headers["location"]) == (307, f"/{token}/")
        for host in ("evil.example", "127.0.0.1:9999", "localhost.evil.example:8765"):
            answer = client.get(f"/{token}/api/status", headers={"Host": host})
            assert answer.status_code == 403, host
        assert client.get(f"/{token}/", headers={"Host": "localhost:8765"}).status_code == 200
        assert client.post(f"/{token}/api/open", json={}).status_code == 404  # Unix only
    gone = DashboardTokens(keep=2)
    first = gone.issue()
    gone.issue(), gone.issue()
    assert not gone.valid(first)  # the oldest beyond `keep` stops working


def test_a_process_that_is_gone_is_nobodys(svc: Services) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    with _as(svc, proc.pid) as ghost:
        answer = ghost.get("/api/status")
    assert answer.status_code == 403
    assert "cannot be read" in answer.json()["error"]


async def test_the_listener_opens_closes_and_reports_a_port_in_use(svc: Services) -> None:
    listener, _ = dashboard(svc)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ExomonadError, match=f"cannot listen on 127.0.0.1:{port}"):
            await listener.open(port)
        assert listener.health() == {"listening": False, "host": "127.0.0.1", "port": None,
                                     "tokens_issued": 0}  # fmt: skip
        first, second = await listener.open(), await listener.open(port)  # open: port kept
    assert first.rsplit("/", 2)[0] == second.rsplit("/", 2)[0] != f"http://127.0.0.1:{port}"
    assert listener.health()["tokens_issued"] == 2
    assert listener.tokens.valid(first.rstrip("/").rsplit("/", 1)[1])
    await listener.close()
    assert listener.health()["listening"] is False
    with pytest.raises(ConnectionRefusedError):  # nobody listens there any more
        socket.create_connection(("127.0.0.1", int(first.split(":")[2].split("/")[0])), 5)
