"""The poller's ledger: watched branches, what it knows of each PR, events, and an outbox.

Tables of their own in the server's ``ledger.db`` (SQLite WAL, next to the delivery
ledger's ``deliveries``):

* ``github_watches``: each (team, worker, branch) the poller looks for pull requests
  of, since when (a pull request closed before that is history, not news);
* ``github_prs``: per pull request, :class:`~exomonad.github.events.PrMemory` and the
  status shown in ``/health``;
* ``github_events``: every event ever derived, by key: an event is recorded once;
* ``github_outbox``: the messages those events became, in order, each ``pending`` until
  its inbox has it (``sent``), or ``suppressed`` / ``dropped`` (a recipient that left).

An event and its messages are recorded in one transaction with the PR's new memory, and
sent afterwards: a restart in between sends what is pending (under the same message id,
so an inbox that still has it gets no second copy).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from exomonad.github.events import Owner, PrEvent, PrMemory
from exomonad.state import open_private_db

__all__ = ["GitHubStore", "Outbound"]

OutboxState = Literal["pending", "sent", "suppressed", "dropped"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS github_watches (
    team TEXT NOT NULL, worker TEXT NOT NULL, branch TEXT NOT NULL, parent TEXT NOT NULL,
    added_at REAL NOT NULL, PRIMARY KEY (team, worker, branch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS github_prs (
    repo TEXT NOT NULL, number INTEGER NOT NULL, team TEXT NOT NULL, worker TEXT NOT NULL,
    head_sha TEXT, head_seen_at REAL, parent_quiet INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT '{}', updated_at REAL NOT NULL,
    PRIMARY KEY (repo, number)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS github_events (
    repo TEXT NOT NULL, number INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (repo, number, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS github_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    repo TEXT NOT NULL, number INTEGER NOT NULL, key TEXT NOT NULL, audience TEXT NOT NULL,
    team TEXT NOT NULL, recipient TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    summary TEXT NOT NULL, message_id TEXT NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, error TEXT, created_at REAL NOT NULL, sent_at REAL,
    UNIQUE (repo, number, key, audience)
);
CREATE INDEX IF NOT EXISTS github_outbox_state ON github_outbox (state, seq);
"""


@dataclass(frozen=True)
class Outbound:
    """One message of the outbox."""

    seq: int
    audience: Literal["worker", "parent"]
    team: str
    recipient: str
    kind: str
    text: str
    summary: str
    message_id: str
    state: OutboxState = "pending"


class GitHubStore:
    """The tables above in the SQLite file ``path`` (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_private_db(path, _SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # -- watches ---------------------------------------------------------------------

    def watch(self, owner: Owner, now: float | None = None) -> float:
        """Watch ``owner``'s branch (kept if already watched); since when it is."""
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO github_watches VALUES (?, ?, ?, ?, ?)",
                (
                    owner.team,
                    owner.worker,
                    owner.branch,
                    owner.parent,
                    time.time() if now is None else now,
                ),
            )
            row = db.execute(
                "SELECT added_at FROM github_watches WHERE team=? AND worker=? AND branch=?",
                (owner.team, owner.worker, owner.branch),
            ).fetchone()
        return float(row[0])

    def unwatch(self, owner: Owner) -> None:
        """Stop watching ``owner``'s branch."""
        with self._tx() as db:
            db.execute(
                "DELETE FROM github_watches WHERE team=? AND worker=? AND branch=?",
                (owner.team, owner.worker, owner.branch),
            )

    def watches(self) -> list[Owner]:
        """Every watched branch, oldest first."""
        rows = self._rows(
            "SELECT team, worker, parent, branch FROM github_watches ORDER BY added_at"
        )
        return [Owner(*r) for r in rows]

    # -- pull requests and events ----------------------------------------------------

    def memory(self, repo: str, number: int) -> PrMemory:
        """What is known of the pull request (empty when first seen)."""
        rows = self._rows(
            "SELECT head_sha, head_seen_at, parent_quiet FROM github_prs WHERE repo=? AND number=?",
            repo,
            number,
        )
        return PrMemory(rows[0][0], rows[0][1], bool(rows[0][2])) if rows else PrMemory()

    def seen(self, repo: str, number: int, keys: Sequence[str]) -> set[str]:
        """The subset of ``keys`` already recorded for the pull request."""
        found: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = list(keys[i : i + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                f"SELECT key FROM github_events WHERE repo=? AND number=? AND key IN ({marks})",
                repo,
                number,
                *chunk,
            )
            found.update(r[0] for r in rows)
        return found

    def record(
        self,
        repo: str,
        number: int,
        owner: Owner,
        memory: PrMemory,
        status: dict[str, Any],
        events: Sequence[tuple[PrEvent, Sequence[Outbound]]],
    ) -> None:
        """Record new events with their messages, and the PR's memory, atomically."""
        now = time.time()
        with self._tx() as db:
            for event, messages in events:
                db.execute(
                    "INSERT OR IGNORE INTO github_events VALUES (?, ?, ?, ?, ?)",
                    (repo, number, event.key, event.kind, now),
                )
                for m in messages:
                    db.execute(
                        "INSERT OR IGNORE INTO github_outbox (repo, number, key, audience, "
                        "team, recipient, kind, text, summary, message_id, state, created_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            repo,
                            number,
                            event.key,
                            m.audience,
                            m.team,
                            m.recipient,
                            m.kind,
                            m.text,
                            m.summary,
                            m.message_id,
                            m.state,
                            now,
                        ),
                    )
            db.execute(
                "INSERT INTO github_prs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (repo, number) DO UPDATE SET team=excluded.team, "
                "worker=excluded.worker, head_sha=excluded.head_sha, "
                "head_seen_at=excluded.head_seen_at, parent_quiet=excluded.parent_quiet, "
                "status=excluded.status, updated_at=excluded.updated_at",
                (
                    repo,
                    number,
                    owner.team,
                    owner.worker,
                    memory.head_sha,
                    memory.head_seen_at,
                    int(memory.parent_quiet),
                    orjson.dumps(status).decode(),
                    now,
                ),
            )

    def statuses(self, limit: int = 50) -> list[dict[str, Any]]:
        """The status of the ``limit`` most recently polled pull requests, newest first."""
        rows = self._rows("SELECT status FROM github_prs ORDER BY updated_at DESC LIMIT ?", limit)
        return [orjson.loads(r[0]) for r in rows]

    # -- the outbox ------------------------------------------------------------------

    def pending(self) -> list[Outbound]:
        """Messages not yet in their inbox, oldest first."""
        rows = self._rows(
            "SELECT seq, audience, team, recipient, kind, text, summary, "
            "message_id FROM github_outbox WHERE state='pending' ORDER BY seq"
        )
        return [Outbound(*r) for r in rows]

    def mark(self, seq: int, state: OutboxState, error: str | None = None) -> None:
        """Record a send (``sent``), a failed attempt (``pending`` + error), or ``dropped``."""
        with self._tx() as db:
            db.execute(
                "UPDATE github_outbox SET state=?, error=?, attempts=attempts+1, "
                "sent_at=CASE WHEN ?='sent' THEN ? ELSE sent_at END WHERE seq=?",
                (state, error, state, time.time(), seq),
            )

    def sent(self, recipient: str | None = None) -> list[Outbound]:
        """Messages sent (to ``recipient``), in order."""
        rows = self._rows(
            "SELECT seq, audience, team, recipient, kind, text, summary, "
            "message_id, state FROM github_outbox WHERE state='sent' "
            "AND (? IS NULL OR recipient=?) ORDER BY seq",
            recipient,
            recipient,
        )
        return [Outbound(*r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Outbox messages per state, and events recorded."""
        out = {"pending": 0, "sent": 0, "suppressed": 0, "dropped": 0}
        out.update(
            {
                r[0]: int(r[1])
                for r in self._rows("SELECT state, COUNT(*) FROM github_outbox GROUP BY state")
            }
        )
        out["events"] = int(self._rows("SELECT COUNT(*) FROM github_events")[0][0])
        return out

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
