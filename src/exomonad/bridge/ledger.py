"""The delivery ledger: which inbox messages reached which member's pane, and when.

Identity, not position, decides what is new (``msg_id``/``messageId``, else the content
hash; see :func:`~exomonad.teams.models.message_identity`), so delivery survives Claude
Code pruning or rewriting an inbox, compaction, and restarts.

Each delivery is recorded twice: ``in_flight`` before typing, ``delivered`` after. A row
still ``in_flight`` at start-up means the process died between typing and recording; that
message is delivered again (at-least-once, never skipped) and counted as a possible
duplicate, so duplicates after a crash are bounded by the number of panes being typed into
at that moment and are reported.

:class:`Ledger` is the interface; :class:`SqliteLedger` (WAL) is the local implementation.
A networked store can implement the same protocol later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from exomonad.state import open_private_db

__all__ = ["DeliveryRecord", "DeliveryState", "Ledger", "SqliteLedger"]

DeliveryState = Literal["in_flight", "delivered", "undeliverable"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    team TEXT NOT NULL,
    member TEXT NOT NULL,
    message_id TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    first_seen REAL NOT NULL,
    updated_at REAL NOT NULL,
    delivered_at REAL,
    error TEXT,
    PRIMARY KEY (team, member, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries (state);
"""


@dataclass(frozen=True)
class DeliveryRecord:
    """One ledger row."""

    team: str
    member: str
    message_id: str
    state: DeliveryState
    attempts: int
    first_seen: float
    updated_at: float
    delivered_at: float | None
    error: str | None


class Ledger(Protocol):
    """What the delivery service needs from a ledger."""

    def delivered(self, team: str, member: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already delivered to ``member``."""
        ...

    def begin(self, team: str, member: str, message_id: str) -> bool:
        """Mark in flight; True if it was already in flight (a possible duplicate)."""
        ...

    def mark_delivered(self, team: str, member: str, message_id: str) -> None:
        """Record a confirmed delivery."""
        ...

    def mark_undeliverable(self, team: str, member: str, message_id: str, error: str) -> None:
        """Record a failed attempt; the message stays pending for a later retry."""
        ...

    def counts(self) -> dict[str, int]:
        """Rows per state."""
        ...


class SqliteLedger:
    """A :class:`Ledger` in one SQLite file (WAL, ``synchronous=NORMAL``), thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = open_private_db(path, _SCHEMA)
        #: Rows found ``in_flight`` when the ledger was opened: possible duplicates.
        self.recovered_in_flight = self._count("in_flight")

    def _count(self, state: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM deliveries WHERE state = ?", (state,)
            ).fetchone()
        return int(row[0])

    def delivered(self, team: str, member: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already delivered to ``member``."""
        wanted = list(ids)
        found: set[str] = set()
        with self._lock:
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT message_id FROM deliveries WHERE team = ? AND member = ? "
                    f"AND state = 'delivered' AND message_id IN ({marks})",
                    (team, member, *chunk),
                )
                found.update(r[0] for r in rows)
        return found

    def begin(self, team: str, member: str, message_id: str) -> bool:
        """Mark in flight; True if it was already in flight (a possible duplicate)."""
        now = time.time()
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM deliveries WHERE team=? AND member=? AND message_id=?",
                (team, member, message_id),
            ).fetchone()
            self._db.execute(
                "INSERT INTO deliveries (team, member, message_id, state, attempts, first_seen,"
                " updated_at) VALUES (?, ?, ?, 'in_flight', 1, ?, ?)"
                " ON CONFLICT (team, member, message_id) DO UPDATE SET state='in_flight',"
                " attempts = attempts + 1, updated_at = excluded.updated_at",
                (team, member, message_id, now, now),
            )
        return row is not None and row[0] == "in_flight"

    def mark_delivered(self, team: str, member: str, message_id: str) -> None:
        """Record a confirmed delivery."""
        now = time.time()
        with self._lock:
            self._db.execute(
                "UPDATE deliveries SET state='delivered', delivered_at=?, updated_at=?, error=NULL"
                " WHERE team=? AND member=? AND message_id=?",
                (now, now, team, member, message_id),
            )

    def mark_undeliverable(self, team: str, member: str, message_id: str, error: str) -> None:
        """Record a failed attempt; the message stays pending for a later retry."""
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO deliveries (team, member, message_id, state, attempts, first_seen,"
                " updated_at, error) VALUES (?, ?, ?, 'undeliverable', 0, ?, ?, ?)"
                " ON CONFLICT (team, member, message_id) DO UPDATE SET state='undeliverable',"
                " updated_at=excluded.updated_at, error=excluded.error",
                (team, member, message_id, now, now, error),
            )

    def records(self, team: str | None = None, member: str | None = None) -> list[DeliveryRecord]:
        """Rows, optionally for one team/member, oldest first."""
        sql = "SELECT * FROM deliveries WHERE (? IS NULL OR team=?) AND (? IS NULL OR member=?)"
        with self._lock:
            rows = self._db.execute(
                sql + " ORDER BY first_seen", (team, team, member, member)
            ).fetchall()
        return [DeliveryRecord(*r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Rows per state (``in_flight``, ``delivered``, ``undeliverable``)."""
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM deliveries GROUP BY state")
            out = {"in_flight": 0, "delivered": 0, "undeliverable": 0}
            out.update({r[0]: int(r[1]) for r in rows})
        return out

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
