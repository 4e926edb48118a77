"""One delivery pass over an inbox (fake sink; the tmux twin is in test_watch_tmux.py)."""

from __future__ import annotations

from pathlib import Path

from exomonad.bridge.delivery import Deliverer
from exomonad.bridge.ledger import SqliteLedger
from exomonad.teams import Mailbox, get_dialect
from exomonad.teams.models import message_identity

from .conftest import RecordingSink


def _deliverer(mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink) -> Deliverer:
    return Deliverer(mailbox, ledger, sink)


def test_delivers_in_order_exactly_once(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    for i in range(5):
        mailbox.send("gemini-1", sender="team-lead", text=f"m{i}")
    d = _deliverer(mailbox, ledger, sink)
    first = d.run_pass("gemini-1", "%1")
    second = d.run_pass("gemini-1", "%1")
    assert len(first.delivered) == 5
    assert second.delivered == []
    assert sink.texts() == [f"[from team-lead] m{i}" for i in range(5)]


def test_prune_dialect_empties_inbox_flag_dialect_marks(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    mailbox.send("gemini-1", sender="team-lead", text="a")
    _deliverer(mailbox, ledger, sink).run_pass("gemini-1", "%1")
    assert mailbox.read_raw("gemini-1") == []
    old = Mailbox(mailbox.paths, dialect=get_dialect("2.1.112"), durable=False)
    old.send("gemini-1", sender="team-lead", text="b")
    _deliverer(old, ledger, sink).run_pass("gemini-1", "%1")
    assert [e.get("read") for e in old.read_raw("gemini-1")] == [True]


def test_no_pane_keeps_messages_pending_then_delivers_in_order(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    for i in range(3):
        mailbox.send("gemini-1", sender="team-lead", text=f"m{i}")
    d = _deliverer(mailbox, ledger, sink)
    r = d.run_pass("gemini-1", None)
    assert (r.delivered, r.pending) == ([], 3)
    assert r.error is not None
    assert "no pane" in r.error
    assert ledger.counts()["undeliverable"] == 3
    assert len(mailbox.read_raw("gemini-1")) == 3  # nothing lost
    r = d.run_pass("gemini-1", "%1")
    assert len(r.delivered) == 3
    assert sink.texts() == [f"[from team-lead] m{i}" for i in range(3)]


def test_dead_pane_stops_at_first_failure(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    mailbox.send("gemini-1", sender="team-lead", text="x")
    sink.dead.add("%1")
    r = _deliverer(mailbox, ledger, sink).run_pass("gemini-1", "%1")
    assert r.pending == 1
    assert sink.texts() == []
    assert ledger.records()[0].state == "undeliverable"


def test_corrupt_inbox_reports_and_keeps_bytes(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    path: Path = mailbox.paths.inbox("gemini-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'[{"from": "x"')
    r = _deliverer(mailbox, ledger, sink).run_pass("gemini-1", "%1")
    assert r.error is not None
    assert path.read_bytes() == b'[{"from": "x"'


def test_entries_without_ids_and_malformed_entries(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    path = mailbox.paths.inbox("gemini-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"from": "team-lead", "text": "bare", "timestamp": "2026-01-01T00:00:00.000Z"}
    path.write_text(
        f'[{{"from": "x"}}, {__import__("json").dumps(entry)}, {__import__("json").dumps(entry)}]'
    )
    d = Deliverer(mailbox, ledger, sink, mark_read=False)
    r = d.run_pass("gemini-1", "%1")
    assert sink.texts() == ["[from team-lead] bare"]  # same identity twice: once
    assert len(r.delivered) == 1
    d.run_pass("gemini-1", "%1")
    assert len(sink.texts()) == 1


def test_mark_read_is_batched(mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink) -> None:
    d = Deliverer(mailbox, ledger, sink, mark_read_every=3600, mark_read_batch=3)
    mailbox.send("gemini-1", sender="team-lead", text="first")
    d.run_pass("gemini-1", "%1")
    assert mailbox.read_raw("gemini-1") == []  # the first is marked (pruned) at once
    for i in range(2):
        mailbox.send("gemini-1", sender="team-lead", text=f"m{i}")
        d.run_pass("gemini-1", "%1")
    assert len(mailbox.read_raw("gemini-1")) == 2  # batched: not yet marked
    assert d.mark_due() == []
    assert d.mark_due(now=10**9) == ["gemini-1"]  # due once the interval has passed
    mailbox.send("gemini-1", sender="team-lead", text="m2")
    d.run_pass("gemini-1", "%1")  # the batch is full: all three marked
    assert mailbox.read_raw("gemini-1") == []
    assert len(sink.texts()) == 4  # each delivered exactly once throughout


def test_flush_marks_what_is_left(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    d = Deliverer(mailbox, ledger, sink, mark_read_every=3600, mark_read_batch=100)
    for i in range(3):
        mailbox.send("gemini-1", sender="team-lead", text=f"m{i}")
        d.run_pass("gemini-1", "%1")
    assert len(mailbox.read_raw("gemini-1")) == 2  # the first marked, two waiting
    d.flush()
    assert mailbox.read_raw("gemini-1") == []


def test_a_message_in_flight_at_a_crash_is_submitted_then_delivered_again(
    mailbox: Mailbox, ledger: SqliteLedger, sink: RecordingSink
) -> None:
    """Whatever the dead process left in the input is submitted through the contract's
    ``submit`` (every sink has one: no probing), then the message comes again."""
    mailbox.send("gemini-1", sender="team-lead", text="x")
    [entry] = mailbox.read_raw("gemini-1")
    ledger.begin(mailbox.paths.team, "gemini-1", message_identity(entry))  # then a crash
    r = _deliverer(mailbox, ledger, sink).run_pass("gemini-1", "%1")
    assert (r.possible_duplicates, len(r.delivered)) == (1, 1)
    assert sink.submits == ["%1"]
    assert sink.texts() == ["[from team-lead] x"]
