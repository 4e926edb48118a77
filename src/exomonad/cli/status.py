"""``exomonad status [--json] [--watch]``: is the server up, and what is the team doing.

With the server up and the lead's token readable (a person's terminal, the lead's own
processes), it shows ``GET /status``: per team its members (kind and runtime, presence,
pane, worktree and branch, unread and pending messages, last event), tasks and the
``user`` inbox; pending approvals; the services and the policy (its error if the last
reload failed). Anyone else (a worker's shell) gets what ``/health`` says. ``--watch``
redraws on every event of ``GET /events`` (and every few seconds, for the ages);
``--tui`` is the full-screen live view (:mod:`exomonad.tui`), which also rides out a
server restart.
The workers' worktrees are listed either way. No server: a message and exit 1.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Annotated, Any

import orjson
import typer
from rich.console import Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from exomonad.cli.common import (
    JsonOpt,
    StateDirOpt,
    console,
    emit,
    err_console,
    handle_errors,
    state_of,
    whole_table,
)
from exomonad.client import ServerClient, ServerNotRunningError
from exomonad.errors import ExomonadError
from exomonad.util.display import PRESENCE_COLOURS, age, shown

__all__ = ["register", "render", "snapshot", "status", "watch"]

#: Seconds between redraws without events (ages move on).
AGE_REFRESH = 5.0
#: Least seconds between two redraws (a burst of events is one redraw).
MIN_REDRAW = 0.25

_STATE = {"running": "green", "failed": "bold red", "stopped": "red"}


def snapshot(client: ServerClient, worktrees: list[dict[str, Any]]) -> dict[str, Any]:
    """``/status`` (``/health`` with ``status_error`` when it is refused), with the
    health fields at the top level as before, and the worktrees."""
    status, doc = client.request("GET", "/status")
    if status == 200 and isinstance(doc, dict):
        server = doc.pop("server")
        return {**server, **doc, "running": True, "worktrees": worktrees}
    error = doc.get("error") if isinstance(doc, dict) else doc
    return {**client.health(), "running": True, "status_error": str(error),
            "worktrees": worktrees}  # fmt: skip


def _header(doc: dict[str, Any]) -> RenderableType:
    policy = doc.get("policy") or {}
    out = Text.assemble(
        f"server pid {doc['pid']} v{doc['version']}, up {age(doc['uptime'])}; team ",
        shown(doc.get("team") or "-"),
        f"; policy {policy.get('version') or '-'} (",
        shown(str(policy.get("policy_id") or "")[:12]),
        ")",
    )
    if policy.get("error"):
        out.append("\npolicy reload failed: ", style="bold red")
        out.append(shown(policy["error"]))
    services = [
        Text.assemble(
            f"{name} ",
            (str(s["state"]), _STATE.get(s["state"], "yellow")),
            *((": ", shown(s["error"])) if s.get("error") else ()),
        )
        for name, s in (doc.get("services") or {}).items()
    ]
    if services:
        out.append("\nservices: ")
        out.append(Text(", ").join(services))
    return out


def _members(team: dict[str, Any]) -> Table:
    title = shown(f"team {team['name']}" + (" (current)" if team.get("current") else ""))
    table = Table(title=title, title_justify="left")
    for col in ("member", "agent", "presence", "pane", "branch", "unread", "pending", "last",
                "pull request"):  # fmt: skip
        table.add_column(col, justify="right" if col in ("unread", "pending") else "left")
    for m in team.get("members", []):
        colour = PRESENCE_COLOURS.get(m["presence"], "white")
        pr = (m.get("pullRequest") or {}).get("summary") or "-"
        table.add_row(shown(m["name"]), shown(f"{m['runtime']} ({m['kind']})"),
                      shown(str(m["presence"]).upper(), style=colour),
                      shown(m.get("pane") or "-"), shown(m.get("branch") or "-"),
                      str(m["unread"]), str(m["pending"]), age(m.get("lastEventAge")),
                      shown(pr))  # fmt: skip
    return table


def _approvals(approvals: list[dict[str, Any]]) -> Table:
    table = whole_table("id", "agent", "for", "reason", "waiting", title="pending approvals",
                        title_justify="left")  # fmt: skip
    now = time.time()
    for a in approvals:
        table.add_row(shown(a["id"]), shown(a["agent"]), shown(a.get("addressee") or "human"),
                      shown(a["reason"]), age(now - a["created_at"]))  # fmt: skip
    return table


def render(doc: dict[str, Any]) -> RenderableType:
    """The human view of a :func:`snapshot`."""
    parts: list[RenderableType] = [_header(doc)]
    if "status_error" in doc:
        parts.append(shown(f"no team view: {doc['status_error']}", style="yellow"))
    for team in doc.get("teams", []):
        if "error" in team:
            parts.append(shown(f"team {team['name']}: {team['error']}", style="red"))
            continue
        parts.append(_members(team))
        tasks = team.get("tasks", [])
        if tasks:
            open_ = [t for t in tasks if t["status"] != "completed"]
            parts.append(Text(f"tasks: {len(tasks)} ({len(open_)} open)"))
        for entry in team.get("user_inbox", [])[-5:]:
            parts.append(shown(f"to you from {entry['from']}: {str(entry['text'])[:200]}"))
    if doc.get("approvals"):
        parts.append(_approvals(doc["approvals"]))
    kept = [w for w in doc.get("worktrees", []) if not w.get("removable", True)]
    parts.append(Text(f"{len(doc.get('worktrees', []))} worker worktree(s)"
                      + (f", {len(kept)} kept with work in them" if kept else "")))  # fmt: skip
    return Group(*parts)


def _follow(client: ServerClient, dirty: threading.Event, ended: list[str]) -> None:
    """Read ``/events`` in a thread: every event marks the view dirty."""
    try:
        with client.events() as stream:
            for _ in stream:
                dirty.set()
        ended.append("the server closed the event stream (stopped)")
    except ExomonadError as exc:
        ended.append(str(exc))
    finally:
        dirty.set()


def watch(client: ServerClient, worktrees: list[dict[str, Any]], as_json: bool) -> None:
    """Redraw (or, with ``as_json``, print a JSON line) on events, until interrupted or
    the server stops (then exit 1)."""
    dirty, ended = threading.Event(), list[str]()
    threading.Thread(target=_follow, args=(client, dirty, ended), daemon=True).start()
    live = None if as_json else Live(console=console, auto_refresh=False)
    try:
        if live is not None:
            live.start()
        while not ended:
            doc = snapshot(client, worktrees)
            if live is not None:
                live.update(render(doc), refresh=True)
            else:
                sys.stdout.write(orjson.dumps(doc).decode() + "\n")
                sys.stdout.flush()
            dirty.wait(AGE_REFRESH)
            dirty.clear()
            time.sleep(MIN_REDRAW)  # a burst of events settles into one redraw
    except KeyboardInterrupt:
        return
    finally:
        if live is not None:
            live.stop()
    err_console.print(shown(ended[0], style="red"))
    raise typer.Exit(1)


@handle_errors
def status(
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
    follow: Annotated[bool, typer.Option("--watch", help="Redraw on every event.")] = False,
    tui: Annotated[
        bool, typer.Option("--tui", help="The live status view (t: next team, q: quit).")
    ] = False,
    team: Annotated[str | None, typer.Option(help="--tui: the team shown first.")] = None,
) -> None:
    """The server and the team: members and their presence, tasks, pending approvals,
    services and policy; the workers' worktrees. Exit 1 when no server runs (except
    --tui, which waits for one)."""
    from exomonad.lifecycle import worktrees_of

    state = state_of(state_dir)
    if tui:
        from exomonad.tui.app import StatusApp
        from exomonad.tui.feed import Feed

        StatusApp(Feed(state), team=team).run()
        return
    worktrees = [w.to_json() for w in worktrees_of(state).list()]
    client = ServerClient.as_lead(state, timeout=60)
    try:
        client.info()
    except ServerNotRunningError:
        note = f"no server running; {len(worktrees)} worker worktree(s)"
        emit({"running": False, "worktrees": worktrees}, as_json, lambda: console.print(note))
        raise typer.Exit(1) from None
    doc = snapshot(client, worktrees)
    if follow and "status_error" in doc:
        raise ExomonadError(f"--watch needs the lead's token: {doc['status_error']}")
    if follow:
        watch(client, worktrees, as_json)
        return
    emit(doc, as_json, lambda: console.print(render(doc)))


def register(app: typer.Typer) -> None:
    """Add ``status`` to the top-level app."""
    app.command("status")(status)
