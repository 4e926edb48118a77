"""``/health``: what a killed ExoMonad left behind is reported by the next server."""

from __future__ import annotations

import os
from pathlib import Path

from exomonad.bridge.ledger import SqliteLedger
from exomonad.panes import FakePaneBackend
from exomonad.server.app import health
from exomonad.server.config import ProjectConfig
from exomonad.server.services import Services
from exomonad.teams import TeamPaths, create_team
from tests.support.git import make_repo


def test_the_next_server_reports_what_a_killed_one_left(tmp_path: Path) -> None:
    state = make_repo(tmp_path / "project") / ".exomonad"
    state.mkdir()
    root = tmp_path / "claude"
    team = TeamPaths("proj", root)
    create_team(team)
    # The killed server was typing a message (its ledger row is still in flight) and
    # held an inbox lock (its journal entry names a pid that is gone).
    ledger = SqliteLedger(state / "ledger.db")
    ledger.begin("proj", "w1", "m-1")
    ledger.close()
    lock = team.inbox("w1").with_name("w1.json.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.mkdir()
    (state / "locks-held").mkdir()
    (state / "locks-held" / "999999999-0").write_text(f"{lock}\n{lock.stat().st_mtime_ns}\n")
    svc = Services(state, root=root, backend=FakePaneBackend(), config=ProjectConfig())
    try:
        counters = health(svc)["counters"]
    finally:
        svc.close()
    assert (counters["recovered_in_flight"], counters["recovered_locks"]) == (1, 1)
    assert not lock.exists()
    assert os.listdir(state / "locks-held") == []
