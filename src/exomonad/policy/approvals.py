"""Pending human approvals in SQLite (``.exomonad/approvals.db``).

The server creates a record when the policy escalates to a human, then blocks the
agent's hook in :meth:`ApprovalStore.wait`; a human answers with ``exomonad approve ID``
/ ``exomonad deny ID`` (another process) or through the server (same process).

Waiting: an answer given through the *same* store object wakes waiters at once (a
``threading.Condition``); answers from other processes are seen by polling the database
every ``poll_interval`` seconds (50 ms). So the server should keep one store for its
lifetime and route dashboard answers through it. A record whose ``deadline`` passes
unanswered becomes ``expired`` (answered by ``"timeout"``) on the next read.

>>> import tempfile, pathlib
>>> store = ApprovalStore(pathlib.Path(tempfile.mkdtemp()) / "approvals.db")
>>> a = store.create(agent="dev1", role="dev", action={"cmd": "gh pr merge 3"},
...                  reason="merge", timeout=60)
>>> store.answer(a.id, approved=True, by="alice").state
'approved'
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from exomonad.policy.actions import Action, action_to_dict
from exomonad.policy.decisions import Allow, Decision, Deny, Escalate
from exomonad.policy.errors import ApprovalClosedError, ApprovalNotFoundError
from exomonad.state import open_private_db

__all__ = ["Approval", "ApprovalState", "ApprovalStore"]

ApprovalState = Literal["pending", "approved", "denied", "expired"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    role TEXT NOT NULL,
    action TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at REAL NOT NULL,
    deadline REAL,
    state TEXT NOT NULL DEFAULT 'pending',
    answered_by TEXT,
    answer_reason TEXT,
    answered_at REAL,
    policy_id TEXT,
    addressee TEXT,
    asks TEXT
);
CREATE INDEX IF NOT EXISTS approvals_state ON approvals (state, created_at);
"""
_COLUMNS = (
    "id, agent, role, action, reason, created_at, deadline, state, answered_by, "
    "answer_reason, answered_at, policy_id, addressee, asks"
)


@dataclass(frozen=True)
class Approval:
    """One approval request and, once answered, its answer."""

    id: str
    agent: str
    role: str
    action: Any
    reason: str
    created_at: float
    deadline: float | None
    state: ApprovalState
    answered_by: str | None = None
    answer_reason: str | None = None
    answered_at: float | None = None
    policy_id: str | None = None
    #: Who may answer: the lead's member name for a lead-level request, ``"human"`` for
    #: a person (``None`` in records made before addressees were kept: a person).
    addressee: str | None = None
    #: The parts of ``action`` (indexes) the answer is asked about: those not allowed,
    #: and an MCP tool call (:func:`~exomonad.policy.cascade.asked`); ``None``: all of
    #: them (a record made without, or before this was kept).
    asks: tuple[int, ...] | None = None

    @property
    def decision(self) -> Decision:
        """``Allow`` if approved, ``Deny`` if denied or expired, else ``Escalate("human")``."""
        why = self.answer_reason or ""
        if self.state == "approved":
            return Allow(f"approved by {self.answered_by}" + (f": {why}" if why else ""))
        if self.state == "denied":
            return Deny(f"denied by {self.answered_by}" + (f": {why}" if why else ""))
        if self.state == "expired":
            return Deny("no human answered in time")
        return Escalate("human", self.reason)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _action_json(action: Action | Sequence[Action] | Mapping[str, Any]) -> str:
    if isinstance(action, Action):
        data: Any = action_to_dict(action)
    elif isinstance(action, Mapping):
        data = dict(action)
    else:
        data = [action_to_dict(a) for a in action]
    return json.dumps(data, default=str)


class ApprovalStore:
    """Approval records in one SQLite file (WAL); safe to share between threads."""

    def __init__(
        self, path: Path, *, poll_interval: float = 0.05, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = path
        self.poll_interval = poll_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._answered = threading.Condition()
        self._generation = 0  # bumped on every in-process answer, under ``_answered``
        #: Set by :meth:`stop_waiting`: every :meth:`wait` returns at once.
        self.stopping = False
        self._db = open_private_db(path, _SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(approvals)")}
        if "addressee" not in columns:  # a database from before addressees were kept
            self._db.execute("ALTER TABLE approvals ADD COLUMN addressee TEXT")
        if "asks" not in columns:
            self._db.execute("ALTER TABLE approvals ADD COLUMN asks TEXT")

    def stop_waiting(self) -> None:
        """End every :meth:`wait`, now and later, with the record as it is (the server is
        stopping: a call waiting for an answer gets none, as when its time runs out)."""
        with self._answered:
            self.stopping = True
            self._generation += 1
            self._answered.notify_all()

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    # -- writing ---------------------------------------------------------------------
    def create(
        self,
        *,
        agent: str,
        role: str,
        action: Action | Sequence[Action] | Mapping[str, Any],
        reason: str,
        timeout: float | None = 600.0,
        policy_id: str | None = None,
        addressee: str = "human",
        asks: Sequence[int] | None = None,
    ) -> Approval:
        """Record a pending request for ``addressee`` (the lead's name, or ``"human"``);
        it expires ``timeout`` seconds from now (None: never). ``asks``: which of the
        actions need the answer (indexes; None: all)."""
        now = self._clock()
        deadline = None if timeout is None else now + timeout
        payload = _action_json(action)
        asked = None if asks is None else json.dumps([int(i) for i in asks])
        with self._lock:
            while True:
                new_id = secrets.token_hex(4)
                try:
                    row = (new_id, agent, role, payload, reason, now, deadline, policy_id,
                           addressee, asked)  # fmt: skip
                    self._db.execute(
                        f"INSERT INTO approvals ({_COLUMNS}) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, NULL, ?, ?, ?)",
                        row,
                    )
                    break
                except sqlite3.IntegrityError:  # pragma: no cover - 1 in 4e9
                    continue
        return self.get(new_id)

    def answer(self, approval_id: str, approved: bool, by: str, reason: str = "") -> Approval:
        """Approve or deny a pending request.

        Raises :class:`~.errors.ApprovalNotFoundError` for an unknown id and
        :class:`~.errors.ApprovalClosedError` if it is no longer pending (answered or
        expired).
        """
        self._expire(approval_id)
        state = "approved" if approved else "denied"
        with self._lock:
            cur = self._db.execute(
                "UPDATE approvals SET state = ?, answered_by = ?, answer_reason = ?, "
                "answered_at = ? WHERE id = ? AND state = 'pending'",
                (state, by, reason, self._clock(), approval_id),
            )
        if cur.rowcount == 0:
            current = self.get(approval_id)  # raises if unknown
            raise ApprovalClosedError(f"approval {approval_id} is already {current.state}")
        with self._answered:
            self._generation += 1
            self._answered.notify_all()
        return self.get(approval_id)

    def expire_overdue(self) -> int:
        """Mark every pending record past its deadline ``expired``; returns how many."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE approvals SET state = 'expired', answered_by = 'timeout', "
                "answered_at = ? WHERE state = 'pending' AND deadline IS NOT NULL "
                "AND deadline <= ?",
                (self._clock(), self._clock()),
            )
        return cur.rowcount

    def _expire(self, approval_id: str) -> None:
        now = self._clock()
        with self._lock:
            self._db.execute(
                "UPDATE approvals SET state = 'expired', answered_by = 'timeout', "
                "answered_at = ? WHERE id = ? AND state = 'pending' AND deadline IS NOT NULL "
                "AND deadline <= ?",
                (now, approval_id, now),
            )

    # -- reading ---------------------------------------------------------------------
    def get(self, approval_id: str) -> Approval:
        """The record with that id (expiring it first if overdue)."""
        self._expire(approval_id)
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (approval_id,)
            ).fetchone()
        if row is None:
            raise ApprovalNotFoundError(f"no approval with id {approval_id!r}")
        return self._row(row)

    def resolve(self, prefix: str) -> str:
        """The full id of the one record whose id starts with ``prefix``."""
        pattern = prefix.replace("%", "").replace("_", "") + "%"
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM approvals WHERE id LIKE ? LIMIT 2", (pattern,)
            ).fetchall()
        if len(rows) != 1:
            raise ApprovalNotFoundError(
                f"no approval with id {prefix!r}" if not rows else f"id {prefix!r} is ambiguous"
            )
        return str(rows[0][0])

    def list_pending(self) -> list[Approval]:
        """Every pending record, oldest first (overdue ones are expired first)."""
        return self.records(state="pending")

    def records(self, *, state: ApprovalState | None = None, limit: int = 100) -> list[Approval]:
        """Records, oldest first; only those in ``state`` if given."""
        self.expire_overdue()
        where, args = ("WHERE state = ?", (state,)) if state else ("", ())
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM (SELECT * FROM approvals {where} "
                "ORDER BY created_at DESC LIMIT ?) ORDER BY created_at",
                (*args, limit),
            ).fetchall()
        return [self._row(r) for r in rows]

    def wait(self, approval_id: str, timeout: float | None = None) -> Approval:
        """Block until the record is answered or expires, or ``timeout`` seconds pass.

        Returns the record as it is then (still ``pending`` if ``timeout`` ran out first).
        """
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._answered:
                generation = self._generation
            approval = self.get(approval_id)
            if approval.state != "pending" or self.stopping:
                return approval
            step = self.poll_interval
            if end is not None:
                remaining = end - time.monotonic()
                if remaining <= 0:
                    return approval
                step = min(step, remaining)
            with self._answered:
                if self._generation == generation:  # no answer since we looked
                    self._answered.wait(step)

    @staticmethod
    def _row(row: tuple[Any, ...]) -> Approval:
        (
            id_,
            agent,
            role,
            action,
            reason,
            created,
            deadline,
            state,
            by,
            why,
            at,
            policy_id,
            addressee,
            asks,
        ) = row
        return Approval(
            id_,
            agent,
            role,
            json.loads(action),
            reason,
            created,
            deadline,
            cast(ApprovalState, state),
            by,
            why,
            at,
            policy_id,
            addressee,
            None if asks is None else tuple(json.loads(asks)),
        )
