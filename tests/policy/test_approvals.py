"""Pending human approvals in SQLite: lifecycle, expiry, waiting across threads and
processes, id prefixes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from exomonad.errors import ExomonadError
from exomonad.policy.actions import GitPush, MergePR
from exomonad.policy.approvals import ApprovalStore
from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.errors import ApprovalClosedError, ApprovalNotFoundError


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / ".exomonad" / "approvals.db"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_create_and_get_round_trip(db: Path) -> None:
    store = ApprovalStore(db, clock=Clock())
    made = store.create(
        agent="dev1",
        role="dev",
        action=MergePR(3),
        reason="merge it",
        timeout=60,
        policy_id="abc-v1",
    )
    got = store.get(made.id)
    assert got == made
    assert (got.agent, got.role, got.reason, got.state) == ("dev1", "dev", "merge it", "pending")
    assert got.action == {"type": "MergePR", "number": 3}
    assert (got.created_at, got.deadline, got.policy_id) == (1000.0, 1060.0, "abc-v1")
    assert got.decision == Escalate("human", "merge it")
    assert len(got.id) == 8
    assert ApprovalStore(db).get(made.id).reason == "merge it"  # persisted


def test_action_payload_shapes(db: Path) -> None:
    store = ApprovalStore(db)
    many = store.create(
        agent="a", role="dev", action=[GitPush("o", "b"), MergePR(1)], reason="r", timeout=None
    )
    assert [a["type"] for a in many.action] == ["GitPush", "MergePR"]
    assert many.deadline is None
    raw = store.create(agent="a", role="dev", action={"tool": "Bash", "command": "x"}, reason="r")
    assert raw.action == {"tool": "Bash", "command": "x"}


def test_answer_approve_and_deny(db: Path) -> None:
    store = ApprovalStore(db, clock=Clock())
    yes = store.create(agent="a", role="dev", action=MergePR(1), reason="r")
    no = store.create(agent="a", role="dev", action=MergePR(2), reason="r")
    approved = store.answer(yes.id, True, by="alice", reason="fine")
    denied = store.answer(no.id, False, by="bob")
    assert (approved.state, approved.answered_by, approved.answer_reason) == (
        "approved",
        "alice",
        "fine",
    )
    assert approved.answered_at == 1000.0
    assert approved.decision == Allow("approved by alice: fine")
    assert denied.decision == Deny("denied by bob")
    with pytest.raises(ApprovalClosedError, match="already approved"):
        store.answer(yes.id, False, by="bob")
    assert store.get(yes.id).state == "approved"


def test_unknown_ids(db: Path) -> None:
    store = ApprovalStore(db)
    with pytest.raises(ApprovalNotFoundError, match="no approval with id 'nope'"):
        store.get("nope")
    with pytest.raises(ExomonadError):
        store.answer("nope", True, by="x")


def test_listing_is_oldest_first_and_pending_only(db: Path) -> None:
    clock = Clock()
    store = ApprovalStore(db, clock=clock)
    ids = []
    for i in range(3):
        clock.now += 1
        ids.append(store.create(agent=f"a{i}", role="dev", action=MergePR(i), reason="r").id)
    store.answer(ids[1], True, by="x")
    assert [a.id for a in store.list_pending()] == [ids[0], ids[2]]
    assert [a.id for a in store.records()] == ids
    assert [a.id for a in store.records(state="approved")] == [ids[1]]
    assert [a.id for a in store.records(limit=2)] == ids[1:]


def test_deadline_expiry(db: Path) -> None:
    clock = Clock()
    store = ApprovalStore(db, clock=clock)
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r", timeout=10)
    forever = store.create(agent="a", role="dev", action=MergePR(2), reason="r", timeout=None)
    clock.now += 11
    assert [x.id for x in store.list_pending()] == [forever.id]
    expired = store.get(a.id)
    assert (expired.state, expired.answered_by) == ("expired", "timeout")
    assert expired.decision == Deny("no human answered in time")
    with pytest.raises(ApprovalClosedError, match="already expired"):
        store.answer(a.id, True, by="late")
    assert store.expire_overdue() == 0


def test_wait_times_out_with_the_record_still_pending(db: Path) -> None:
    store = ApprovalStore(db)
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r")
    start = time.monotonic()
    assert store.wait(a.id, timeout=0.2).state == "pending"
    assert time.monotonic() - start >= 0.2


def test_stop_waiting_ends_every_wait_with_the_record_still_pending(db: Path) -> None:
    """The server stopping: a wait with no time limit (only stop_waiting can end it)
    returns the pending record, and so does every later wait."""
    store = ApprovalStore(db, poll_interval=3600.0)  # only the Condition can wake it
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r")
    seen: list[str] = []
    waiter = threading.Thread(target=lambda: seen.append(store.wait(a.id).state))
    waiter.start()
    store.stop_waiting()
    waiter.join(60)
    assert not waiter.is_alive()
    assert seen == ["pending"]
    assert store.wait(a.id).state == "pending"  # a later wait: at once
    assert store.get(a.id).state == "pending"  # nobody answered it


def test_wait_returns_expired_when_the_deadline_passes(db: Path) -> None:
    store = ApprovalStore(db)
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r", timeout=0.15)
    assert store.wait(a.id, timeout=5).state == "expired"


def test_wait_wakes_at_once_on_an_in_process_answer(db: Path) -> None:
    store = ApprovalStore(db, poll_interval=3600.0)  # only the Condition can wake it in time
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r")

    def answer() -> None:
        time.sleep(0.1)
        store.answer(a.id, True, by="alice")

    answerer = threading.Thread(target=answer)
    start = time.monotonic()
    answerer.start()
    result = store.wait(a.id, timeout=60)  # a poll would come at 60 s and find it pending
    elapsed = time.monotonic() - start
    answerer.join()
    assert (result.state, result.answered_by) == ("approved", "alice")
    assert elapsed > 0.05  # it did wait for the answer


def test_wait_sees_an_answer_from_another_process(db: Path) -> None:
    store = ApprovalStore(db, poll_interval=0.05)
    a = store.create(agent="a", role="dev", action=MergePR(1), reason="r")
    code = (
        "import sys, time; from pathlib import Path; "
        "from exomonad.policy.approvals import ApprovalStore; time.sleep(0.2); "
        "ApprovalStore(Path(sys.argv[1])).answer(sys.argv[2], False, 'bob', 'no way')"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(db), a.id])
    result = store.wait(a.id, timeout=20)
    proc.wait(20)
    assert proc.returncode == 0
    assert (result.state, result.answered_by, result.answer_reason) == ("denied", "bob", "no way")


def test_resolve_prefixes(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = iter(["aaaa0001", "aaaa0002", "bbbb0003"])
    monkeypatch.setattr("exomonad.policy.approvals.secrets.token_hex", lambda n: next(ids))
    store = ApprovalStore(db)
    for _ in range(3):
        store.create(agent="a", role="dev", action=MergePR(1), reason="r")
    assert store.resolve("bbbb") == "bbbb0003"
    assert store.resolve("aaaa0002") == "aaaa0002"
    with pytest.raises(ApprovalNotFoundError, match="ambiguous"):
        store.resolve("aaaa")
    with pytest.raises(ApprovalNotFoundError, match="no approval"):
        store.resolve("zz")
    with pytest.raises(ApprovalNotFoundError):
        store.resolve("%")


def test_to_dict_has_every_field(db: Path) -> None:
    store = ApprovalStore(db)
    data = store.create(agent="a", role="dev", action=MergePR(1), reason="r").to_dict()
    assert set(data) == {
        "id",
        "agent",
        "role",
        "action",
        "reason",
        "created_at",
        "deadline",
        "state",
        "answered_by",
        "answer_reason",
        "answered_at",
        "policy_id",
        "addressee",
        "asks",
    }


def test_a_database_from_before_addressees_is_upgraded(tmp_path: Path) -> None:
    """Records made before addressees were kept read as a person's (None)."""
    db = tmp_path / "old.db"
    old = sqlite3.connect(db)
    old.executescript(
        "CREATE TABLE approvals (id TEXT PRIMARY KEY, agent TEXT NOT NULL, role TEXT NOT NULL,"
        " action TEXT NOT NULL, reason TEXT NOT NULL, created_at REAL NOT NULL, deadline REAL,"
        " state TEXT NOT NULL DEFAULT 'pending', answered_by TEXT, answer_reason TEXT,"
        " answered_at REAL, policy_id TEXT);"
        "INSERT INTO approvals (id, agent, role, action, reason, created_at) VALUES"
        " ('abcd1234', 'w1', 'worker', '{}', 'r', 1.0);"
    )
    old.commit()
    old.close()
    store = ApprovalStore(db)
    assert store.get("abcd1234").addressee is None
    assert store.get("abcd1234").asks is None  # nor which parts were asked: all of them
    assert store.create(agent="a", role="dev", action=[MergePR(1), MergePR(2)], reason="r",
                        asks=[1]).asks == (1,)  # fmt: skip
    assert store.create(agent="a", role="dev", action=MergePR(1), reason="r",
                        addressee="team-lead").addressee == "team-lead"  # fmt: skip
    store.close()
