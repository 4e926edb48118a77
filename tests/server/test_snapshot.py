"""``/status`` over two teams: what all teams share is read once, and each team's rows
show only what is its own."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest

from exomonad.server import snapshot
from exomonad.server.services import Services
from exomonad.server.snapshot import member_rows, status
from exomonad.server.workers import provision
from exomonad.teams import Mailbox, create_team, register_synthetic
from exomonad.teams.presence import IDLE_AFTER
from exomonad.util.waiting import retry_until

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


def test_member_rows_follow_the_clock_and_the_inboxes(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team's rows are built from what its config and inboxes say, kept while neither
    changes: an active member still turns idle on time, a new message shows at once."""
    paths = svc.paths("proj")
    register_synthetic(paths, "w", agent_type="gemini")
    sent = time.time() - 10
    Mailbox(paths).send("team-lead", sender="w", text="done", timestamp=_iso(sent))
    clock = [time.time()]
    monkeypatch.setattr(snapshot, "time", SimpleNamespace(time=lambda: clock[0]))

    def row(name: str) -> dict[str, Any]:
        return {r["name"]: r for r in member_rows(svc, "proj")[1]}[name]

    # Kept once the files settled (teams.filecache): from then on the rows are built
    # from the kept roster, which is what this test is about.
    retry_until(lambda: snapshot._roster(paths, clock[0]) is snapshot._roster(paths, clock[0]),
                timeout=10, message="a team's roster is never kept")  # fmt: skip
    assert row("w")["presence"] == "active"
    assert row("w")["lastEventAge"] == pytest.approx(clock[0] - sent, abs=0.1)
    assert row("team-lead")["unread"] == 1
    clock[0] = sent + IDLE_AFTER - 0.5  # the same files, later
    assert row("w")["presence"] == "active"
    clock[0] = sent + IDLE_AFTER + 0.5
    assert row("w")["presence"] == "idle"
    assert row("w")["lastEventAge"] == pytest.approx(IDLE_AFTER + 0.5, abs=0.1)
    Mailbox(paths).send("team-lead", sender="w", text="more", timestamp=_iso(clock[0] - 1))
    assert (row("w")["presence"], row("team-lead")["unread"]) == ("active", 2)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
