"""Everything that differs between Claude Code versions, in one place.

* ``2.1.112`` (TeamCreate era, readable ``cli.js``): inbox entries carry only
  ``from/text/timestamp`` (+ ``read``, ``summary``, ``color``); delivered entries are kept
  and marked ``read: true``; files are rewritten in place.
* ``2.1.330`` (session teams, native binary): entries also carry ``msgV: 1``, a uuid
  ``msg_id`` and ``type: "message"``; delivered entries are *deleted*; files are written to
  ``<file>.tmp.<8 hex>`` and renamed.

Select with :func:`get_dialect` or ``$EXOMONAD_CLAUDE_DIALECT``; the default is the newest.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from exomonad.errors import ExomonadError

__all__ = ["DEFAULT_DIALECT", "DIALECTS", "Dialect", "get_dialect"]


@dataclass(frozen=True)
class Dialect:
    """How one Claude Code version writes and consumes inbox entries."""

    name: str
    #: ``flag``: set ``read: true`` and keep the entry; ``prune``: delete delivered entries.
    mark_read: Literal["flag", "prune"]
    #: Whether entries carry ``msgV``/``msg_id``/``type``.
    envelope: bool
    #: Whether the version supports the TeamCreate tool (else teams are session teams).
    team_create: bool

    def stamp(self, entry: dict[str, Any], message_id: str) -> dict[str, Any]:
        """Add this dialect's envelope keys and our ``messageId`` to a new entry."""
        out = dict(entry)
        if self.envelope:
            out.setdefault("msgV", 1)
            out.setdefault("msg_id", message_id)
            out.setdefault("type", "message")
        out.setdefault("messageId", message_id)
        return out

    @staticmethod
    def new_message_id() -> str:
        """A fresh message id (a uuid4 string, as 2.1.330's ``msg_id``)."""
        return str(uuid.uuid4())


DIALECTS: dict[str, Dialect] = {
    "2.1.112": Dialect("2.1.112", mark_read="flag", envelope=False, team_create=True),
    "2.1.330": Dialect("2.1.330", mark_read="prune", envelope=True, team_create=False),
}
#: The newest dialect: what current Claude Code writes.
DEFAULT_DIALECT = DIALECTS["2.1.330"]


def get_dialect(name: str | None = None) -> Dialect:
    """The dialect called ``name``, else ``$EXOMONAD_CLAUDE_DIALECT``, else the newest."""
    name = name or os.environ.get("EXOMONAD_CLAUDE_DIALECT") or DEFAULT_DIALECT.name
    try:
        return DIALECTS[name]
    except KeyError:
        known = ", ".join(sorted(DIALECTS))
        raise ExomonadError(f"unknown Claude Code dialect {name!r} (known: {known})") from None
