"""Tests for :class:`FakePaneBackend`: the shared delivery algorithm, in memory."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from exomonad.errors import PaneError
from exomonad.panes import DeliveryReceipt, FakePaneBackend, PaneBackend


@pytest.fixture
def fake(tmp_path: Path) -> FakePaneBackend:
    return FakePaneBackend(spool_dir=tmp_path / "spool")


def test_is_a_pane_backend(fake: FakePaneBackend) -> None:
    assert isinstance(fake, PaneBackend)


def test_deliver_types_sanitised_text_and_submits(fake: FakePaneBackend) -> None:
    pane = fake.add_pane()
    receipt = fake.deliver(pane, "hi \x1b[31mthere\x03 `ls` $(id) 日本 🎉")
    assert receipt.typed == "hi there `ls` $(id) 日本 🎉"
    assert receipt.submitted
    assert receipt.enter_attempts == 1
    assert receipt.spool_path is None
    assert receipt.started_at <= receipt.typed_at <= (receipt.submitted_at or 0)
    assert fake.submitted(pane) == [receipt.typed]
    assert fake.deliveries(pane) == [receipt]
    assert fake.pane(pane).input == ""


def test_long_and_multiline_messages_are_spooled(fake: FakePaneBackend) -> None:
    pane = fake.add_pane()
    text = "line one\nline two"
    receipt = fake.deliver(pane, text, sender="lead")
    assert receipt.spool_path is not None
    assert receipt.spool_path.read_text("utf-8") == text
    assert fake.submitted(pane) == [
        f"[exomonad] message from lead is in {receipt.spool_path} — read it"
    ]
    big = "x" * 5000
    assert fake.deliver(pane, big).spool_path is not None


def test_unconfirmed_enter_is_retried_then_reported(tmp_path: Path) -> None:
    fake = FakePaneBackend(spool_dir=tmp_path, submit_timeout=0.02, max_enter_attempts=2)
    pane = fake.add_pane(ignores_enter=True)
    receipt = fake.deliver(pane, "anyone there?")
    assert not receipt.submitted
    assert receipt.submitted_at is None
    assert receipt.enter_attempts == 2
    assert fake.pane(pane).input == "anyone there?"


def test_an_enter_taken_as_a_newline_is_pressed_again(tmp_path: Path) -> None:
    """The pane changed after Enter (a newline joined the input), but the text is still
    in the input: not a submission. Enter is pressed again and the line goes, once."""
    fake = FakePaneBackend(spool_dir=tmp_path, submit_timeout=0.02)
    pane = fake.add_pane()
    fake.pane(pane).newline_enters = 1
    receipt = fake.deliver(pane, "the task")
    assert receipt.submitted
    assert receipt.enter_attempts == 2
    assert fake.submitted(pane) == ["the task\n"]
    assert fake.pane(pane).input == ""


def test_an_input_that_keeps_the_text_is_reported_unsubmitted(tmp_path: Path) -> None:
    fake = FakePaneBackend(spool_dir=tmp_path, submit_timeout=0.02, max_enter_attempts=3)
    pane = fake.add_pane()
    fake.pane(pane).newline_enters = 5
    receipt = fake.deliver(pane, "the task")
    assert not receipt.submitted
    assert receipt.enter_attempts == 3
    assert fake.submitted(pane) == []


def test_missing_dead_and_deaf_panes_raise(fake: FakePaneBackend) -> None:
    with pytest.raises(PaneError, match="does not exist"):
        fake.deliver("fake:404", "hello")
    dead = fake.add_pane()
    fake.set_dead(dead)
    with pytest.raises(PaneError, match="dead"):
        fake.deliver(dead, "hello")
    deaf = fake.add_pane(accepts_input=False)
    with pytest.raises(PaneError, match="input disabled"):
        fake.send_text(deaf, "hello")
    assert not fake.exists("fake:404")
    assert not fake.exists(dead)
    assert not fake.exists(deaf)
    assert fake.deliveries(dead) == []


def test_send_text_then_submit(fake: FakePaneBackend) -> None:
    pane = fake.add_pane()
    assert fake.send_text(pane, "two\nlines\t!") == "two lines    !"
    assert fake.submitted(pane) == []
    assert fake.capture(pane) == "two lines    !"
    fake.submit(pane)
    assert fake.submitted(pane) == ["two lines    !"]


def test_spawn_records_and_kill_removes(fake: FakePaneBackend) -> None:
    pane = fake.spawn(["gemini", "--yolo"], cwd="/work", env={"A": "1"}, name="w1", target="s")
    state = fake.pane(pane)
    assert (state.command, state.cwd, state.env, state.name, state.target) == (
        ["gemini", "--yolo"],
        "/work",
        {"A": "1"},
        "w1",
        "s",
    )
    assert fake.exists(pane)
    fake.kill(pane)
    assert not fake.exists(pane)
    with pytest.raises(PaneError):
        fake.kill(pane)
    with pytest.raises(ValueError, match="empty"):
        fake.spawn([])


def test_concurrent_deliveries_do_not_interleave(fake: FakePaneBackend) -> None:
    pane = fake.add_pane()
    messages = {who: [f"{who * 50} #{i}" for i in range(20)] for who in "AB"}
    receipts: list[DeliveryReceipt] = []

    def run(who: str) -> None:
        for text in messages[who]:
            receipts.append(fake.deliver(pane, text))

    threads = [threading.Thread(target=run, args=(who,)) for who in messages]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(fake.submitted(pane)) == sorted(messages["A"] + messages["B"])
    assert all(r.submitted for r in receipts)


def test_text_before_the_first_question_mark_is_seen_before_the_rest_is_typed(
    tmp_path: Path,
) -> None:
    """Gemini CLI drops a "?" that reaches its key handler while its input still looks
    empty to it (a render behind): the text before the first "?" is typed, and seen on
    the screen, before the rest (the real twin: tests/e2e/test_gemini_worker_server.py
    ::test_lead_text_with_question_and_exclamation_marks_reaches_gemini_intact)."""
    pieces: list[tuple[str, str]] = []  # (what was typed, what the screen showed then)

    class Recording(FakePaneBackend):
        def _type(self, pane: str, line: str) -> None:
            pieces.append((line, self.capture(pane)))
            super()._type(pane, line)

    fake = Recording(spool_dir=tmp_path / "spool", echo_timeout=1.0)
    pane = fake.add_pane()
    receipt = fake.deliver(pane, "[from lead] any news? and then? ok")
    assert fake.submitted(pane) == ["[from lead] any news? and then? ok"]
    assert receipt.submitted
    assert pieces == [("[from lead] any news", ""),
                      ("? and then? ok", "[from lead] any news")]  # fmt: skip
    pieces.clear()
    fake.deliver(pane, "no question here")
    assert [p[0] for p in pieces] == ["no question here"]  # one piece
