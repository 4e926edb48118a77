"""The status view's model and its text: a real ``/status`` document (the server's own
``snapshot.status``), then canned events built from the bus's own event classes."""

from __future__ import annotations

from typing import Any

from exomonad.server.events import (
    EscalationAnswered,
    EscalationOpened,
    Gap,
    MessageIn,
    MessageOut,
    PolicyDecision,
    PresenceChanged,
)
from exomonad.server.services import Services
from exomonad.server.snapshot import status
from exomonad.server.workers import provision
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.tui import render
from exomonad.tui.model import Down, Member, Pending, Snapshot, StatusModel, Team
from exomonad.util.display import visible

NOW = 1_000_000.0


def _project(svc: Services) -> dict[str, Any]:
    """Two teams, a worker in each, one pending approval; the server's /status of it."""
    provision(svc, "gemini-1", "proj", runtime="gemini")
    register_synthetic(svc.paths("proj"), "gemini-1", agent_type="gemini", pane="%9")
    create_team(TeamPaths("other", svc.root))
    provision(svc, "codex-1", "other")
    register_synthetic(svc.paths("other"), "codex-1", agent_type="codex", pane="%4")
    svc.approvals.create(agent="gemini-1", role="worker", reason="push to main",
                         action={"type": "GitPush", "branch": "main"})  # fmt: skip
    return status(svc)


def _shown(model: StatusModel) -> Team:
    team = model.shown()
    assert team is not None
    return team


def _presence(seq: int, member: str, state: Any, team: str = "proj") -> PresenceChanged:
    return PresenceChanged(seq=seq, ts=NOW + seq, team=team, member=member, state=state,
                           source="hook")  # fmt: skip


def test_snapshot_then_newer_events_update_members_older_ones_only_the_timeline(
    svc: Services,
) -> None:
    doc = _project(svc)
    s = doc["seq"]
    now = [NOW]
    model = StatusModel(refresh=5.0, clock=lambda: now[0])
    model.feed(Snapshot(doc, run=1))
    team = model.shown()
    assert team is not None
    assert team.name == "proj"
    w = team.members["gemini-1"]
    assert (w.kind, w.runtime, w.presence, w.pane, w.branch) == (
        "synthetic", "gemini", "active", "%9", "exo/gemini-1")  # fmt: skip
    assert "team-lead" in team.members
    [pending] = model.approvals.values()
    assert (pending.agent, pending.what, pending.addressee) == ("gemini-1", "GitPush", "human")
    # An event the snapshot already holds (history): the timeline only.
    model.feed(_presence(s, "gemini-1", "terminated"))
    assert w.presence == "active"
    # Newer: the member changes; the same event again (a reconnect's replay) is dropped.
    model.feed(_presence(s + 1, "gemini-1", "idle"))
    model.feed(_presence(s + 1, "gemini-1", "terminated"))
    assert (w.presence, w.last_event) == ("idle", NOW + s + 1)
    assert [e.seq for e in model.entries() if not isinstance(e, Gap)] == [s, s + 1]
    assert model.seq == s + 1
    # Policy decisions touch the agent's last event, and ask for no new snapshot.
    model.feed(PolicyDecision(seq=s + 2, ts=NOW + 50, team="proj", agent="gemini-1",
                              role="worker", runtime="gemini", tool="Bash",
                              decision="allow"))  # fmt: skip
    assert w.last_event == NOW + 50
    assert not model.wants_snapshot()
    # A message does (unread counts live in the snapshot).
    model.feed(MessageOut(seq=s + 3, ts=NOW + 60, team="proj", sender="gemini-1",
                          to="team-lead", message_id="m1", text="done"))  # fmt: skip
    assert model.wants_snapshot()
    assert w.last_event == NOW + 60
    # An older snapshot arriving after newer events: the newer events are applied again.
    model.feed(Snapshot(doc, run=1))
    assert _shown(model).members["gemini-1"].presence == "idle"
    assert not model.wants_snapshot()
    now[0] += 5  # files no event speaks of (a Claude teammate's inbox write): read again
    assert model.wants_snapshot()
    # An event of a team the snapshot did not have asks for one at once.
    model.feed(Snapshot(doc, run=1))
    model.feed(_presence(s + 4, "w9", "active", team="new-team"))
    assert model.wants_snapshot()


def test_approvals_come_and_go_with_escalation_events(svc: Services) -> None:
    doc = _project(svc)
    s = doc["seq"]
    model = StatusModel(clock=lambda: NOW)
    model.feed(Snapshot(doc, run=1))
    [old] = model.approvals
    model.feed(EscalationOpened(seq=s + 1, ts=NOW, team="proj", approval_id="a2",
                                agent="gemini-1", tool="Bash", addressee="team-lead",
                                reason="rm -rf", deadline=NOW + 30))  # fmt: skip
    assert sorted(model.approvals) == sorted([old, "a2"])
    assert render.approval_cells(model.approvals["a2"], NOW)[4].plain == "30s"
    for seq, aid in ((s + 2, old), (s + 3, "a2")):
        model.feed(EscalationAnswered(seq=seq, ts=NOW, team="proj", approval_id=aid,
                                      agent="gemini-1", state="denied", by="alice",
                                      decision="deny"))  # fmt: skip
    assert model.approvals == {}


def test_teams_switch_and_each_has_its_own_timeline(svc: Services) -> None:
    doc = _project(svc)
    s = doc["seq"]
    model = StatusModel(clock=lambda: NOW)
    model.feed(Snapshot(doc, run=1))
    model.feed(_presence(s + 1, "gemini-1", "idle"))
    model.feed(_presence(s + 2, "codex-1", "idle", team="other"))
    model.feed(Gap(missed=4, after=s + 2))
    assert _shown(model).members["gemini-1"].presence == "idle"
    assert [getattr(e, "member", "gap") for e in model.entries()] == ["gemini-1", "gap"]
    assert model.wants_snapshot()  # what the gap lost is in the next snapshot
    assert model.next_team() == "other"
    assert sorted(_shown(model).members) == ["codex-1", "team-lead"]
    assert _shown(model).members["codex-1"].presence == "idle"
    assert [getattr(e, "member", "gap") for e in model.entries()] == ["codex-1", "gap"]
    assert model.next_team() == "proj"  # wraps
    asked = StatusModel("other", clock=lambda: NOW)  # --team
    asked.feed(Snapshot(doc, run=1))
    assert asked.team == "other"


def test_down_then_a_new_server_run_starts_the_sequence_again(svc: Services) -> None:
    doc = _project(svc)
    model = StatusModel(clock=lambda: NOW)
    model.feed(Snapshot(doc, run=1))
    model.feed(_presence(doc["seq"] + 1, "gemini-1", "idle"))
    model.feed(Down("no ExoMonad server runs for /p"))
    assert not model.connected
    assert not model.wants_snapshot()
    assert render.health(model).plain.startswith(
        "○ disconnected: no ExoMonad server runs for /p (retrying"
    )
    fresh = {**doc, "seq": 0}
    model.feed(Snapshot(fresh, run=2))  # ids restart at 1 in a new server process
    assert model.connected
    model.feed(_presence(1, "gemini-1", "terminated"))
    assert _shown(model).members["gemini-1"].presence == "terminated"
    assert render.health(model).plain.startswith("● connected · server pid ")


def test_message_text_is_shown_literally_never_as_markup_or_escapes() -> None:
    text = "[bold red]x[/] [link=https://evil.example]y[/link] \x1b[31mz\x1b]0;t\x07 $(id)"
    line = render.line(MessageIn(seq=1, ts=NOW, team="proj", sender="team-lead",
                                 to="gemini-1", message_id="m", text=text))  # fmt: skip
    assert line.plain.endswith(
        "team-lead → gemini-1: [bold red]x[/] [link=https://evil.example]y[/link] z $(id)"
    )
    styles = {str(span.style) for span in line.spans}
    assert not any("link" in s or "bold red" in s for s in styles), styles
    idle = MessageOut(seq=2, ts=NOW, team="proj", sender="gemini-1", to="team-lead",
                      message_id="m2", text="{...}", protocol="idle_notification",
                      summary="[b]idle[/b]")  # fmt: skip
    protocol = render.line(idle)
    assert protocol.plain.endswith("gemini-1 → team-lead: <idle_notification> [b]idle[/b]")


def test_presence_colours_and_ages() -> None:
    cells = {state: render.member_cells(Member("w", presence=state, last_event=NOW - 125), NOW)
             for state in ("active", "idle", "terminated", None)}  # fmt: skip
    assert {s: str(c[3].style) for s, c in cells.items()} == {
        "active": "green", "idle": "yellow", "terminated": "red", None: "grey50"}  # fmt: skip
    assert cells["idle"][-2].plain == "2m"
    assert cells["idle"][-1].plain == "-"  # no pull request watched
    with_pr = Member("w", pull_request="#7 open, approved, checks 1/1 ok")
    assert render.member_cells(with_pr, NOW)[-1].plain == "#7 open, approved, checks 1/1 ok"
    assert [render.age(x) for x in (0, 59, 3600, 90000)] == ["0s", "59s", "1h", "1d"]


def test_an_approval_shows_what_would_hide_as_escapes() -> None:
    """The approvals table is read by a person about to approve: controls, bidi
    overrides, zero-width characters and blanks that are not spaces show as escapes
    (``util.display.visible``), not only the escape sequences the timeline drops."""
    hidden = "rm x\x1b[23Dls \u202eok\u200b\u3164[red]y[/red]"
    p = Pending("a1", "w\u2800", hidden, "human", f"because {hidden}", NOW + 30)
    cells = [c.plain for c in render.approval_cells(p, NOW)]
    assert cells == ["a1", "w\\u2800", visible(hidden), "human", "30s",
                     f"because {visible(hidden)}"]  # fmt: skip
    for part in ("\\x1b[23D", "\\u202e", "\\u3164", "[red]y[/red]"):
        assert part in cells[2]
