"""The SQLite delivery ledger."""

from __future__ import annotations

from pathlib import Path

from exomonad.bridge.ledger import SqliteLedger


def test_delivered_subset(ledger: SqliteLedger) -> None:
    ledger.begin("t", "m", "a")
    ledger.mark_delivered("t", "m", "a")
    ledger.begin("t", "m", "b")  # in flight only
    assert ledger.delivered("t", "m", ["a", "b", "c"]) == {"a"}
    assert ledger.delivered("t", "other", ["a"]) == set()
    assert ledger.delivered("t2", "m", ["a"]) == set()


def test_many_ids_are_chunked(ledger: SqliteLedger) -> None:
    ids = [f"id-{i}" for i in range(1200)]
    for i in ids[::2]:
        ledger.begin("t", "m", i)
        ledger.mark_delivered("t", "m", i)
    assert ledger.delivered("t", "m", ids) == set(ids[::2])


def test_begin_reports_crash_leftovers(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    first = SqliteLedger(path)
    assert first.begin("t", "m", "x") is False
    first.close()  # "crash": never marked delivered
    second = SqliteLedger(path)
    assert second.recovered_in_flight == 1
    assert second.begin("t", "m", "x") is True
    second.mark_delivered("t", "m", "x")
    rec = second.records("t", "m")[0]
    assert (rec.state, rec.attempts) == ("delivered", 2)
    second.close()


def test_undeliverable_then_delivered(ledger: SqliteLedger) -> None:
    ledger.mark_undeliverable("t", "m", "x", "no pane")
    assert ledger.counts() == {"in_flight": 0, "delivered": 0, "undeliverable": 1}
    assert ledger.records()[0].error == "no pane"
    ledger.begin("t", "m", "x")
    ledger.mark_delivered("t", "m", "x")
    rec = ledger.records()[0]
    assert (rec.state, rec.error) == ("delivered", None)
    assert rec.delivered_at is not None


def test_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    a = SqliteLedger(path)
    a.begin("t", "m", "x")
    a.mark_delivered("t", "m", "x")
    a.close()
    b = SqliteLedger(path)
    assert b.delivered("t", "m", ["x"]) == {"x"}
    assert b.recovered_in_flight == 0
    b.close()
