"""Presence: ACTIVE / IDLE / TERMINATED from the latest event, at explicit times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from exomonad.errors import TeamNotFoundError
from exomonad.teams.atomic import dump_json
from exomonad.teams.paths import TeamPaths
from exomonad.teams.presence import (
    IDLE_AFTER,
    MemberPresence,
    Presence,
    inbox_digest,
    settled_until,
    team_presence,
)
from exomonad.teams.protocol import IdleNotification, ShutdownApproved, encode
from exomonad.util.waiting import retry_until
from tests.teams.conftest import write_config

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def setup_team(paths: TeamPaths, joined: dict[str, datetime | None]) -> None:
    members: list[dict[str, Any]] = []
    for name, when in joined.items():
        m: dict[str, Any] = {"agentId": f"{name}@{paths.team}", "name": name}
        if when is not None:
            m["joinedAt"] = ms(when)
        members.append(m)
    write_config(
        paths, {"name": paths.team, "leadAgentId": f"team-lead@{paths.team}", "members": members}
    )


def inbox(paths: TeamPaths, owner: str, entries: list[dict[str, Any]]) -> None:
    paths.inboxes_dir.mkdir(parents=True, exist_ok=True)
    paths.inbox(owner).write_bytes(dump_json(entries))


def msg(sender: str, when: datetime, text: str = "hello") -> dict[str, Any]:
    return {"from": sender, "text": text, "timestamp": iso(when)}


def idle(sender: str, when: datetime) -> dict[str, Any]:
    return msg(sender, when, encode(IdleNotification(from_=sender, timestamp=iso(when))))


def approved(sender: str, when: datetime) -> dict[str, Any]:
    body = ShutdownApproved(request_id=f"shutdown-1@{sender}", from_=sender, timestamp=iso(when))
    return msg(sender, when, encode(body))


def state(paths: TeamPaths, name: str, **kwargs: Any) -> Presence:
    return team_presence(paths, now=NOW, **kwargs)[name].state


def test_presence_values() -> None:
    assert [p.value for p in Presence] == ["active", "idle", "terminated"]
    assert Presence("idle") is Presence.IDLE
    assert IDLE_AFTER == 300.0


def test_member_without_events_counts_from_joined_at(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "old": ago(301), "new": ago(299), "never": None})
    result = team_presence(team, now=NOW)
    assert set(result) == {"team-lead", "old", "new", "never"}
    assert result["new"] == MemberPresence("new", Presence.ACTIVE, ago(299))
    assert result["old"] == MemberPresence("old", Presence.IDLE, ago(301))
    assert result["never"] == MemberPresence("never", Presence.IDLE, None)
    assert result["team-lead"].state is Presence.ACTIVE


def test_recent_message_is_active_and_decays_to_idle(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(3600), "w": ago(3600)})
    inbox(team, "team-lead", [msg("w", ago(60))])
    assert state(team, "w") is Presence.ACTIVE
    assert team_presence(team, now=NOW)["w"].last_event == ago(60)
    assert state(team, "w", idle_after=60) is Presence.ACTIVE  # boundary: <= is still active
    assert state(team, "w", idle_after=59.9) is Presence.IDLE
    later = NOW + timedelta(seconds=IDLE_AFTER)
    assert team_presence(team, now=later)["w"].state is Presence.IDLE


def test_idle_notification_is_idle_even_when_recent(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    inbox(team, "team-lead", [msg("w", ago(30)), idle("w", ago(1))])
    result = team_presence(team, now=NOW)["w"]
    assert result.state is Presence.IDLE
    assert result.last_event == ago(1)


def test_shutdown_approved_is_terminated_forever(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    inbox(team, "team-lead", [msg("w", ago(5000)), approved("w", ago(4000))])
    assert state(team, "w") is Presence.TERMINATED
    assert state(team, "w", idle_after=1e9) is Presence.TERMINATED


def test_latest_event_wins_across_inboxes(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600), "peer": ago(3600)})
    inbox(team, "team-lead", [idle("w", ago(100))])
    inbox(team, "peer", [msg("w", ago(20))])  # w spoke to a peer after going idle
    assert state(team, "w") is Presence.ACTIVE
    inbox(team, "user", [approved("w", ago(10))])
    assert state(team, "w") is Presence.TERMINATED


def test_order_in_file_does_not_matter_only_timestamps(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    inbox(team, "team-lead", [idle("w", ago(5)), msg("w", ago(50))])
    assert state(team, "w") is Presence.IDLE


def test_messages_to_a_member_do_not_count_as_its_events(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    inbox(team, "w", [msg("team-lead", ago(1))])  # the lead wrote to w; w said nothing
    assert state(team, "w") is Presence.IDLE
    assert state(team, "team-lead") is Presence.ACTIVE


def test_bad_entries_and_corrupt_inboxes_are_skipped(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    inbox(
        team,
        "team-lead",
        [
            {"from": "w", "text": "no timestamp"},
            {"from": "w", "text": "bad", "timestamp": "yesterday"},
            {"from": 5, "text": "x", "timestamp": iso(ago(1))},
            {"from": "w", "text": 7, "timestamp": iso(ago(1000))},  # non-text: plain event
        ],
    )
    team.inbox("broken").write_bytes(b"{not json")
    team.inbox("object").write_bytes(b"{}")
    result = team_presence(team, now=NOW)["w"]
    assert result.state is Presence.IDLE
    assert result.last_event == ago(1000)


def test_naive_timestamps_are_utc(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    naive = (NOW - timedelta(seconds=30)).replace(tzinfo=None).isoformat()
    inbox(team, "team-lead", [{"from": "w", "text": "x", "timestamp": naive}])
    result = team_presence(team, now=NOW)["w"]
    assert result.state is Presence.ACTIVE
    assert result.last_event == ago(30)


def test_archives_and_temp_files_are_not_read(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(3600)})
    team.inboxes_dir.mkdir(parents=True, exist_ok=True)
    team.archive("team-lead").write_bytes(dump_json(msg("w", ago(1))) + b"\n")
    (team.inboxes_dir / "team-lead.json.tmp.0badf00d").write_bytes(dump_json([msg("w", ago(1))]))
    assert state(team, "w") is Presence.IDLE


def test_missing_inboxes_dir_is_fine(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10)})
    team.inboxes_dir.rmdir()
    assert state(team, "team-lead") is Presence.ACTIVE


def test_only_config_members_are_reported(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(10)})
    inbox(team, "team-lead", [msg("stranger", ago(1))])
    assert set(team_presence(team, now=NOW)) == {"team-lead"}


def test_default_now_is_the_current_time(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": datetime.now(UTC) - timedelta(seconds=5)})
    assert team_presence(team)["team-lead"].state is Presence.ACTIVE


def test_missing_team(root: Any) -> None:
    with pytest.raises(TeamNotFoundError):
        team_presence(TeamPaths("ghost", root), now=NOW)


def test_settled_until_is_when_the_first_active_member_turns_idle(team: TeamPaths) -> None:
    setup_team(team, {"team-lead": ago(3600), "a": ago(3600), "b": ago(3600), "q": ago(3600)})
    inbox(team, "team-lead", [msg("a", ago(60)), msg("b", ago(200)), idle("q", ago(1))])
    until = settled_until(team_presence(team, now=NOW))
    assert until == (ago(200) + timedelta(seconds=IDLE_AFTER)).timestamp()
    at_until = datetime.fromtimestamp(until, UTC)
    assert team_presence(team, now=at_until)["b"].state is Presence.ACTIVE
    assert team_presence(team, now=at_until + timedelta(milliseconds=1))["b"].state is Presence.IDLE
    # Nobody active (idle or terminated only): nothing changes with time alone.
    assert settled_until(team_presence(team, now=NOW + timedelta(hours=1))) == float("inf")


def test_a_digest_is_shared_while_no_inbox_changes_and_never_outlives_one(
    team: TeamPaths,
) -> None:
    setup_team(team, {"team-lead": ago(10), "w": ago(10)})
    inbox(team, "team-lead", [msg("w", ago(5))])
    inbox(team, "w", [msg("team-lead", ago(4))])
    # Files are kept once settled (their ctime SETTLED old): then one digest for all.
    retry_until(lambda: inbox_digest(team) is inbox_digest(team), timeout=10,
                message="the digest of unchanged inboxes is never reused")  # fmt: skip
    first = inbox_digest(team)
    assert first.unread == {"team-lead": 1, "w": 1}
    inbox(team, "w", [msg("team-lead", ago(4)), msg("team-lead", ago(1), "again")])
    changed = inbox_digest(team)  # at once, within the same kernel tick as the write
    assert changed is not first
    assert changed.unread == {"team-lead": 1, "w": 2}
    assert changed.latest["team-lead"][0] == ago(1)
    team.inbox("w").unlink()  # a file gone is a change too
    assert inbox_digest(team).unread == {"team-lead": 1}
