"""The status view's cells and lines, as ``rich.text.Text``: never parsed as markup.

Text from agents (messages, reasons, names) goes into :class:`~rich.text.Text` as plain
text, so ``[bold red]x[/]`` or ``[link=...]`` in a message shows as typed, and passes
through :func:`~exomonad.panes.sanitize.sanitize` first, so no escape sequence in it
reaches the terminal.

>>> line(Gap(missed=3, after=7)).plain
'… 3 events missed after #7 (the members are read again)'
>>> age(75.0), age(None)
('1m', '-')
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text

from exomonad.panes.sanitize import sanitize
from exomonad.policy.decisions import DecisionLabel
from exomonad.server.events import (
    BaseEvent,
    Delivery,
    DeliveryFailed,
    EscalationAnswered,
    EscalationOpened,
    Gap,
    MessageIn,
    MessageOut,
    PolicyDecision,
    PresenceChanged,
    TaskChanged,
)
from exomonad.tui.model import Member, Pending, StatusModel
from exomonad.util.display import PRESENCE_COLOURS, age, shown

__all__ = ["MEMBER_COLUMNS", "PRESENCE", "age", "approval_cells", "health", "line",
           "member_cells", "plain"]  # fmt: skip

#: Presence → its colour.
PRESENCE = PRESENCE_COLOURS
MEMBER_COLUMNS = ("member", "kind", "runtime", "presence", "pane", "branch", "unread",
                  "pending", "last event", "pull request")  # fmt: skip
#: Longest message text shown in one timeline line.
SHOWN = 400
_DECISION: dict[DecisionLabel, str] = {"allow": "green", "deny": "red", "tl": "yellow",
                                        "human": "magenta"}  # fmt: skip


def plain(value: Any, limit: int = SHOWN) -> str:
    """``value`` as one line of printable text, cut at ``limit`` characters."""
    text = sanitize(str(value), keep_newlines=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def member_cells(m: Member, now: float) -> tuple[Text, ...]:
    """One members-table row (:data:`MEMBER_COLUMNS`)."""
    state = m.presence or "-"
    cells = (m.name, m.kind, m.runtime or "-")
    rest = (m.pane or "-", m.branch or "-", str(m.unread), str(m.pending),
            age(None if m.last_event is None else now - m.last_event),
            m.pull_request or "-")  # fmt: skip
    return (*(Text(plain(c, 60)) for c in cells),
            Text(state, style=PRESENCE.get(state, "grey50")),
            *(Text(plain(c, 60)) for c in rest))  # fmt: skip


def approval_cells(p: Pending, now: float) -> tuple[Text, ...]:
    """One pending-approvals row: id, agent, what, asks whom, time left, why. A person
    approves from it, so every control, bidi override, zero-width character or blank
    that is not a space shows as an escape (:func:`~exomonad.util.display.shown`), as in
    ``exomonad status`` and the dashboard: :func:`plain` keeps those for the timeline."""
    left = "-" if p.deadline is None else age(p.deadline - now)
    return tuple(shown(c) for c in (p.id, p.agent, p.what, p.addressee, left, p.reason))


def line(item: BaseEvent | Gap) -> Text:
    """One timeline line for an event or a gap."""
    if isinstance(item, Gap):
        return Text(f"… {item.missed} events missed after #{item.after} "
                    "(the members are read again)", style="bold red")  # fmt: skip
    out = Text(time.strftime("%H:%M:%S ", time.localtime(item.ts)), style="dim")
    label, style, body = _describe(item)
    out.append(f"{label:<9} ", style=style)
    out.append(plain(body))
    return out


def _describe(e: BaseEvent) -> tuple[str, str, str]:
    """(label, its style, the rest of the line) of event ``e``."""
    if isinstance(e, MessageIn | MessageOut):
        what = f"<{e.protocol}> {e.summary or ''}" if e.protocol else e.text
        extra = " (cut)" if e.truncated else ""
        if isinstance(e, MessageOut) and e.via == "pane":
            extra += " (typed into its pane)"
        label = "to pane" if isinstance(e, MessageIn) else "message"
        return label, "cyan", f"{e.sender} → {e.to}: {what}{extra}"
    if isinstance(e, Delivery):
        n = len(e.message_ids)
        dup = f", {e.possible_duplicates} possibly twice" if e.possible_duplicates else ""
        return "delivered", "blue", f"{n} message(s) to {e.member} ({e.pane or 'no pane'}){dup}"
    if isinstance(e, DeliveryFailed):
        return "failed", "bold red", f"{e.member}: {e.reason} ({e.pending} waiting)"
    if isinstance(e, PresenceChanged):
        was = f" (was {e.previous})" if e.previous else ""
        return "presence", PRESENCE[e.state], f"{e.member} {e.state}{was} [{e.source}]"
    if isinstance(e, PolicyDecision):
        why = f": {e.reason}" if e.reason else ""
        return "policy", _DECISION[e.decision], f"{e.agent} {e.tool} → {e.decision}{why}"
    if isinstance(e, EscalationOpened):
        return (
            "ask",
            "magenta",
            f"{e.approval_id}: {e.agent} {e.tool} asks {e.addressee}: {e.reason}",
        )
    if isinstance(e, EscalationAnswered):
        by = f" by {e.by}" if e.by else ""
        return "answered", _DECISION[e.decision], f"{e.approval_id}: {e.state}{by} ({e.agent})"
    if isinstance(e, TaskChanged):
        subject = e.task.get("subject", "")
        return "task", "white", f"#{e.task.get('id', '?')} {e.action} by {e.by}: {subject}"
    return e.kind, "white", e.model_dump_json()


def health(model: StatusModel) -> Text:
    """The one-line server / policy / connection summary."""
    if not model.connected:
        return Text(f"○ disconnected: {plain(model.problem or '?')} (retrying; the rest "
                    "is as last seen)", style="bold red")  # fmt: skip
    out = Text("● connected", style="bold green")
    srv = model.server
    out.append(f" · server pid {srv.get('pid', '?')}, up {age(srv.get('uptime'))}")
    counters = srv.get("counters") or {}
    trouble = [f"{counters[k]} {what}" for k, what in (("pending", "waiting"),
               ("failed", "failed passes")) if counters.get(k)]  # fmt: skip
    if trouble:
        out.append(f" ({', '.join(trouble)})", style="yellow")
    pol = model.policy
    out.append(f" · policy {plain(pol.get('policy_id') or 'default', 12)}")
    if pol.get("error"):
        out.append(f" (reload failed: {plain(pol['error'], 120)})", style="bold red")
    n = len(model.approvals)
    out.append(f" · approvals {n}", style="bold magenta" if n else "")
    out.append(f" · event #{model.seq}", style="dim")
    return out
