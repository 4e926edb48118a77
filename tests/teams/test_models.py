"""Typed models: lossless round trips of real files, member filtering, message identity."""

from __future__ import annotations

import copy
import hashlib
import re
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exomonad.teams.models import (
    MEMBER_COLORS,
    SYNTHETIC_BACKEND,
    InboxMessage,
    Member,
    Task,
    TeamConfig,
    WireModel,
    message_identity,
    now_iso,
    now_ms,
)

CONFIG_2_1_112: dict[str, Any] = {
    "name": "my-team",
    "description": "Port the parser to Rust",
    "createdAt": 1760000000123,
    "leadAgentId": "team-lead@my-team",
    "leadSessionId": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "members": [
        {
            "agentId": "team-lead@my-team",
            "name": "team-lead",
            "agentType": "team-lead",
            "model": "claude-opus-4-1",
            "joinedAt": 1760000000123,
            "tmuxPaneId": "",
            "cwd": "/home/dev/parser",
            "subscriptions": [],
        },
        {
            "agentId": "rust-impl@my-team",
            "name": "rust-impl",
            "agentType": "general-purpose",
            "model": "claude-sonnet-4-5",
            "prompt": "Port lexer.c to Rust.\nKeep the tests green.",
            "color": "blue",
            "planModeRequired": False,
            "joinedAt": 1760000004567,
            "tmuxPaneId": "%3",
            "cwd": "/home/dev/parser",
            "subscriptions": [],
            "backendType": "tmux",
            "isActive": True,
        },
    ],
}

CONFIG_2_1_330: dict[str, Any] = {
    "name": "session-1a2b3c4d",
    "createdAt": 1790000000000,
    "leadAgentId": "team-lead@session-1a2b3c4d",
    "leadSessionId": "1a2b3c4d-0000-4000-8000-000000000001",
    "leadProcess": {"pid": 4242, "startedAt": 1790000000000, "argv": ["claude"], "tty": None},
    "teamVersion": 3,
    "settings": {"teammateMode": "tmux", "nested": {"deep": [1, {"x": None}]}},
    "members": [
        {
            "agentId": "team-lead@session-1a2b3c4d",
            "name": "team-lead",
            "agentType": "team-lead",
            "joinedAt": 1790000000000,
            "tmuxPaneId": "%0",
            "cwd": "/work",
            "subscriptions": [],
            "backendType": "tmux",
        },
        {
            "agentId": "gemini-1@session-1a2b3c4d",
            "name": "gemini-1",
            "agentType": "general-purpose",
            "joinedAt": 1790000001000,
            "tmuxPaneId": "%1",
            "cwd": "/work",
            "subscriptions": ["tasks"],
            "backendType": "tmux",
            "color": "green",
            "isActive": False,
            "mode": "acceptEdits",
            "leadVerifyKey": "abc",
            "futureFlag": {"on": True},
        },
        {
            "agentId": "helper@session-1a2b3c4d",
            "name": "helper",
            "agentType": "Explore",
            "joinedAt": 1790000002000,
            "tmuxPaneId": "in-process",
            "cwd": "/work",
            "subscriptions": [],
            "backendType": "in-process",
            "model": "claude-haiku-4-5",
            "color": "purple",
        },
        {
            "agentId": "gemini-2@session-1a2b3c4d",
            "name": "gemini-2",
            "agentType": "exomonad-worker",
            "joinedAt": 1790000003000,
            "tmuxPaneId": "synthetic",
            "cwd": "/work",
            "subscriptions": [],
            "backendType": "exomonad",
            "isActive": True,
            "color": "red",
            "exomonadPane": "%7",
        },
    ],
}


# -- TeamConfig ------------------------------------------------------------------------


@pytest.mark.parametrize("data", [CONFIG_2_1_112, CONFIG_2_1_330], ids=["2.1.112", "2.1.330"])
def test_real_configs_round_trip_exactly(data: dict[str, Any]) -> None:
    original = copy.deepcopy(data)
    cfg = TeamConfig.from_json(data)
    assert cfg.to_json() == original
    assert data == original  # the input dict is not mutated


def test_config_fields_are_typed() -> None:
    cfg = TeamConfig.from_json(CONFIG_2_1_330)
    assert cfg.name == "session-1a2b3c4d"
    assert cfg.created_at == 1790000000000
    assert cfg.lead_session_id == "1a2b3c4d-0000-4000-8000-000000000001"
    assert cfg.lead_process is not None
    assert cfg.lead_process["pid"] == 4242
    assert cfg.description is None
    assert [m.backend_type for m in cfg.members] == ["tmux", "tmux", "in-process", "exomonad"]
    assert [m.synthetic for m in cfg.members] == [False, False, False, True]
    gem = cfg.member("gemini-1")
    assert gem is not None
    assert gem.agent_id == "gemini-1@session-1a2b3c4d"
    assert gem.subscriptions == ["tasks"]
    assert gem.is_active is False
    assert gem.mode == "acceptEdits"
    assert gem.model_extra == {"leadVerifyKey": "abc", "futureFlag": {"on": True}}
    assert cfg.member("nobody") is None
    old = TeamConfig.from_json(CONFIG_2_1_112)
    assert old.description == "Port the parser to Rust"
    assert old.lead_process is None
    assert old.members[1].plan_mode_required is False
    assert old.members[1].prompt == "Port lexer.c to Rust.\nKeep the tests green."


def test_members_without_string_agent_id_or_name_are_dropped() -> None:
    data = {
        "name": "t",
        "members": [
            {"agentId": "a@t", "name": "a"},
            {"name": "no-id"},
            {"agentId": "no-name@t"},
            {"agentId": 7, "name": "numeric-id"},
            {"agentId": "x@t", "name": None},
            "not an object",
            None,
            {"agentId": "b@t", "name": "b", "extra": 1},
        ],
    }
    cfg = TeamConfig.from_json(data)
    assert [m.name for m in cfg.members] == ["a", "b"]
    assert cfg.to_json()["members"] == [
        {"agentId": "a@t", "name": "a"},
        {"agentId": "b@t", "name": "b", "extra": 1},
    ]
    assert len(data["members"]) == 8  # the caller's raw data is left alone


def test_config_without_members_has_an_empty_list() -> None:
    cfg = TeamConfig.from_json({"name": "t"})
    assert cfg.members == []
    assert cfg.member_names() == {"team-lead"}


@pytest.mark.parametrize(
    ("lead_agent_id", "lead"),
    [
        ("team-lead@t", "team-lead"),
        ("boss@My Team", "boss"),
        ("odd@name@t", "odd"),
        ("no-at-sign", "team-lead"),
        (None, "team-lead"),
        ("", "team-lead"),
    ],
)
def test_lead_name(lead_agent_id: str | None, lead: str) -> None:
    data: dict[str, Any] = {"name": "t", "members": []}
    if lead_agent_id is not None:
        data["leadAgentId"] = lead_agent_id
    assert TeamConfig.from_json(data).lead_name == lead


def test_member_names_include_the_lead_even_if_not_listed() -> None:
    cfg = TeamConfig.from_json(
        {"name": "t", "leadAgentId": "boss@t", "members": [{"agentId": "w@t", "name": "w"}]}
    )
    assert cfg.member_names() == {"boss", "w"}
    assert TeamConfig.from_json(CONFIG_2_1_330).member_names() == {
        "team-lead",
        "gemini-1",
        "helper",
        "gemini-2",
    }


def test_member_synthetic_and_constants() -> None:
    assert SYNTHETIC_BACKEND == "exomonad"
    assert MEMBER_COLORS == ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")
    assert Member.from_json({"agentId": "a@t", "name": "a", "backendType": "exomonad"}).synthetic
    assert not Member.from_json({"agentId": "a@t", "name": "a"}).synthetic


def test_sparse_dump_keeps_explicit_nulls_and_set_fields() -> None:
    m = Member.from_json({"agentId": "a@t", "name": "a", "model": None})
    assert m.to_json() == {"agentId": "a@t", "name": "a", "model": None}
    m.color = "red"
    assert m.to_json() == {"agentId": "a@t", "name": "a", "model": None, "color": "red"}


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (InboxMessage, {"from": "a", "text": "t", "timestamp": "s", "message_id": "x"}),
        (Member, {"agentId": "a@t", "name": "a", "agent_type": "future-snake-case"}),
    ],
    ids=["message_id", "agent_type"],
)
def test_unknown_snake_case_keys_are_not_renamed(
    model: type[InboxMessage] | type[Member], data: dict[str, Any]
) -> None:
    # A key that happens to equal a Python field name (not its on-disk alias) is unknown to
    # Claude Code; populate_by_name must not turn it into the camelCase field on dump.
    assert model.from_json(data).to_json() == data


# -- message identity ------------------------------------------------------------------


def _sha(raw: str) -> str:
    return "sha256:" + hashlib.sha256(raw.encode()).hexdigest()


def test_identity_prefers_msg_id_then_message_id_then_hash() -> None:
    base = {"from": "a", "timestamp": "2026-01-01T00:00:00.000Z", "text": "hi"}
    assert message_identity({**base, "msg_id": "m", "messageId": "n"}) == "m"
    assert message_identity({**base, "messageId": "n"}) == "n"
    assert message_identity(base) == _sha("a|2026-01-01T00:00:00.000Z|hi")
    assert message_identity({**base, "msg_id": "", "messageId": "n"}) == "n"
    assert message_identity({**base, "msg_id": 5}) == _sha("a|2026-01-01T00:00:00.000Z|hi")
    assert message_identity({**base, "messageId": None}) == message_identity(base)


def test_hash_identity_covers_exactly_from_timestamp_text() -> None:
    base = {"from": "a", "timestamp": "t", "text": "x"}
    ident = message_identity(base)
    assert message_identity({**base, "read": True, "summary": "s", "color": "red"}) == ident
    assert message_identity({**base, "text": "y"}) != ident
    assert message_identity({**base, "from": "b"}) != ident
    assert message_identity({**base, "timestamp": "u"}) != ident
    assert message_identity({}) == _sha("||")
    assert message_identity({"from": "é", "text": "😀", "timestamp": ""}) == "sha256:" + (
        hashlib.sha256("é||😀".encode()).hexdigest()
    )


def test_hash_identity_handles_lone_surrogates() -> None:
    assert message_identity({"from": "a", "timestamp": "t", "text": "\ud800"}).startswith("sha256:")


# -- InboxMessage ----------------------------------------------------------------------


def test_inbox_message_from_alias() -> None:
    raw = {"from": "gemini-1", "text": "done", "timestamp": "t", "summary": "s", "color": "blue"}
    msg = InboxMessage.from_json(raw)
    assert msg.sender == "gemini-1"
    assert msg.to_json() == raw
    assert "sender" not in msg.to_json()
    built = InboxMessage(sender="x", text="y", timestamp="z")
    assert built.to_json() == {"from": "x", "text": "y", "timestamp": "z"}
    aliased = InboxMessage.model_validate({"from": "x", "text": "y", "timestamp": "z"})
    assert aliased == built


def test_inbox_message_read_and_identity() -> None:
    unread = InboxMessage.from_json({"from": "a", "text": "x", "timestamp": "t"})
    assert not unread.is_read
    assert unread.identity == _sha("a|t|x")
    read = InboxMessage.from_json({"from": "a", "text": "x", "timestamp": "t", "read": True})
    assert read.is_read
    stamped = InboxMessage.from_json(
        {"from": "a", "text": "x", "timestamp": "t", "msgV": 1, "msg_id": "u", "type": "message"}
    )
    assert stamped.msg_v == 1
    assert stamped.identity == "u"
    ours = InboxMessage.from_json({"from": "a", "text": "x", "timestamp": "t", "messageId": "m"})
    assert ours.message_id == "m"
    assert ours.identity == "m"


def test_inbox_message_requires_from_text_timestamp() -> None:
    from pydantic import ValidationError

    for missing in ("from", "text", "timestamp"):
        data = {"from": "a", "text": "x", "timestamp": "t"}
        del data[missing]
        with pytest.raises(ValidationError):
            InboxMessage.from_json(data)


# -- Task ------------------------------------------------------------------------------


def test_task_round_trip_and_defaults() -> None:
    raw = {
        "id": "3",
        "subject": "parse",
        "description": "write it",
        "activeForm": "Parsing",
        "owner": "gemini-1",
        "status": "in_progress",
        "blocks": ["4"],
        "blockedBy": ["1"],
        "metadata": {"k": [1]},
    }
    assert Task.from_json(raw).to_json() == raw
    t = Task.from_json({"id": "1", "subject": "s"})
    assert (t.status, t.blocks, t.blocked_by, t.description) == ("pending", [], [], "")


# -- clocks ----------------------------------------------------------------------------


def test_now_iso_is_javascript_to_iso_string() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", now_iso())


def test_now_ms_is_epoch_milliseconds() -> None:
    before = int(time.time() * 1000)
    value = now_ms()
    after = int(time.time() * 1000)
    assert isinstance(value, int)
    assert before - 1 <= value <= after + 1


# -- property: unknown fields survive --------------------------------------------------

_json_leaf = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
_json = st.recursive(
    _json_leaf | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


def _on_disk_keys(model: type[WireModel]) -> set[str]:
    """The keys a model reads from a file: each field's alias, or its name if it has none."""
    return {f.alias or name for name, f in model.model_fields.items()}


def _python_only_names(model: type[WireModel]) -> list[str]:
    """Field names that differ from their on-disk alias (``sender``, ``agent_type``, ...)."""
    return sorted(n for n, f in model.model_fields.items() if f.alias and f.alias != n)


def _extras(model: type[WireModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Unknown keys: arbitrary text, with Python-only field names mixed in on purpose."""
    on_disk = _on_disk_keys(model)
    keys = st.sampled_from(_python_only_names(model)) | st.text(min_size=1, max_size=12)
    return st.dictionaries(keys.filter(lambda k: k not in on_disk), _json, max_size=6)


@settings(max_examples=50, deadline=None)
@given(extra=_extras(InboxMessage), read=st.none() | st.booleans())
def test_inbox_message_keeps_arbitrary_extra_fields(
    extra: dict[str, Any], read: bool | None
) -> None:
    data: dict[str, Any] = {"from": "a", "text": "x", "timestamp": "t", **extra}
    if read is not None:
        data["read"] = read
    expected = copy.deepcopy(data)
    msg = InboxMessage.from_json(data)
    assert msg.to_json() == expected
    assert InboxMessage.from_json(msg.to_json()).to_json() == expected
    assert msg.model_extra == extra


@settings(max_examples=50, deadline=None)
@given(extra=_extras(Member), color=st.sampled_from(MEMBER_COLORS))
def test_member_keeps_arbitrary_extra_fields(extra: dict[str, Any], color: str) -> None:
    data: dict[str, Any] = {"agentId": "w@t", "name": "w", "color": color, **extra}
    expected = copy.deepcopy(data)
    member = Member.from_json(data)
    assert member.to_json() == expected
    assert member.model_extra == extra


@settings(max_examples=30, deadline=None)
@given(top=_extras(TeamConfig), member_extra=_extras(Member))
def test_team_config_keeps_arbitrary_extra_fields(
    top: dict[str, Any], member_extra: dict[str, Any]
) -> None:
    member = {"agentId": "w@t", "name": "w", "backendType": "tmux", **member_extra}
    data: dict[str, Any] = {"name": "t", "createdAt": 1, "members": [member], **top}
    expected = copy.deepcopy(data)
    assert TeamConfig.from_json(data).to_json() == expected
