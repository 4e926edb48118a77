"""The lead's session team, its restarts, and the pane fallback for a non-polling lead."""

from __future__ import annotations

import asyncio
import time

from exomonad.bridge.delivery import Deliverer
from exomonad.panes import FakePaneBackend
from exomonad.panes.spool import recipient_dir
from exomonad.server.hooks import handle_hook
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.teams import TeamPaths, create_team, get_dialect, load_config, register_synthetic


def _names(svc: Services, team: str) -> list[str]:
    return [m.name for m in load_config(svc.paths(team)).members if m.synthetic]


async def test_session_team_found_by_lead_session_id(svc: Services, lead: Identity) -> None:
    svc.dialect = get_dialect("2.1.330")
    sid = "5e55104a-1111-2222-3333-444455556666"
    # SessionStart runs before Claude Code has written the session team.
    handle_hook(svc, lead, "session-start", "claude", {"session_id": sid, "_pane": "%3"})
    assert svc.registry.current == "proj"
    ready = asyncio.Event()
    task = asyncio.create_task(svc.watcher.run(ready))
    await ready.wait()
    try:
        create_team(TeamPaths("session-5e55104a", svc.root), lead_session_id=sid)
        deadline = time.monotonic() + 10
        while svc.registry.current != "session-5e55104a":
            assert time.monotonic() < deadline, "session team never adopted"
            await asyncio.sleep(0.01)
    finally:
        svc.watcher.request_stop()
        await task
    session = svc.registry.session(sid)
    assert session is not None
    assert (session.team, session.pane) == ("session-5e55104a", "%3")


def test_lead_restart_moves_workers(svc: Services, lead: Identity) -> None:
    register_synthetic(svc.paths("proj"), "gemini-1", pane="%7")
    create_team(TeamPaths("session-bbbbbbbb", svc.root), lead_session_id="bbbbbbbb-x")
    handle_hook(svc, lead, "session-start", "claude", {"session_id": "bbbbbbbb-x"})
    assert svc.registry.current == "session-bbbbbbbb"
    assert _names(svc, "proj") == []
    moved = load_config(svc.paths("session-bbbbbbbb")).member("gemini-1")
    assert moved is not None
    assert (moved.model_extra or {})["exomonadPane"] == "%7"


def test_lead_restart_can_remove_workers(svc: Services, lead: Identity) -> None:
    svc.config.lead.follow = "remove"
    register_synthetic(svc.paths("proj"), "gemini-1")
    create_team(TeamPaths("session-cccccccc", svc.root), lead_session_id="cccccccc-x")
    handle_hook(svc, lead, "session-start", "claude", {"session_id": "cccccccc-x"})
    assert _names(svc, "proj") == []
    assert _names(svc, "session-cccccccc") == []


def test_unread_message_is_typed_into_the_leads_pane(svc: Services, fake: FakePaneBackend,
                                                     lead: Identity) -> None:  # fmt: skip
    svc.dialect = get_dialect("2.1.330")
    fake.add_pane("%5")
    handle_hook(svc, lead, "session-start", "claude", {"session_id": "dddddddd-x", "_pane": "%5"})
    svc.lead.adopt("dddddddd-x", "proj")
    register_synthetic(svc.paths("proj"), "gemini-1")
    mb = svc.mailbox("proj")
    mid = mb.send("team-lead", sender="gemini-1", text="[from: gemini-1] success: done")
    svc.lead._fallback("proj", "team-lead", mid, "[from: gemini-1] success: done")
    assert fake.submitted("%5") == ["[from: gemini-1] success: done"]
    assert mb.read_raw("team-lead") == []  # pruned: a poller starting later won't repeat it
    # Already read (the lead polled it): nothing is typed.
    mid2 = mb.send("team-lead", sender="gemini-1", text="second")
    mb.mark_read("team-lead", [mid2])
    svc.lead._fallback("proj", "team-lead", mid2, "second")
    assert fake.submitted("%5") == ["[from: gemini-1] success: done"]


def test_a_lead_that_quit_gets_nothing_typed_into_its_old_pane(
    svc: Services, fake: FakePaneBackend, lead: Identity
) -> None:
    """Claude Code's SessionEnd: the lead exited, and its pane is a shell now, where a
    worker's report typed by the fallback would run as a command line."""
    svc.dialect = get_dialect("2.1.330")
    fake.add_pane("%5")
    handle_hook(svc, lead, "session-start", "claude", {"session_id": "eeeeeeee-x", "_pane": "%5"})
    svc.lead.adopt("eeeeeeee-x", "proj")
    handle_hook(svc, lead, "session-end", "claude", {"session_id": "eeeeeeee-x", "_pane": "%5"})
    register_synthetic(svc.paths("proj"), "gemini-1")
    mid = svc.mailbox("proj").send("team-lead", sender="gemini-1", text="x; rm -rf ~")
    svc.lead._fallback("proj", "team-lead", mid, "x; rm -rf ~")
    assert fake.submitted("%5") == []
    assert len(svc.mailbox("proj").read_raw("team-lead")) == 1  # kept for the next lead


def test_a_moved_workers_long_messages_are_spooled_where_it_may_read_them(
    svc: Services, lead: Identity, fake: FakePaneBackend
) -> None:
    """A worker moved to the restarted lead's team keeps its token's team, the one whose
    spool directory the policy lets it read: its long messages go there."""
    svc.tokens.issue(Identity(name="gemini-1", role="worker", team="proj"))
    pane = fake.add_pane()
    register_synthetic(svc.paths("proj"), "gemini-1", pane=pane)
    create_team(TeamPaths("session-bbbbbbbb", svc.root), lead_session_id="bbbbbbbb-x")
    handle_hook(svc, lead, "session-start", "claude", {"session_id": "bbbbbbbb-x"})
    new = svc.mailbox("session-bbbbbbbb")
    new.send("gemini-1", sender="team-lead", text="a task\nin two lines")
    assert svc.spool_box("session-bbbbbbbb", "gemini-1") == ("proj", "gemini-1")
    assert svc.spool_box("session-bbbbbbbb", "someone") == ("session-bbbbbbbb", "someone")
    Deliverer(new, svc.ledger, fake, spool_box=svc.spool_box).run_pass("gemini-1", pane)
    (receipt,) = fake.deliveries(pane)
    assert receipt.spool_path is not None
    assert receipt.spool_path.parent == recipient_dir(fake.spool.directory, "proj", "gemini-1")
