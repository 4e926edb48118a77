"""The status view (Textual, driven by its pilot) against a real ``exomonad serve``: a
scripted team on disk, a message written by Claude Code's own writer (the Node peer),
markup in it shown as typed, the server killed and started again."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, RichLog, Static

from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic
from exomonad.teams.models import now_iso
from exomonad.teams.protocol import IdleNotification, ShutdownApproved, encode
from exomonad.tui.app import StatusApp
from exomonad.tui.feed import Feed
from exomonad.util.waiting import WaitTimeout
from tests.interop.peers import node_writer
from tests.server.test_server_process import Project, _hook, _start, project
from tests.support.tmux import TmuxServer

__all__ = ["project"]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MARKUP = "[bold red]x[/] [link=https://evil.example]y[/link]"


async def until(pilot: Pilot[None], ok: Callable[[], bool], what: Callable[[], Any],
                 timeout: float = 30.0) -> None:  # fmt: skip
    """Let the app run until ``ok()``; else fail with ``what()``."""
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise WaitTimeout(f"not within {timeout:.0f}s: {what()}")
        await pilot.pause(0.05)


def _timeline(app: StatusApp) -> str:
    return "\n".join(strip.text for strip in app.query_one("#timeline", RichLog).lines)


def _title(app: StatusApp) -> str:
    """The team shown (its name, from the title line)."""
    return str(app.query_one("#title", Static).content).split()[1]


def _health(app: StatusApp) -> str:
    return str(app.query_one("#health", Static).content)


def _presence(app: StatusApp) -> dict[str, tuple[str, str]]:
    """Member → (presence shown, its colour)."""
    table = app.query_one("#members", DataTable)
    rows = (table.get_row_at(i) for i in range(table.row_count))
    return {r[0].plain: (r[3].plain, str(r[3].style)) for r in rows}


def _script_team(p: Project, tmux: TmuxServer) -> Path:
    """w1 (a worker pane: active), idler (sent idle_notification), gone (approved its
    shutdown), as Claude Code's own files say; w1's inbox path."""
    paths = TeamPaths("proj", p.root)
    reader = tmux.reader()
    register_synthetic(paths, "w1", pane=reader.pane)
    box = Mailbox(paths)
    for name, msg in (
        ("idler", IdleNotification(from_="idler", timestamp=now_iso())),
        ("gone", ShutdownApproved(request_id="r1", from_="gone", timestamp=now_iso())),
    ):
        register_synthetic(paths, name)
        box.send("team-lead", sender=name, text=encode(msg))
    return paths.inbox("w1")


async def test_members_messages_markup_and_a_server_restart(
    project: Project, tmux_server: TmuxServer
) -> None:
    inbox = _script_team(project, tmux_server)
    first = project.proc
    try:
        await _drive(project, tmux_server, inbox)
    finally:  # the fixture stops the server it started; this one is ours to stop
        if project.proc is not first and project.proc.poll() is None:
            project.proc.send_signal(signal.SIGTERM)
            project.proc.communicate(timeout=30)


async def _drive(project: Project, tmux_server: TmuxServer, inbox: Path) -> None:
    app = StatusApp(Feed(project.state, retry=0.2), tick=0.2)
    async with app.run_test(size=(160, 50)) as pilot:
        want = {"w1": ("active", "green"), "idler": ("idle", "yellow"),
                "gone": ("terminated", "red")}  # fmt: skip
        await until(pilot, lambda: want.items() <= _presence(app).items(),
                    lambda: _presence(app))  # fmt: skip
        assert _health(app).startswith("● connected")
        assert str(app.query_one("#title", Static).content).startswith(" team proj")
        # Claude Code's write (the real Node writer) → the watcher types it into w1's
        # pane → a message_in event → the timeline, its markup shown as typed.
        assert node_writer(inbox, "team-lead", 1, "2.1.330", prefix=MARKUP).result()[
            "written"] == 1  # fmt: skip
        await until(pilot, lambda: f"team-lead → w1: {MARKUP}#0" in _timeline(app),
                    lambda: _timeline(app))  # fmt: skip
        log = app.query_one("#timeline", RichLog)
        assert not any(seg.style is not None and seg.style.link
                       for strip in log.lines for seg in strip)  # fmt: skip
        await until(pilot, lambda: "delivered" in _timeline(app), lambda: _timeline(app))

        # The server dies: the view says so (no traceback), and keeps the team.
        project.proc.send_signal(signal.SIGKILL)
        project.proc.wait(30)
        await until(pilot, lambda: _health(app).startswith("○ disconnected"),
                    lambda: _health(app))  # fmt: skip
        assert "w1" in _presence(app)
        # Started again: the view reconnects by itself and goes on with the new run.
        project.proc = _start(project.env, tmux_server)
        await until(pilot, lambda: _health(app).startswith("● connected"), lambda: _health(app))
        assert node_writer(inbox, "team-lead", 1, "2.1.330", prefix="after").result()[
            "written"] == 1  # fmt: skip
        await until(pilot, lambda: "team-lead → w1: after#0" in _timeline(app),
                    lambda: _timeline(app))  # fmt: skip
        assert _timeline(app).count(f"{MARKUP}#0") == 1  # the first run's history once

        # A second team (another lead session's): `t` shows it, and then the first again.
        create_team(TeamPaths("other", project.root))
        adopt = {"session_id": "lead-2", "tool_name": "TeamCreate",
                 "tool_input": {"team_name": "other"}}  # fmt: skip
        assert _hook(project, "post-tool-use", adopt, token=None).returncode == 0
        await until(pilot, lambda: sorted(app.model.teams) == ["other", "proj"],
                    lambda: sorted(app.model.teams))  # fmt: skip
        first = _title(app)
        await pilot.press("t")
        second = _title(app)
        assert {first, second} == {"other", "proj"}
        assert ("w1: after#0" in _timeline(app)) == (second == "proj")  # its own timeline
        await pilot.press("t")
        assert _title(app) == first
        await pilot.press("q")
    assert app.return_code == 0
