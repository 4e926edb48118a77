"""The stdin backend against a stand-in headless lead (the real Claude Code twin is
``tests/e2e/test_claude_server.py``, through ``exomonad relay``)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.errors import PaneError
from exomonad.panes import PaneBackend, StdinBackend, TextSink
from exomonad.panes.stdin import user_turn
from exomonad.util.waiting import retry_until
from tests.support.jsonl import whole_records

FAKE_LEAD = Path(__file__).parents[1] / "support" / "fake_lead.py"

pytestmark = pytest.mark.timeout(60)


def _turns(path: Path) -> list[dict[str, Any]]:
    return whole_records(path)


def _texts(path: Path) -> list[str]:
    return [t["message"]["content"][0]["text"] for t in _turns(path)]


@pytest.fixture
def lead(tmp_path: Path) -> Iterator[tuple[StdinBackend, str, Path]]:
    """A stand-in lead fed by a backend: (backend, its id, the file of its turns)."""
    backend, out = StdinBackend(), tmp_path / "turns.jsonl"
    target = backend.spawn([sys.executable, str(FAKE_LEAD), str(out)])
    yield backend, target, out
    proc = backend.process(target)
    backend.close(target)
    proc.wait(10)


def test_a_message_is_one_user_turn(lead: tuple[StdinBackend, str, Path]) -> None:
    backend, target, out = lead
    assert isinstance(backend, TextSink)
    assert not isinstance(backend, PaneBackend)  # no keys, no screen
    assert int(target) == backend.process(target).pid  # its id: the child's pid
    text = "two lines\nand \x1b[31m escapes, sent as they are"
    receipt = backend.deliver(target, text, sender="gemini-1")
    assert (receipt.pane, receipt.typed, receipt.spool_path) == (target, text, None)
    assert (receipt.submitted, receipt.enter_attempts) == (True, 0)
    assert receipt.submitted_at == receipt.typed_at
    backend.submit(target)  # nothing pending: a no-op
    retry_until(lambda: len(_turns(out)) == 1, timeout=10)
    assert _texts(out) == [text]


def test_writes_never_interleave(lead: tuple[StdinBackend, str, Path]) -> None:
    backend, target, out = lead
    texts = [f"turn {i} " + "y" * 70_000 for i in range(4)]  # each more than a pipe buffer
    threads = [threading.Thread(target=backend.deliver, args=(target, t)) for t in texts]
    threads.append(threading.Thread(target=backend.write, args=(target, user_turn("raw"))))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    retry_until(lambda: len(_turns(out)) == 5, timeout=20)  # every line whole JSON
    assert sorted(_texts(out)) == sorted([*texts, "raw"])


def test_an_exited_lead_is_a_pane_error(lead: tuple[StdinBackend, str, Path]) -> None:
    backend, target, _ = lead
    backend.deliver(target, "QUIT")  # the stand-in exits with 3
    assert backend.process(target).wait(10) == 3
    assert not backend.exists(target)
    with pytest.raises(PaneError, match="has exited"):
        backend.deliver(target, "too late")
    with pytest.raises(PaneError, match="has exited"):
        backend.submit(target)


def test_a_closed_stdin_and_unknown_ids_are_pane_errors(
    lead: tuple[StdinBackend, str, Path],
) -> None:
    backend, target, _ = lead
    backend.close(target)
    assert not backend.exists(target)
    with pytest.raises(PaneError, match="no longer reads its stdin"):
        backend.deliver(target, "hello")
    with pytest.raises(PaneError, match="not a child this backend feeds"):
        backend.deliver("1", "hello")  # init: a real pid, not ours


def test_spawn_passes_cwd_env_and_a_custom_encoding(tmp_path: Path) -> None:
    backend = StdinBackend(encode=lambda text: text.encode() + b"\n")
    out = tmp_path / "seen.txt"
    show = ("import os, sys; line = sys.stdin.readline().strip(); open(sys.argv[1], 'w')"
            ".write(f\"{os.getcwd()} {os.environ['EXO_TEST_VAR']} {line}\")")  # fmt: skip
    target = backend.spawn([sys.executable, "-c", show, str(out)], cwd=tmp_path,
                           env={"EXO_TEST_VAR": "v"})  # fmt: skip
    backend.deliver(target, "plain")
    assert backend.process(target).wait(10) == 0
    assert not backend.exists(target)
    assert out.read_text().split() == [str(tmp_path), "v", "plain"]
