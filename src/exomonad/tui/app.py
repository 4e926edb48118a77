"""``exomonad status --tui``: the team's status, live, in a terminal (Textual).

Per team: the members (presence in colour, runtime, pane, branch, unread and pending
messages, age of the last event), the pending approvals, a timeline of events (newest at
the bottom), and a line on the server, the policy and the connection. It reads the
server through :class:`~exomonad.tui.feed.Feed` and keeps its state in
:class:`~exomonad.tui.model.StatusModel`; when the server goes away it says so and
picks up again once one answers. Keys: ``t`` the next team, ``q`` quit.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, RichLog, Static

from exomonad.server.events import BaseEvent, Gap
from exomonad.tui import render
from exomonad.tui.feed import Feed
from exomonad.tui.model import HISTORY, StatusModel

__all__ = ["StatusApp"]

_APPROVAL_COLUMNS = ("approval", "agent", "what", "asks", "left", "why")


class StatusApp(App[None]):
    """The status view (see the module doc).

    Parameters
    ----------
    feed:
        Where the server's status and events come from.
    team:
        The team to show first (None: the server's current team).
    tick:
        Seconds between redraws of the ages (and snapshot refreshes, when events
        changed what one counts).
    """

    TITLE = "ExoMonad"
    CSS = """
    #title { height: 1; background: $boost; }
    #members { height: auto; max-height: 45%; }
    #members.stale { text-opacity: 50%; }
    #approvals { height: auto; max-height: 7; }
    #approvals.empty { display: none; }
    #timeline { height: 1fr; border-top: solid $primary-darken-2; }
    #health { height: auto; }
    """
    BINDINGS = [("q", "quit", "quit"), ("t", "next_team", "switch team")]  # noqa: RUF012

    def __init__(self, feed: Feed, *, team: str | None = None, tick: float = 1.0) -> None:
        super().__init__()
        self.feed = feed
        self.model = StatusModel(team)
        self.tick = tick
        self._refreshing = False

    def compose(self) -> ComposeResult:
        """Title, members, approvals, timeline, health line, keys."""
        yield Static(id="title", markup=False)
        yield DataTable(id="members", cursor_type="none", show_cursor=False)
        yield DataTable(id="approvals", cursor_type="none", show_cursor=False, classes="empty")
        yield RichLog(id="timeline", max_lines=HISTORY, wrap=True, markup=False)
        yield Static(id="health", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Columns, the reader, the clock."""
        self.query_one("#members", DataTable).add_columns(*render.MEMBER_COLUMNS)
        self.query_one("#approvals", DataTable).add_columns(*_APPROVAL_COLUMNS)
        self._draw()
        self.run_worker(self._read(), name="feed", exclusive=True)
        self.set_interval(self.tick, self._tick)

    async def _read(self) -> None:
        async for item in self.feed.items():
            self.model.feed(item)
            if isinstance(item, BaseEvent | Gap) and self.model.belongs(item):
                self.query_one("#timeline", RichLog).write(render.line(item), expand=True)
            self._draw()

    async def _tick(self) -> None:
        if self.model.wants_snapshot() and not self._refreshing:
            self._refreshing = True
            try:
                snap = await self.feed.snapshot()
            finally:
                self._refreshing = False
            if snap is not None and snap.run == self.model.run:
                self.model.feed(snap)
        self._draw()

    def action_next_team(self) -> None:
        """Show the next team (its members and timeline)."""
        self.model.next_team()
        log = self.query_one("#timeline", RichLog)
        log.clear()
        for item in self.model.entries():
            log.write(render.line(item), expand=True)
        self._draw()

    def _draw(self) -> None:
        """Redraw everything but the timeline from the model."""
        now = time.time()
        team = self.model.shown()
        names = sorted(self.model.teams)
        if team is None:
            title = Text("no team yet: the lead has not created or joined one", style="dim")
        else:
            title = Text(f" team {render.plain(team.name, 80)}", style="bold")
            title.append(f"  ({names.index(team.name) + 1}/{len(names)}, t: next)", style="dim")
            if team.error:
                title.append(f"  {render.plain(team.error, 200)}", style="bold red")
        self.query_one("#title", Static).update(title)
        members = self.query_one("#members", DataTable)
        members.set_class(not self.model.connected, "stale")
        members.clear()
        for m in team.members.values() if team is not None else ():
            members.add_row(*render.member_cells(m, now), key=m.name)
        approvals = self.query_one("#approvals", DataTable)
        approvals.clear()
        for p in self.model.approvals.values():
            approvals.add_row(*render.approval_cells(p, now), key=p.id)
        approvals.set_class(not self.model.approvals, "empty")
        self.query_one("#health", Static).update(render.health(self.model))
