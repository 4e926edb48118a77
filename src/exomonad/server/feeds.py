"""Where the lower layers report to the bus: the watcher's passes, the server's appends,
the GitHub poller's events.

The watcher (:mod:`exomonad.bridge.watcher`), the mailbox (:mod:`exomonad.teams`) and
the poller (:mod:`exomonad.github`) know nothing of the bus; they call back
(``on_pass``, ``on_append``, ``on_event``) and these turn what happened into
``message_in`` / ``delivery`` / ``delivery_failed``, ``message_out`` and
``pull_request`` events, and into presence (:class:`~exomonad.server.presence.PresenceBook`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from exomonad.bridge.delivery import PassResult
from exomonad.github.events import PrEvent
from exomonad.server.bus import EventBus
from exomonad.server.events import (
    Delivery,
    DeliveryFailed,
    MessageIn,
    MessageOut,
    PresenceState,
    PullRequestEvent,
)
from exomonad.server.events import message_fields as fields
from exomonad.server.presence import PresenceBook
from exomonad.teams.presence import IMPLIED

__all__ = ["Feeds"]

log = logging.getLogger("exomonad.server")


class Feeds:
    """The callbacks the watcher and the server's mailboxes are given."""

    def __init__(self, bus: EventBus, presence: PresenceBook) -> None:
        self.bus = bus
        self.presence = presence
        self._lock = threading.Lock()
        #: (team, member) → (reason, pending) of the last delivery_failed published.
        self._failing: dict[tuple[str, str], tuple[str, int]] = {}

    def on_pass(self, team: str, member: str, pane: str | None, result: PassResult) -> None:
        """A delivery pass for ``member`` ended (the watcher's ``on_pass``)."""
        for entry in result.messages:
            self.bus.publish(MessageIn(team=team, to=member, pane=pane, **fields(entry)))
        if result.delivered:
            self.bus.publish(Delivery(team=team, member=member, pane=pane,
                                      message_ids=list(result.delivered),
                                      consumed=result.consumed,
                                      possible_duplicates=result.possible_duplicates))  # fmt: skip
        key = (team, member)
        with self._lock:
            if result.error is None:
                self._failing.pop(key, None)
                return
            failure = (result.error, result.pending)
            if self._failing.get(key) == failure:
                return  # the retry loop fails the same way every few seconds: said once
            self._failing[key] = failure
        self.bus.publish(DeliveryFailed(team=team, member=member, pane=pane,
                                        reason=result.error, pending=result.pending))  # fmt: skip

    def on_append(self, team: str, to: str, entry: dict[str, Any]) -> None:
        """The server wrote ``entry`` into ``to``'s inbox (its mailboxes' ``on_append``;
        never raises: the message is in the inbox whatever happens here)."""
        try:
            event = self.bus.publish(MessageOut(team=team, to=to, **fields(entry)))
            implied = IMPLIED.get(event.protocol or "")
            state: PresenceState = implied.value if implied is not None else "active"
            self.presence.note(team, event.sender, state, f"message:{event.protocol or 'text'}")
        except Exception:
            log.exception("message_out event for %s/%s failed", team, to)

    def typed_instead(self, team: str, to: str, entry: dict[str, Any]) -> None:
        """A message meant for ``to``'s inbox was typed into its pane instead."""
        self.bus.publish(MessageOut(team=team, to=to, via="pane", **fields(entry)))

    def on_pull_request(self, event: PrEvent) -> None:
        """The GitHub poller recorded a new pull-request event (its ``on_event``)."""
        try:
            owner = event.owner
            self.bus.publish(PullRequestEvent(team=owner.team, event=event.kind,
                                              worker=owner.worker, number=event.pr.number,
                                              pr=event.to_json()))  # fmt: skip
        except Exception:  # the poller's bookkeeping must not depend on the bus
            log.exception("pull_request event for %s failed", event.key)
