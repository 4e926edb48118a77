"""One delivery pass: deliver a member's new inbox entries to its pane, in order, once.

The pane is any :class:`~exomonad.panes.contract.TextSink` target: a tmux or Zellij
pane, the pty ``exomonad teammate`` owns, a headless lead's stdin.

A pass reads the inbox, asks the ledger which entries are already delivered, and delivers
the rest in inbox order. It stops at the first entry it cannot deliver (no pane, dead
pane): later entries wait behind it so order is kept, and all of them stay pending until
a later pass succeeds. Delivered entries are then marked read the way the team's Claude
Code dialect does (``read: true`` or pruned), which keeps the file small; the ledger, not
the file, is what decides what is new.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from exomonad.bridge.ledger import Ledger
from exomonad.bridge.render import render
from exomonad.errors import CorruptFileError, ExomonadError, PaneError
from exomonad.panes.contract import TextSink
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.models import message_identity

__all__ = ["Deliverer", "PassResult", "SpoolBox"]

log = logging.getLogger("exomonad.bridge")

#: Whose spool directory a long message for ``(team, member)`` goes to, as ``(team,
#: member)`` (:func:`~exomonad.panes.spool.recipient_dir`): by default its own.
SpoolBox = Callable[[str, str], tuple[str, str]]


@dataclass
class PassResult:
    """What one pass did: the ids delivered (typed or consumed), the entries typed, how
    many were consumed (``intercept``), how many wait, and why the pass stopped."""

    delivered: list[str] = field(default_factory=list)
    pending: int = 0
    possible_duplicates: int = 0
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    consumed: int = 0


def _well_formed(entry: dict[str, Any]) -> bool:
    return all(isinstance(entry.get(k), str) for k in ("from", "text", "timestamp"))


class Deliverer:
    """Runs delivery passes for the members of one team.

    ``intercept`` sees each new entry first; when it returns True the entry counts as
    delivered without being typed (the server resolves ``permission_response`` entries
    this way). ``spool_box`` names the recipient of a message too long to type (its
    spool directory, the one the policy lets it read); by default the member itself.
    """

    def __init__(
        self,
        mailbox: Mailbox,
        ledger: Ledger,
        sink: TextSink,
        *,
        mark_read: bool = True,
        renderer: Callable[[dict[str, Any]], str] = render,
        intercept: Callable[[dict[str, Any]], bool] | None = None,
        mark_read_every: float = 5.0,
        mark_read_batch: int = 32,
        spool_box: SpoolBox | None = None,
    ) -> None:
        self.intercept = intercept
        self.spool_box = spool_box
        self.mark_read_every = mark_read_every
        self.mark_read_batch = mark_read_batch
        self._unmarked: dict[str, list[str]] = {}
        self._marked_at: dict[str, float] = {}
        self.mailbox = mailbox
        self.ledger = ledger
        self.sink = sink
        self.mark_read = mark_read
        self.renderer = renderer

    @property
    def team(self) -> str:
        """The team this deliverer serves."""
        return self.mailbox.paths.team

    def run_pass(self, member: str, pane: str | None) -> PassResult:
        """Deliver ``member``'s pending entries to ``pane``; never raises for bad input."""
        result = PassResult()
        if self.mailbox.unchanged_since_our_write(member):
            return result  # woken by our own mark-read write: nothing new
        try:
            entries = self.mailbox.read_raw(member)
        except CorruptFileError as exc:
            log.error("inbox of %s/%s unreadable, will retry: %s", self.team, member, exc)
            result.error = str(exc)
            return result
        except OSError as exc:
            result.error = f"cannot read inbox: {exc}"
            return result
        fresh = [e for e in entries if _well_formed(e)]
        ids = [message_identity(e) for e in fresh]
        done = self.ledger.delivered(self.team, member, ids)
        todo = [(i, e) for i, e in zip(ids, fresh, strict=True) if i not in done]
        seen: set[str] = set()
        for position, (message_id, entry) in enumerate(todo):
            if message_id in seen:  # the same identity twice in one file: deliver once
                continue
            seen.add(message_id)
            if pane is None:
                reason = f"member {member!r} has no pane bound"
                self._undeliverable(member, todo[position:], reason)
                result.pending, result.error = len(todo) - position, reason
                break
            if self.ledger.begin(self.team, member, message_id):
                # A crash between typing and recording: the text may sit unsubmitted in
                # the input box. Submit it first, so the new copy does not run into it
                # (a duplicate, counted and reported; never a garbled message).
                result.possible_duplicates += 1
                with contextlib.suppress(PaneError):
                    self.sink.submit(pane)
            if self.intercept is not None and self.intercept(entry):  # consumed, not typed
                self.ledger.mark_delivered(self.team, member, message_id)
                result.delivered.append(message_id)
                result.consumed += 1
                continue
            try:
                box = self.spool_box(self.team, member) if self.spool_box else (self.team, member)
                self.sink.deliver(pane, self.renderer(entry), sender=str(entry["from"]), to=box)
            except PaneError as exc:
                self._undeliverable(member, todo[position:], str(exc))
                result.pending, result.error = len(todo) - position, str(exc)
                break
            self.ledger.mark_delivered(self.team, member, message_id)
            result.delivered.append(message_id)
            result.messages.append(entry)
        if self.mark_read:
            self._unmarked.setdefault(member, []).extend(result.delivered)
            self._mark(member, seen=done.union(result.delivered))  # never the pending ones
        return result

    def flush(self) -> None:
        """Mark every delivered-but-unmarked entry read now (when the watcher stops)."""
        for member, ids in list(self._unmarked.items()):
            if ids:
                self._marked_at.pop(member, None)  # due now
                self._mark(member, seen=set())

    def mark_due(self, now: float | None = None) -> list[str]:
        """Members whose delivered entries wait to be marked read and are due."""
        now = time.monotonic() if now is None else now
        return [m for m, ids in self._unmarked.items()
                if ids and now - self._marked_at.get(m, 0.0) >= self.mark_read_every]  # fmt: skip

    def _mark(self, member: str, *, seen: set[str]) -> None:
        """Mark delivered entries read, batched: the first at once, then at most once per
        ``mark_read_every`` seconds (or every ``mark_read_batch`` entries). The ledger
        records delivery; marking keeps the file small and Claude Code's view tidy, and
        each rewrite costs a lock, a read and a rename."""
        ids = self._unmarked.get(member)
        if not ids:
            return
        now = time.monotonic()
        due = now - self._marked_at.get(member, float("-inf")) >= self.mark_read_every
        if not due and len(ids) < self.mark_read_batch:
            return
        try:
            self.mailbox.mark_read(member, ids, seen=seen)
        except ExomonadError as exc:  # delivery stands; the ledger remembers it
            log.warning("could not mark %s/%s read: %s", self.team, member, exc)
            return
        self._unmarked[member] = []
        self._marked_at[member] = now

    def _undeliverable(
        self, member: str, rest: list[tuple[str, dict[str, Any]]], reason: str
    ) -> None:
        log.error("cannot deliver to %s/%s (%d pending): %s", self.team, member, len(rest), reason)
        for message_id, _ in rest:
            self.ledger.mark_undeliverable(self.team, member, message_id, reason)
