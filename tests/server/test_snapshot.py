"""``/status`` over two teams: what all teams share is read once, and each team's rows
show only what is its own."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from exomonad.server.services import Services
from exomonad.server.snapshot import status
from exomonad.server.workers import provision
from exomonad.teams import create_team, register_synthetic

T = TypeVar("T")


def _counted(calls: Counter[str], name: str, read: Callable[[], T]) -> Callable[[], T]:
    def wrapper() -> T:
        calls[name] += 1
        return read()

    return wrapper


def _pr(number: int) -> dict[str, Any]:
    return {"number": number, "state": "open", "summary": f"#{number} open"}


def test_two_teams_share_one_read_and_keep_their_own_rows(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_team(svc.paths("side"))
    provision(svc, "alice", "proj", runtime="gemini")
    provision(svc, "bob", "side", runtime="gemini")
    for team in ("proj", "side"):  # the same names in both teams, each with its own data
        for name in ("alice", "bob", "w"):
            register_synthetic(svc.paths(team), name, agent_type="gemini")
    prs = {("proj", "w"): _pr(1), ("side", "w"): _pr(2), ("side", "alice"): _pr(3)}
    svc.watcher.stats.pending.update({"proj/w": 2, "side/bob": 5})
    svc.approvals.create(agent="bob", role="worker", action={"tool": "Bash"}, reason="why")
    calls: Counter[str] = Counter()
    monkeypatch.setattr(svc.github, "pull_requests", _counted(calls, "prs", lambda: prs))
    for name in ("list_pending", "identities"):
        owner = svc.approvals if name == "list_pending" else svc.tokens
        monkeypatch.setattr(owner, name, _counted(calls, name, getattr(owner, name)))

    doc = status(svc)

    teams = {t["name"]: {m["name"]: m for m in t["members"]} for t in doc["teams"]}
    assert sorted(teams) == ["proj", "side"]
    rows = {(team, name): teams[team][name] for team in teams for name in ("alice", "bob", "w")}
    assert {k for k, row in rows.items() if row["worker"]} == {("proj", "alice"), ("side", "bob")}
    assert rows["proj", "alice"]["branch"] == "exo/alice"
    assert "branch" not in rows["side", "alice"]  # no token in side
    shown = {k: row["pullRequest"]["number"] for k, row in rows.items() if "pullRequest" in row}
    assert shown == {("proj", "w"): 1, ("side", "w"): 2, ("side", "alice"): 3}
    pending = {k: row["pending"] for k, row in rows.items() if row["pending"]}
    assert pending == {("proj", "w"): 2, ("side", "bob"): 5}
    assert [a["agent"] for a in doc["approvals"]] == ["bob"]
    assert doc["server"]["approvals_pending"] == 1
    assert doc["policy"] == doc["server"]["policy"]
    # One read each per snapshot, however many teams (identities also lists the teams).
    assert calls == {"prs": 1, "list_pending": 1, "identities": 2}
