"""The lead relay: a headless lead (``claude -p --input-format stream-json``) never reads
its inbox, so the relay feeds it each new inbox entry as a stream-json user turn.

``exomonad relay --team T -- claude -p --input-format stream-json ...`` runs the lead as a
child process. New entries of the lead's inbox are written to the child's stdin through
:class:`~exomonad.panes.stdin.StdinBackend` (the lead's target id is its pid), each
exactly once (through the same ledger as pane delivery), rendered as Claude Code renders
teammate messages (``<teammate-message teammate_id=... summary=...>``). Lines on the
relay's own stdin are passed on unchanged (its end does not end the lead: inbox turns
keep coming), and the child's stdout is the relay's stdout. SIGTERM / SIGINT to the relay
are passed to the lead; the relay exits with the lead's exit code.
Marking entries read rewrites the inbox and wakes the watcher, but the ledger already
knows them: no relay loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.errors import PaneError
from exomonad.panes.stdin import StdinBackend, user_turn
from exomonad.state import adopt_lock_journal
from exomonad.teams import Dialect
from exomonad.teams.models import TeamConfig

__all__ = ["render_teammate_message", "run_relay", "user_turn"]


def render_teammate_message(entry: dict[str, Any]) -> str:
    """An inbox entry the way Claude Code shows it to its model.

    >>> render_teammate_message({"from": "gemini-1", "text": "done", "summary": "s"})
    '<teammate-message teammate_id="gemini-1" summary="s">done</teammate-message>'
    """
    attrs = f'teammate_id="{html.escape(str(entry.get("from", "?")))}"'
    for key in ("color", "summary"):
        if isinstance(entry.get(key), str):
            attrs += f' {key}="{html.escape(entry[key])}"'
    return f"<teammate-message {attrs}>{entry.get('text', '')}</teammate-message>"


def _forward_stdin(fd: int, backend: StdinBackend, lead: str) -> None:
    """Pass our stdin's lines on to the lead. Raw ``os.read``: a daemon thread blocked in
    a buffered read would hold its lock and abort the interpreter at exit."""
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        try:
            for line in lines:
                backend.write(lead, line + b"\n")
        except PaneError:
            return
    if pending:
        with contextlib.suppress(PaneError):
            backend.write(lead, pending + b"\n")


async def _relay(argv: Sequence[str], make_watcher: Callable[[StdinBackend, str], InboxWatcher]
                 ) -> int:  # fmt: skip
    backend = StdinBackend()
    lead = backend.spawn(argv)  # the lead's id: its pid
    proc = backend.process(lead)
    threading.Thread(
        target=_forward_stdin, args=(sys.stdin.fileno(), backend, lead), daemon=True,
        name="relay-stdin",
    ).start()  # fmt: skip
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # stopping the relay stops the lead
        loop.add_signal_handler(sig, proc.send_signal, sig)
    watcher = make_watcher(backend, lead)
    ready = asyncio.Event()
    watching = asyncio.create_task(watcher.run(ready))
    try:
        await ready.wait()
        return await asyncio.to_thread(proc.wait)
    finally:
        watcher.request_stop()
        await watching
        backend.close(lead)


def run_relay(
    argv: Sequence[str],
    *,
    team: str,
    member: str | None,
    state_dir: Path,
    root: Path | None = None,
    dialect: Dialect | None = None,
) -> int:
    """Run ``argv`` as the lead, relaying ``member``'s (default: the lead's) inbox into it;
    returns the child's exit code."""
    adopt_lock_journal(state_dir)
    ledger = SqliteLedger(state_dir / "ledger.db")

    def make_watcher(backend: StdinBackend, lead: str) -> InboxWatcher:
        def select(config: TeamConfig) -> dict[str, str | None]:
            return {member or config.lead_name: lead}

        return InboxWatcher(
            ledger, backend, root=root, teams=[team], dialect=dialect, select=select,
            renderer=render_teammate_message,
        )  # fmt: skip

    try:
        return asyncio.run(_relay(argv, make_watcher))
    finally:
        ledger.close()
