"""Paths: the config root, Claude Code's two sanitising rules, and refused names."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest

from exomonad.errors import ExomonadError, InvalidNameError
from exomonad.teams.paths import (
    RESERVED_NAMES,
    TeamPaths,
    config_root,
    sanitize_config_name,
    sanitize_path_name,
    validate_name,
)

# -- sanitising ------------------------------------------------------------------------

SANITISE_CASES = [
    # name, config dir (lowercased, [^a-zA-Z0-9] -> -), inbox/task name ([^a-zA-Z0-9_-] -> -)
    ("My Team", "my-team", "My-Team"),
    ("alpha", "alpha", "alpha"),
    ("gemini_1", "gemini-1", "gemini_1"),
    ("rust-impl", "rust-impl", "rust-impl"),
    ("v2.1 beta", "v2-1-beta", "v2-1-beta"),
    ("a.b.c", "a-b-c", "a-b-c"),
    ("Team.V2 Beta_x", "team-v2-beta-x", "Team-V2-Beta_x"),
    ("  padded  ", "--padded--", "--padded--"),
    ("héllo wörld", "h-llo-w-rld", "h-llo-w-rld"),
    ("ÄBC", "-bc", "-BC"),
    ("日本語", "---", "---"),
    ("CAPS", "caps", "CAPS"),
    ("a@b+c=d", "a-b-c-d", "a-b-c-d"),
    ("session-1a2b3c4d", "session-1a2b3c4d", "session-1a2b3c4d"),
]


@pytest.mark.parametrize(("name", "config", "inbox"), SANITISE_CASES)
def test_both_sanitising_rules(name: str, config: str, inbox: str) -> None:
    assert sanitize_config_name(name) == config
    assert sanitize_path_name(name) == inbox


def test_sanitised_names_use_only_safe_characters() -> None:
    for name, _, _ in SANITISE_CASES:
        assert set(sanitize_config_name(name)) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
        assert all(c.isascii() and (c.isalnum() or c in "_-") for c in sanitize_path_name(name))


def test_my_team_config_and_inboxes_live_in_different_dirs(tmp_path: Path) -> None:
    p = TeamPaths("My Team", tmp_path)
    assert p.config_dir == tmp_path / "teams" / "my-team"
    assert p.config_file == tmp_path / "teams" / "my-team" / "config.json"
    assert p.team_dir == tmp_path / "teams" / "My-Team"
    assert p.inboxes_dir == tmp_path / "teams" / "My-Team" / "inboxes"
    assert p.inbox("gemini 1") == p.inboxes_dir / "gemini-1.json"
    assert p.inbox("team-lead") == p.inboxes_dir / "team-lead.json"
    assert p.inbox("Worker_2") == p.inboxes_dir / "Worker_2.json"
    assert p.archive("gemini 1") == p.inboxes_dir / "gemini-1.archive.jsonl"
    assert p.teams_dir == tmp_path / "teams"


def test_team_name_is_kept_unsanitised(tmp_path: Path) -> None:
    p = TeamPaths("My Team", tmp_path)
    assert p.team == "My Team"
    assert p.root == tmp_path


def test_team_paths_is_frozen_and_compares_by_value(tmp_path: Path) -> None:
    p = TeamPaths("alpha", tmp_path)
    assert p == TeamPaths("alpha", str(tmp_path))
    assert p != TeamPaths("beta", tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cast(Any, p).team = "beta"


# -- config root -----------------------------------------------------------------------


def test_config_root_defaults_to_home_dot_claude(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_root() == tmp_path / "home" / ".claude"
    assert TeamPaths("alpha").root == tmp_path / "home" / ".claude"


def test_config_root_env_beats_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert config_root() == tmp_path / "cfg"
    assert TeamPaths("alpha").config_file == tmp_path / "cfg" / "teams" / "alpha" / "config.json"


def test_config_root_override_beats_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert config_root(tmp_path / "over") == tmp_path / "over"
    assert config_root(str(tmp_path / "over")) == tmp_path / "over"
    assert TeamPaths("alpha", tmp_path / "over").root == tmp_path / "over"


def test_empty_config_dir_env_falls_back_to_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    assert config_root() == tmp_path / "home" / ".claude"


def test_tilde_is_expanded_in_env_and_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "~/cfg")
    assert config_root() == tmp_path / "home" / "cfg"
    assert config_root("~/over") == tmp_path / "home" / "over"


# -- tasks dir -------------------------------------------------------------------------


def test_tasks_dir_is_the_path_sanitised_team(tmp_path: Path) -> None:
    assert TeamPaths("My Team", tmp_path).tasks_dir == tmp_path / "tasks" / "My-Team"


def test_task_list_id_env_overrides_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "shared list")
    assert TeamPaths("My Team", tmp_path).tasks_dir == tmp_path / "tasks" / "shared-list"


def test_empty_task_list_id_env_means_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "")
    assert TeamPaths("alpha", tmp_path).tasks_dir == tmp_path / "tasks" / "alpha"


def test_task_list_id_env_is_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "../escape")
    p = TeamPaths("alpha", tmp_path)
    with pytest.raises(InvalidNameError):
        _ = p.tasks_dir


# -- refused names ---------------------------------------------------------------------

BAD_NAMES = [
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
    pytest.param("\t", id="tab-only"),
    pytest.param(".", id="dot"),
    pytest.param("..", id="dotdot"),
    pytest.param("../etc", id="parent-prefix"),
    pytest.param("a/../../b", id="parent-inside"),
    pytest.param("a..b", id="dotdot-inside"),
    pytest.param("a/b", id="slash"),
    pytest.param("/abs", id="absolute"),
    pytest.param("a\\b", id="backslash"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\rb", id="cr"),
    pytest.param("a\x1bb", id="escape"),
    pytest.param("a\x7fb", id="del"),
    pytest.param("x" * 201, id="overlong"),
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused_everywhere(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidNameError):
        validate_name(name)
    with pytest.raises(InvalidNameError):
        sanitize_config_name(name)
    with pytest.raises(InvalidNameError):
        sanitize_path_name(name)
    with pytest.raises(InvalidNameError):
        TeamPaths(name, tmp_path)
    good = TeamPaths("alpha", tmp_path)
    with pytest.raises(InvalidNameError):
        good.inbox(name)
    with pytest.raises(InvalidNameError):
        good.archive(name)


@pytest.mark.parametrize("value", [None, 7, b"bytes", ["a"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidNameError):
        validate_name(cast(str, value))


def test_invalid_name_error_is_catchable_as_root_and_value_error() -> None:
    with pytest.raises(ExomonadError):
        validate_name("..")
    with pytest.raises(ValueError, match="could escape"):
        validate_name("a/b")


def test_error_message_says_what_was_refused() -> None:
    with pytest.raises(InvalidNameError, match="recipient"):
        validate_name("", "recipient")
    with pytest.raises(InvalidNameError, match="control characters"):
        validate_name("a\x01b")
    with pytest.raises(InvalidNameError, match="longer than 200"):
        validate_name("y" * 201)


@pytest.mark.parametrize(
    "name", ["x" * 200, "gemini-1", "My Team", "a.b", "ünïcode", "日本語", "with space", "-"]
)
def test_good_names_are_returned_unchanged(name: str) -> None:
    assert validate_name(name) == name


def test_reserved_names() -> None:
    assert frozenset({"main", "team-lead", "user", "system"}) == RESERVED_NAMES
