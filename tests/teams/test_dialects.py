"""Dialects: selection by name, by environment, default; per-version entry stamps."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, cast

import pytest

from exomonad.errors import ExomonadError
from exomonad.teams.dialects import DEFAULT_DIALECT, DIALECTS, Dialect, get_dialect

ENTRY = {"from": "gemini-1", "text": "hi", "timestamp": "2026-01-01T00:00:00.000Z"}


def test_known_dialects() -> None:
    assert sorted(DIALECTS) == ["2.1.112", "2.1.330"]
    old, new = DIALECTS["2.1.112"], DIALECTS["2.1.330"]
    assert (old.name, old.mark_read, old.envelope, old.team_create) == (
        "2.1.112",
        "flag",
        False,
        True,
    )
    assert (new.name, new.mark_read, new.envelope, new.team_create) == (
        "2.1.330",
        "prune",
        True,
        False,
    )
    for name, dialect in DIALECTS.items():
        assert dialect.name == name


def test_default_is_the_newest() -> None:
    assert DEFAULT_DIALECT is DIALECTS["2.1.330"]
    assert get_dialect() is DEFAULT_DIALECT
    assert get_dialect(None) is DEFAULT_DIALECT


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_get_dialect_by_name(name: str) -> None:
    assert get_dialect(name) is DIALECTS[name]


def test_env_selects_dialect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXOMONAD_CLAUDE_DIALECT", "2.1.112")
    assert get_dialect() is DIALECTS["2.1.112"]


def test_explicit_name_beats_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXOMONAD_CLAUDE_DIALECT", "2.1.112")
    assert get_dialect("2.1.330") is DIALECTS["2.1.330"]


def test_empty_env_means_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXOMONAD_CLAUDE_DIALECT", "")
    assert get_dialect() is DEFAULT_DIALECT


def test_unknown_name_raises_listing_known(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExomonadError, match=r"'9\.9\.9'.*2\.1\.112, 2\.1\.330"):
        get_dialect("9.9.9")
    monkeypatch.setenv("EXOMONAD_CLAUDE_DIALECT", "2.0.0")
    with pytest.raises(ExomonadError, match=r"2\.0\.0"):
        get_dialect()


def test_dialects_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        cast(Any, DEFAULT_DIALECT).mark_read = "flag"


# -- stamp -----------------------------------------------------------------------------


def test_stamp_2_1_112_adds_only_message_id() -> None:
    stamped = DIALECTS["2.1.112"].stamp(ENTRY, "id-1")
    assert stamped == {**ENTRY, "messageId": "id-1"}
    assert not {"msgV", "msg_id", "type"} & set(stamped)


def test_stamp_2_1_330_adds_the_envelope() -> None:
    stamped = DIALECTS["2.1.330"].stamp(ENTRY, "id-1")
    assert stamped == {**ENTRY, "msgV": 1, "msg_id": "id-1", "type": "message", "messageId": "id-1"}


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_stamp_does_not_mutate_or_overwrite(name: str) -> None:
    entry = {**ENTRY, "type": "custom", "msg_id": "theirs", "messageId": "theirs", "msgV": 2}
    before = dict(entry)
    stamped = DIALECTS[name].stamp(entry, "ours")
    assert entry == before
    assert stamped == before  # every key was already there: nothing overwritten


def test_new_message_id_is_a_fresh_uuid4() -> None:
    ids = {Dialect.new_message_id() for _ in range(50)}
    assert len(ids) == 50
    for value in ids:
        assert uuid.UUID(value).version == 4
        assert str(uuid.UUID(value)) == value
