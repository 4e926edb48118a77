"""What a person approves in the popup is what needs approving, next to the question.

Found probing (a real ``exomonad serve``, a tmux client of 200x50):

* ``rm -rf ../../src; true '<20000 spaces>'; sudo apt-get install -y jq`` escalated to a
  person with a reason naming both the delete and the ``sudo``, but the popup printed the
  reason first, then every action (the allowed ``true '<pad>'`` included) whole: the
  popup (no scrollback) showed blank lines and the ``sudo``'s JSON above ``approve?``.
  Typing ``y`` ran the delete.
* 200 escalated parts: the one that matters must not be among those cut.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from typer.testing import CliRunner

from exomonad.cli.main import app
from exomonad.policy.decisions import Deny
from exomonad.server.identity import Identity
from exomonad.util.waiting import retry_until
from tests.support.gate import worker_gate

PADDED = f"rm -rf ../../src; true '{' ' * 20000}'; sudo apt-get install -y jq"
#: The popup's inside on a 200x50 client (80% x 60%, less the border).
WIDTH, HEIGHT = 158, 28


def _rows(text: str, width: int) -> list[str]:
    """``text`` as a terminal ``width`` columns wide shows it: one row per ``width``
    cells of each line."""
    rows: list[str] = []
    for line in text.split("\n"):
        row, used = "", 0
        for c in line:
            size = cell_len(c)
            if used + size > width:
                rows.append(row)
                row, used = "", 0
            row, used = row + c, used + size
        rows.append(row)
    return rows


def popup(tmp_path: Path, tool: str, data: dict[str, Any], *, env: dict[str, str]) -> str:
    """What ``exomonad approvals prompt`` prints for a worker's call (through the real
    gatekeeper, answered ``n``); the call must escalate to a person."""
    wg = worker_gate(tmp_path, popup=False)
    state, store, req = wg.state, wg.store, wg.request(tool, data)
    got: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: got.update(v=wg.gate.check(req, Identity("w1",
                              "worker", parent="team-lead"), None)))  # fmt: skip
    worker.start()
    try:
        retry_until(lambda: store.list_pending() != [], timeout=20)
        pending = store.list_pending()[0]
        out = CliRunner().invoke(app, ["approvals", "prompt", pending.id, "--state-dir",
                                       str(state)], input="n\n\n", env=env)  # fmt: skip
        assert out.exit_code == 0, out.stdout
    finally:
        store.stop_waiting()  # answered, or the check failed: the call waits no longer
        worker.join(30)
        store.close()
    assert isinstance(got["v"].decision, Deny), got
    return out.stdout


def test_the_popup_shows_every_part_needing_approval_right_above_the_question(
    tmp_path: Path,
) -> None:
    shown = popup(tmp_path, "Bash", {"command": PADDED},
                   env={"COLUMNS": str(WIDTH), "LINES": str(HEIGHT)})  # fmt: skip
    before = shown[: shown.index("approve? [y/n]")]
    rows = _rows(before.rstrip("\n"), WIDTH)
    assert len(rows) < HEIGHT, rows  # all of it, and the question, in the popup
    last = "\n".join(rows[-8:])
    assert f"delete -r {tmp_path}/proj/src" in last, rows
    assert "sudo apt-get install -y jq" in last, rows
    assert "why:" in rows[-1] or "why:" in rows[-2], rows  # the reason last
    assert "1 allowed part not shown" in before, rows  # the padded `true` is counted
    assert " " * 40 not in before


def test_a_small_popup_still_shows_the_parts_and_the_reason(tmp_path: Path) -> None:
    """40x12: the parts and the reason are cut to fit (with the count of what is cut),
    never pushed out of view."""
    command = f"sudo apt-get install -y {'x' * 5000}; rm -rf ../../src"
    shown = popup(tmp_path, "Bash", {"command": command}, env={"COLUMNS": "40", "LINES": "12"})
    before = shown[: shown.index("approve? [y/n]")]
    rows = _rows(before.rstrip("\n"), 40)
    assert len(rows) < 12, rows
    assert "delete -r" in before
    assert "more characters)" in before
    assert "why:" in before


def test_many_parts_show_the_odd_one_and_the_count(tmp_path: Path) -> None:
    """200 escalated ``sudo true N`` and one delete last: the delete is shown, the rest
    counted (``… and N more parts``), and all of it fits."""
    command = "; ".join(f"sudo true {i}" for i in range(200)) + "; rm -rf ../../src"
    shown = popup(tmp_path, "Bash", {"command": command},
                   env={"COLUMNS": str(WIDTH), "LINES": str(HEIGHT)})  # fmt: skip
    before = shown[: shown.index("approve? [y/n]")]
    assert len(_rows(before.rstrip("\n"), WIDTH)) < HEIGHT
    assert f"  - delete -r {tmp_path}/proj/src" in before
    assert "more parts (exomonad approvals list)" in before
