"""Team config: creation, synthetic members, preservation of what Claude Code owns."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import exomonad.teams.config as config_mod
from exomonad.errors import (
    CorruptFileError,
    ExomonadError,
    InvalidNameError,
    LockError,
    TeamNotFoundError,
)
from exomonad.teams import filecache
from exomonad.teams.atomic import dump_json
from exomonad.teams.config import (
    create_team,
    list_teams,
    load_config,
    load_config_in,
    register_synthetic,
    remove_all_synthetic,
    remove_synthetic,
)
from exomonad.teams.lock import lock_dir_for
from exomonad.teams.models import MEMBER_COLORS, SYNTHETIC_BACKEND, TeamConfig
from exomonad.teams.paths import TeamPaths
from tests.teams.conftest import TINY_LOCK, add_member, leftovers, read_config, write_config

CLAUDE_MEMBER: dict[str, Any] = {
    "agentId": "rust-impl@alpha",
    "name": "rust-impl",
    "agentType": "general-purpose",
    "model": "claude-sonnet-4-5",
    "prompt": "Port lexer.c",
    "color": "red",
    "planModeRequired": False,
    "joinedAt": 1760000004567,
    "tmuxPaneId": "%3",
    "cwd": "/home/dev/parser",
    "subscriptions": [],
    "backendType": "tmux",
    "isActive": True,
    "zFutureField": {"nested": [1, 2.5, None, "é"]},
}


# -- create_team -----------------------------------------------------------------------


def test_create_team_file_shape(root: Path) -> None:
    paths = TeamPaths("alpha", root)
    before = int(time.time() * 1000)
    cfg = create_team(paths, description="Port the parser", lead_session_id="sess-9")
    after = int(time.time() * 1000)
    raw = read_config(paths)
    assert list(raw) == [
        "name",
        "createdAt",
        "leadAgentId",
        "leadSessionId",
        "members",
        "description",
    ]
    assert raw["name"] == "alpha"
    assert before <= raw["createdAt"] <= after
    assert raw["leadAgentId"] == "team-lead@alpha"
    assert raw["leadSessionId"] == "sess-9"
    assert raw["description"] == "Port the parser"
    [lead] = raw["members"]
    assert lead == {
        "agentId": "team-lead@alpha",
        "name": "team-lead",
        "agentType": "team-lead",
        "joinedAt": lead["joinedAt"],
        "tmuxPaneId": "",
        "cwd": os.getcwd(),
        "subscriptions": [],
    }
    assert before <= lead["joinedAt"] <= after
    assert paths.config_file.read_bytes() == dump_json(raw)  # JSON.stringify(x, null, 2)
    assert paths.inboxes_dir.is_dir()
    assert list(paths.inboxes_dir.iterdir()) == []
    assert cfg.to_json() == raw
    assert leftovers(paths.config_dir) == []


def test_create_team_without_description(root: Path) -> None:
    paths = TeamPaths("beta", root)
    create_team(paths)
    raw = read_config(paths)
    assert "description" not in raw
    assert raw["leadSessionId"] == ""


def test_create_team_uses_both_sanitised_dirs(root: Path) -> None:
    paths = TeamPaths("My Team", root)
    create_team(paths)
    assert (root / "teams" / "my-team" / "config.json").is_file()
    assert (root / "teams" / "My-Team" / "inboxes").is_dir()
    assert read_config(paths)["name"] == "My Team"
    assert read_config(paths)["leadAgentId"] == "team-lead@My Team"


def test_create_team_refuses_an_existing_team(team: TeamPaths) -> None:
    before = team.config_file.read_bytes()
    with pytest.raises(ExomonadError, match="already exists"):
        create_team(team, description="again")
    assert team.config_file.read_bytes() == before


# -- load_config / list_teams ----------------------------------------------------------


def test_load_config(team: TeamPaths) -> None:
    cfg = load_config(team)
    assert isinstance(cfg, TeamConfig)
    assert cfg.name == "alpha"
    assert cfg.description == "unit tests"
    assert cfg.member_names() == {"team-lead"}


def test_load_config_in_reads_a_directory_whatever_team_it_names(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filecache, "SETTLED", 0.0)  # keep what is read at once
    assert load_config_in(team.root, team.config_dir) is load_config(team)  # one cache
    assert load_config_in(team.root, team.config_dir, lambda name: name != "alpha") is None
    write_config(team, {"name": "alpha", "members": {}})
    with pytest.raises(CorruptFileError):
        load_config_in(team.root, team.config_dir)
    assert load_config_in(team.root, team.config_dir, lambda name: False) is None  # not judged
    team.config_file.write_bytes(b"[]")
    assert load_config_in(team.root, team.config_dir) is None  # names no team


def test_missing_team_is_team_not_found_everywhere(root: Path) -> None:
    ghost = TeamPaths("ghost", root)
    with pytest.raises(TeamNotFoundError, match="ghost"):
        load_config(ghost)
    with pytest.raises(TeamNotFoundError):
        register_synthetic(ghost, "gemini-1")
    with pytest.raises(TeamNotFoundError):
        remove_synthetic(ghost, "gemini-1")
    with pytest.raises(TeamNotFoundError):
        remove_all_synthetic(ghost)
    assert not (root / "teams" / "ghost").exists()  # nothing created on the way


def test_team_dir_without_config_is_team_not_found(root: Path) -> None:
    ghost = TeamPaths("ghost", root)
    ghost.config_dir.mkdir(parents=True)
    with pytest.raises(TeamNotFoundError):
        register_synthetic(ghost, "gemini-1")
    assert list(ghost.config_dir.iterdir()) == []  # no config.json, no lock dir left


CORRUPT_CONFIGS = [
    pytest.param(b'{"name": "alpha", "members": [', id="truncated"),
    pytest.param(b"", id="empty"),
    pytest.param(b"[]", id="array"),
    pytest.param(b'"alpha"', id="string"),
    pytest.param(b'{"name": "alpha", "members": {}}', id="members-object"),
    pytest.param(b'{"name": "alpha", "members": null}', id="members-null"),
]


@pytest.mark.parametrize("content", CORRUPT_CONFIGS)
def test_corrupt_config_is_refused_and_left_untouched(team: TeamPaths, content: bytes) -> None:
    team.config_file.write_bytes(content)
    for op in (
        lambda: load_config(team),
        lambda: register_synthetic(team, "gemini-1"),
        lambda: remove_synthetic(team, "gemini-1"),
        lambda: remove_all_synthetic(team),
    ):
        with pytest.raises(CorruptFileError) as info:
            op()
        assert info.value.path == team.config_file
        assert team.config_file.read_bytes() == content
    assert leftovers(team.config_dir) == []


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"members": []}, id="no-name"),
        pytest.param({"name": 7, "members": []}, id="numeric-name"),
    ],
)
def test_config_of_wrong_shape_is_a_corrupt_file_error(
    team: TeamPaths, data: dict[str, Any]
) -> None:
    # ExomonadError is the one root callers catch; a pydantic ValidationError escaping from
    # load_config (and so from Mailbox.send and team_presence) breaks that promise.
    write_config(team, data)
    with pytest.raises(CorruptFileError):
        load_config(team)


def test_list_teams(root: Path) -> None:
    assert list_teams(root) == []
    for name in ("beta", "My Team", "alpha"):
        create_team(TeamPaths(name, root))
    broken = root / "teams" / "broken"
    broken.mkdir()
    (broken / "config.json").write_bytes(b"{nope")
    nameless = root / "teams" / "nameless"
    nameless.mkdir()
    (nameless / "config.json").write_bytes(b'{"members": []}')
    (root / "teams" / "no-config").mkdir()
    assert list_teams(root) == ["alpha", "beta", "My Team"]  # sorted by config dir


def test_list_teams_uses_config_dir_env(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    create_team(TeamPaths("alpha", root))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    assert list_teams() == ["alpha"]


def test_list_teams_on_missing_root(tmp_path: Path) -> None:
    assert list_teams(tmp_path / "nowhere") == []


# -- register_synthetic ----------------------------------------------------------------


def test_register_synthetic_entry_shape(team: TeamPaths, tmp_path: Path) -> None:
    member = register_synthetic(
        team, "gemini-1", pane="%5", cwd=tmp_path, model="gemini-2.5-pro", prompt="Help"
    )
    raw = read_config(team)
    entry = raw["members"][-1]
    assert entry == {
        "agentId": "gemini-1@alpha",
        "name": "gemini-1",
        "joinedAt": entry["joinedAt"],
        "subscriptions": [],
        "color": "red",
        "agentType": "exomonad-worker",
        "tmuxPaneId": "synthetic",
        "cwd": str(tmp_path),
        "backendType": SYNTHETIC_BACKEND,
        "isActive": True,
        "exomonadPane": "%5",
        "model": "gemini-2.5-pro",
        "prompt": "Help",
    }
    assert isinstance(entry["joinedAt"], int)
    assert member.to_json() == entry
    assert member.synthetic
    assert member.model_extra == {"exomonadPane": "%5"}
    assert team.config_file.read_bytes() == dump_json(raw)
    assert leftovers(team.config_dir) == []
    assert load_config(team).member_names() == {"team-lead", "gemini-1"}


def test_register_defaults(team: TeamPaths) -> None:
    register_synthetic(team, "gemini-1")
    entry = read_config(team)["members"][-1]
    assert entry["cwd"] == os.getcwd()
    assert entry["agentType"] == "exomonad-worker"
    assert "exomonadPane" not in entry
    assert "model" not in entry
    assert "prompt" not in entry


def test_register_twice_is_idempotent(team: TeamPaths) -> None:
    first = register_synthetic(team, "gemini-1", pane="%5")
    before = team.config_file.read_bytes()
    again = register_synthetic(team, "gemini-1", pane="%5")
    assert team.config_file.read_bytes() == before  # nothing changed, nothing written
    assert again == first
    names = [m["name"] for m in read_config(team)["members"]]
    assert names.count("gemini-1") == 1


def test_register_again_updates_fields_but_keeps_identity(team: TeamPaths, tmp_path: Path) -> None:
    first = register_synthetic(team, "gemini-1", pane="%5", model="m1")
    raw = read_config(team)
    raw["members"][-1]["isActive"] = False  # as if it had gone idle
    raw["members"][-1]["joinedAt"] = 1000
    write_config(team, raw)
    second = register_synthetic(
        team, "gemini-1", pane="%9", model="m2", agent_type="gemini", cwd=tmp_path
    )
    entries = [m for m in read_config(team)["members"] if m["name"] == "gemini-1"]
    assert len(entries) == 1
    entry = entries[0]
    assert entry["exomonadPane"] == "%9"
    assert entry["model"] == "m2"
    assert entry["agentType"] == "gemini"
    assert entry["cwd"] == str(tmp_path)
    assert entry["isActive"] is True
    assert entry["joinedAt"] == 1000  # joinedAt kept
    assert entry["color"] == first.color  # colour kept
    assert second.to_json() == entry


def test_register_again_keeps_cwd_when_not_given(team: TeamPaths, tmp_path: Path) -> None:
    register_synthetic(team, "gemini-1", cwd=tmp_path)
    register_synthetic(team, "gemini-1")
    assert read_config(team)["members"][-1]["cwd"] == str(tmp_path)


def test_colors_are_unique_while_any_are_free(team: TeamPaths) -> None:
    add_member(team, CLAUDE_MEMBER)  # takes "red"
    names = [f"w{i}" for i in range(len(MEMBER_COLORS) - 1)]
    colors = [register_synthetic(team, n).color for n in names]
    assert len(set(colors)) == len(colors)
    assert "red" not in colors
    assert set(colors) | {"red"} == set(MEMBER_COLORS)
    assert colors == [c for c in MEMBER_COLORS if c != "red"]  # in Claude Code's order


def test_explicit_color_wins(team: TeamPaths) -> None:
    assert register_synthetic(team, "gemini-1", color="cyan").color == "cyan"
    assert register_synthetic(team, "gemini-1", color="pink").color == "pink"
    assert register_synthetic(team, "gemini-2").color == "red"


@pytest.mark.parametrize("name", ["main", "team-lead", "user", "system"])
def test_reserved_names_are_refused(team: TeamPaths, name: str) -> None:
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError, match="reserved"):
        register_synthetic(team, name)
    assert team.config_file.read_bytes() == before


@pytest.mark.parametrize("name", ["", "../x", "a/b", "a\x00b", "x" * 201])
def test_invalid_names_are_refused(team: TeamPaths, name: str) -> None:
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError):
        register_synthetic(team, name)
    assert team.config_file.read_bytes() == before


def test_claude_members_cannot_be_taken_over(team: TeamPaths) -> None:
    add_member(team, CLAUDE_MEMBER)
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError, match="already a Claude Code member"):
        register_synthetic(team, "rust-impl")
    assert team.config_file.read_bytes() == before
    assert leftovers(team.config_dir) == []


@pytest.mark.parametrize("name", ["team lead", "team.lead", "team@lead"])
def test_names_sharing_the_leads_inbox_are_refused(team: TeamPaths, name: str) -> None:
    # "team lead" is not literally reserved, but its inbox is inboxes/team-lead.json: a
    # watcher delivering that "worker's" inbox would consume (and prune) the lead's mail.
    assert team.inbox(name) == team.inbox("team-lead")
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError):
        register_synthetic(team, name)
    assert team.config_file.read_bytes() == before


@pytest.mark.parametrize("claude_name", ["rust impl", "rust.impl", "rust@impl"])
def test_names_sharing_a_claude_members_inbox_are_refused(
    team: TeamPaths, claude_name: str
) -> None:
    # Inbox files use the path-sanitised name: "rust impl" and "rust-impl" both read and
    # write inboxes/rust-impl.json, so our worker would receive the Claude member's mail.
    add_member(team, {**CLAUDE_MEMBER, "agentId": f"{claude_name}@alpha", "name": claude_name})
    assert team.inbox(claude_name) == team.inbox("rust-impl")
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError):
        register_synthetic(team, "rust-impl")
    assert team.config_file.read_bytes() == before


def test_unknown_fields_and_foreign_members_are_preserved(team: TeamPaths) -> None:
    raw = read_config(team)
    raw["leadProcess"] = {"pid": 4242, "argv": ["claude", "--x"], "tty": None}
    raw["zTopLevelFuture"] = {"deep": [{"a": 1}, [], {}], "f": 0.25}
    raw["members"].append(CLAUDE_MEMBER)
    raw["members"].append({"name": "no-agent-id", "weird": True})  # Claude drops it on read
    raw["members"].append("not even an object")
    write_config(team, raw)
    foreign = [orjson.dumps(m) for m in raw["members"]]
    top = {k: orjson.dumps(v) for k, v in raw.items() if k != "members"}

    register_synthetic(team, "gemini-1")
    register_synthetic(team, "gemini-2", pane="%1")
    remove_synthetic(team, "gemini-1")

    after = read_config(team)
    assert list(after) == list(raw)  # top-level key order kept
    assert {k: orjson.dumps(v) for k, v in after.items() if k != "members"} == top
    assert [orjson.dumps(m) for m in after["members"][: len(foreign)]] == foreign
    assert [m["name"] for m in after["members"][len(foreign) :]] == ["gemini-2"]
    assert team.config_file.read_bytes() == dump_json(after)


def test_concurrent_registrations_all_land(team: TeamPaths) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            register_synthetic(team, f"w{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert load_config(team).member_names() == {"team-lead"} | {f"w{i}" for i in range(6)}


def test_register_never_writes_under_a_foreign_config_lock(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_mod, "DEFAULT_LOCK", TINY_LOCK)
    lock = lock_dir_for(team.config_file)
    lock.mkdir()  # Claude Code is rewriting config.json right now
    before = team.config_file.read_bytes()
    with pytest.raises(LockError):
        register_synthetic(team, "gemini-1")
    assert team.config_file.read_bytes() == before
    assert lock.is_dir()  # a fresh foreign lock is never removed
    lock.rmdir()
    register_synthetic(team, "gemini-1")  # and once it is released we get in
    assert load_config(team).member("gemini-1") is not None


# -- remove ----------------------------------------------------------------------------


def test_remove_synthetic(team: TeamPaths) -> None:
    register_synthetic(team, "gemini-1")
    register_synthetic(team, "gemini-2")
    assert remove_synthetic(team, "gemini-1") is True
    assert [m["name"] for m in read_config(team)["members"]] == ["team-lead", "gemini-2"]
    assert leftovers(team.config_dir) == []


def test_remove_absent_returns_false_and_writes_nothing(team: TeamPaths) -> None:
    before = team.config_file.read_bytes()
    mtime = team.config_file.stat().st_mtime_ns
    assert remove_synthetic(team, "nobody") is False
    assert team.config_file.read_bytes() == before
    assert team.config_file.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("name", ["team-lead", "rust-impl"])
def test_remove_refuses_claude_members(team: TeamPaths, name: str) -> None:
    add_member(team, CLAUDE_MEMBER)
    before = team.config_file.read_bytes()
    with pytest.raises(InvalidNameError, match="not an ExoMonad one"):
        remove_synthetic(team, name)
    assert team.config_file.read_bytes() == before


def test_remove_all_synthetic_removes_only_ours(team: TeamPaths) -> None:
    add_member(team, CLAUDE_MEMBER)
    register_synthetic(team, "gemini-1")
    add_member(
        team, {**CLAUDE_MEMBER, "agentId": "ip@alpha", "name": "ip", "backendType": "in-process"}
    )
    register_synthetic(team, "gemini-2")
    add_member(team, {"agentId": "x@alpha", "name": "x"})  # no backendType at all
    assert remove_all_synthetic(team) == ["gemini-1", "gemini-2"]
    names = [m["name"] for m in read_config(team)["members"]]
    assert names == ["team-lead", "rust-impl", "ip", "x"]
    assert read_config(team)["members"][1] == CLAUDE_MEMBER


def test_remove_all_with_none_writes_nothing(team: TeamPaths) -> None:
    add_member(team, CLAUDE_MEMBER)
    before = team.config_file.read_bytes()
    mtime = team.config_file.stat().st_mtime_ns
    assert remove_all_synthetic(team) == []
    assert team.config_file.read_bytes() == before
    assert team.config_file.stat().st_mtime_ns == mtime
