"""The pty backend against real programs on real ptys (the reader stand-in agent)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exomonad.errors import PaneError
from exomonad.panes import ENTER_DELAY_ENV, PaneBackend, PtyBackend
from exomonad.util.waiting import retry_until
from tests.support.jsonl import whole_records
from tests.support.tmux import READER

pytestmark = pytest.mark.timeout(60)


@dataclass
class Reader:
    """The reader agent on a pty of ``backend``, recording lines to ``out``."""

    backend: PtyBackend
    pane: str
    out: Path

    def records(self) -> list[dict[str, Any]]:
        return whole_records(self.out)

    def lines(self) -> list[str]:
        return [r["line"] for r in self.records() if "line" in r]


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PtyBackend]:
    monkeypatch.delenv(ENTER_DELAY_ENV, raising=False)
    pty = PtyBackend(spool_dir=tmp_path / "spool", enter_delay=0.01)
    yield pty
    for pane in pty.panes():
        pty.kill(pane)


def start_reader(backend: PtyBackend, out: Path) -> Reader:
    pane = backend.spawn([sys.executable, str(READER), str(out)])
    reader = Reader(backend, pane, out)
    retry_until(lambda: "ready>" in backend.capture(pane), timeout=20, message="reader not up")
    return reader


def test_a_message_is_typed_once_and_its_submission_confirmed(
    backend: PtyBackend, tmp_path: Path
) -> None:
    reader = start_reader(backend, tmp_path / "out.jsonl")
    receipt = backend.deliver(reader.pane, "hello \x1b[31mworld; rm -rf /\x03")
    assert (receipt.pane, receipt.typed) == (reader.pane, "hello world; rm -rf /")
    assert (receipt.submitted, receipt.enter_attempts, receipt.spool_path) == (True, 1, None)
    retry_until(lambda: reader.lines() != [], timeout=10)
    assert reader.lines() == ["hello world; rm -rf /"]
    assert not any("signal" in r for r in reader.records())  # ^C was never typed
    assert "hello world; rm -rf /" in backend.capture(reader.pane)


def test_the_pane_id_is_the_programs_terminal(backend: PtyBackend) -> None:
    pane = backend.spawn([sys.executable, "-c", "import os; print(os.ttyname(0)); input()"])
    assert pane.startswith("/dev/pts/")
    assert isinstance(backend, PaneBackend)
    retry_until(lambda: pane in backend.capture(pane), timeout=20, message="no tty printed")
    assert backend.exists(pane)
    assert backend.capture(pane).splitlines()[0] == pane


def test_enter_waits_exomonad_enter_delay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENTER_DELAY_ENV, "0.3")
    backend = PtyBackend(spool_dir=tmp_path / "spool")
    assert backend.enter_delay == 0.3
    try:
        reader = start_reader(backend, tmp_path / "out.jsonl")
        receipt = backend.deliver(reader.pane, "paced")
        retry_until(lambda: reader.lines() == ["paced"], timeout=10)
    finally:
        for pane in backend.panes():
            backend.kill(pane)
    [line] = [r for r in reader.records() if "line" in r]
    # the reader had read the text ~0.3 s before the Enter reached it
    assert line["t_end"] - line["t_first"] >= 0.29
    assert receipt.submitted_at is not None
    assert receipt.submitted_at - receipt.typed_at >= 0.29


def test_long_or_multiline_text_is_spooled(backend: PtyBackend, tmp_path: Path) -> None:
    reader = start_reader(backend, tmp_path / "out.jsonl")
    receipt = backend.deliver(reader.pane, "line one\nline two", sender="team-lead")
    assert receipt.spool_path is not None
    assert receipt.spool_path.read_text() == "line one\nline two"
    retry_until(lambda: reader.lines() == [receipt.typed], timeout=10)
    assert str(receipt.spool_path) in receipt.typed


def test_an_unconfirmed_enter_is_pressed_again(tmp_path: Path) -> None:
    """A program that shows nothing after Enter: the shared retry, then submitted=False."""
    backend = PtyBackend(enter_delay=0, echo_timeout=0.05, submit_timeout=0.1,
                         spool_dir=tmp_path / "spool")  # fmt: skip
    silent = "import sys, time, tty; tty.setraw(0); print('quiet', flush=True); time.sleep(60)"
    try:
        pane = backend.spawn([sys.executable, "-c", silent])
        retry_until(lambda: "quiet" in backend.capture(pane), timeout=20)
        receipt = backend.deliver(pane, "anyone?")
    finally:
        for pane in backend.panes():
            backend.kill(pane)
    assert (receipt.submitted, receipt.enter_attempts) == (False, 3)


def test_concurrent_deliveries_never_interleave(backend: PtyBackend, tmp_path: Path) -> None:
    reader = start_reader(backend, tmp_path / "out.jsonl")
    texts = [f"message {i} " + "x" * 200 for i in range(6)]
    threads = [threading.Thread(target=backend.deliver, args=(reader.pane, t)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    retry_until(lambda: len(reader.lines()) >= 6, timeout=20, message=f"{reader.lines()}")
    assert sorted(reader.lines()) == sorted(texts)


def test_a_dead_program_is_a_pane_error(backend: PtyBackend) -> None:
    pane = backend.spawn([sys.executable, "-c", "pass"])
    retry_until(lambda: not backend.exists(pane), timeout=20, message="program still runs")
    with pytest.raises(PaneError, match="is dead"):
        backend.deliver(pane, "too late")
    with pytest.raises(PaneError, match="is dead"):
        backend.submit(pane)
    backend.kill(pane)  # a dead pane can still be closed
    with pytest.raises(PaneError, match="not a pty this process owns"):
        backend.kill(pane)


def test_unknown_panes_and_targets_are_refused(backend: PtyBackend) -> None:
    tty = os.ttyname(0) if os.isatty(0) else "/dev/pts/999999"
    assert not backend.exists(tty)  # a real terminal, but not one of ours
    with pytest.raises(PaneError, match="not a pty this process owns"):
        backend.deliver(tty, "hello")
    with pytest.raises(ValueError, match="no target"):
        backend.spawn(["true"], target="%1")


def test_spawn_passes_cwd_and_env(backend: PtyBackend, tmp_path: Path) -> None:
    show = "import os; print(os.getcwd(), os.environ['EXO_TEST_VAR'], os.environ['PATH'] != '')"
    pane = backend.spawn([sys.executable, "-c", show], cwd=tmp_path, env={"EXO_TEST_VAR": "v1"})
    retry_until(lambda: f"{tmp_path} v1 True" in backend.capture(pane), timeout=20,
                message=backend.capture(pane))  # fmt: skip


def test_wait_keeps_the_exit_status_when_alive_reaped_the_program(backend: PtyBackend) -> None:
    """`exomonad teammate` waits for its agent while deliveries ask whether it lives: the
    status must survive whichever of the two reaps the program (it used to become 0)."""
    pane = backend.spawn([sys.executable, "-c", "raise SystemExit(7)"])
    retry_until(lambda: not backend.exists(pane), timeout=20)  # alive() reaped it
    assert backend.agent(pane).wait() == 7


def test_terminate_returns_once_a_program_deaf_to_sigterm_has_gone(backend: PtyBackend) -> None:
    """The teammate releases the worker's worktree right after ``terminate``: a program
    that ignores SIGTERM is killed, and ``terminate`` returns only once it has gone."""
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    pane = backend.spawn([sys.executable, "-c", deaf])
    agent = backend.agent(pane)
    retry_until(agent.alive, timeout=10)
    agent.terminate(grace=0.2)
    assert not agent.alive()
