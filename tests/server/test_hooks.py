"""Hook answers, per event and runtime."""

from __future__ import annotations

from pathlib import Path

from exomonad.server.hooks import TEAM_CREATE_CONTEXT, handle_hook
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.teams import TeamPaths, create_team, get_dialect, load_config, register_synthetic
from exomonad.teams.protocol import IdleNotification, decode


def _worker(svc: Services) -> Identity:
    register_synthetic(svc.paths("proj"), "gemini-1")
    return Identity(name="gemini-1", role="worker", team="proj", parent="team-lead")


def test_session_start_asks_a_2_1_112_lead_to_create_a_team(svc: Services, lead: Identity) -> None:
    answer = handle_hook(svc, lead, "session-start", "claude", {"session_id": "s1"})
    ctx = answer.output["hookSpecificOutput"]
    assert ctx == {"hookEventName": "SessionStart", "additionalContext": TEAM_CREATE_CONTEXT}
    session = svc.registry.session("s1")
    assert session is not None
    assert (session.name, session.role) == ("team-lead", "tl")


def test_session_start_adopts_a_session_team(svc: Services, lead: Identity, tmp_path: Path) -> None:
    svc.dialect = get_dialect("2.1.330")
    create_team(TeamPaths("session-0123abcd", svc.root))
    answer = handle_hook(svc, lead, "session-start", "claude", {"session_id": "0123abcd-ffff"})
    assert answer.output == {}
    assert svc.registry.current == "session-0123abcd"


def test_workers_get_no_team_context(svc: Services) -> None:
    answer = handle_hook(svc, _worker(svc), "session-start", "gemini", {"session_id": "w1"})
    assert answer.output == {}


def test_team_create_and_delete_track_the_current_team(svc: Services, lead: Identity) -> None:
    handle_hook(svc, lead, "post-tool-use", "claude",
                {"session_id": "s", "tool_name": "TeamCreate",
                 "tool_input": {"team_name": "alpha"}})  # fmt: skip
    assert svc.registry.current == "alpha"
    handle_hook(svc, lead, "post-tool-use", "claude",
                {"session_id": "s", "tool_name": "TeamDelete", "tool_input": {}})  # fmt: skip
    assert svc.registry.current is None


def test_team_delete_first_removes_our_members(svc: Services, lead: Identity) -> None:
    _worker(svc)
    handle_hook(svc, lead, "pre-tool-use", "claude",
                {"session_id": "s", "tool_name": "TeamDelete", "tool_input": {}})  # fmt: skip
    names = [m.name for m in load_config(svc.paths("proj")).members]
    assert names == ["team-lead"]


def test_idle_notification_once_per_transition(svc: Services) -> None:
    who = _worker(svc)
    p = {"session_id": "w1"}
    for event in ("session-start", "after-agent", "after-agent", "after-agent"):
        handle_hook(svc, who, event, "gemini", p)
    inbox = svc.mailbox("proj").read_raw("team-lead")
    assert len(inbox) == 1
    msg = decode(inbox[0]["text"])
    assert isinstance(msg, IdleNotification)
    assert (msg.from_, msg.idle_reason) == ("gemini-1", "available")
    handle_hook(svc, who, "before-agent", "gemini", p)  # active again
    handle_hook(svc, who, "after-agent", "gemini", p)
    assert len(svc.mailbox("proj").read_raw("team-lead")) == 2


def test_unknown_events_answer_empty(svc: Services, lead: Identity) -> None:
    answer = handle_hook(svc, lead, "pre-compress", "gemini", {})
    assert answer.output == {}
    assert "no handler" in answer.stderr
