"""Structured team messages: compact JSON with ``type`` first, lossless decode."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from exomonad.teams.protocol import (
    IdleNotification,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ProtocolMessage,
    ShutdownApproved,
    ShutdownRejected,
    ShutdownRequest,
    TaskAssignment,
    TaskCompleted,
    TeammateTerminated,
    decode,
    encode,
)

TS = "2026-01-01T00:00:00.000Z"

#: One fully populated wire dict per message type, keys in Claude Code's order.
WIRE: dict[str, tuple[type[ProtocolMessage], dict[str, Any]]] = {
    "idle_notification": (
        IdleNotification,
        {
            "type": "idle_notification",
            "from": "gemini-1",
            "timestamp": TS,
            "idleReason": "available",
            "summary": "finished the lexer",
            "completedTaskId": "3",
            "completedStatus": "resolved",
            "failureReason": "none",
        },
    ),
    "shutdown_request": (
        ShutdownRequest,
        {
            "type": "shutdown_request",
            "requestId": "shutdown-1760000000000@gemini-1",
            "from": "team-lead",
            "reason": "work is done",
            "timestamp": TS,
        },
    ),
    "shutdown_approved": (
        ShutdownApproved,
        {
            "type": "shutdown_approved",
            "requestId": "shutdown-1760000000000@gemini-1",
            "from": "gemini-1",
            "timestamp": TS,
            "paneId": "%3",
            "backendType": "exomonad",
        },
    ),
    "shutdown_rejected": (
        ShutdownRejected,
        {
            "type": "shutdown_rejected",
            "requestId": "shutdown-1760000000000@gemini-1",
            "from": "gemini-1",
            "reason": "still compiling",
            "timestamp": TS,
        },
    ),
    "plan_approval_request": (
        PlanApprovalRequest,
        {
            "type": "plan_approval_request",
            "from": "gemini-1",
            "timestamp": TS,
            "planFilePath": "/home/dev/.claude/plans/p.md",
            "planContent": "# Plan\n1. lex\n2. parse",
            "requestId": "plan-1",
        },
    ),
    "plan_approval_response": (
        PlanApprovalResponse,
        {
            "type": "plan_approval_response",
            "requestId": "plan-1",
            "approved": False,
            "feedback": "split step 2",
            "timestamp": TS,
            "permissionMode": "default",
        },
    ),
    "task_assignment": (
        TaskAssignment,
        {
            "type": "task_assignment",
            "taskId": "7",
            "subject": "Write the parser",
            "description": "Recursive descent, see spec.md",
            "assignedBy": "team-lead",
            "timestamp": TS,
        },
    ),
    "task_completed": (
        TaskCompleted,
        {
            "type": "task_completed",
            "from": "gemini-1",
            "taskId": "7",
            "taskSubject": "Write the parser",
            "timestamp": TS,
        },
    ),
    "permission_request": (
        PermissionRequest,
        {
            "type": "permission_request",
            "request_id": "perm-1-k3x9",
            "agent_id": "gemini-1@alpha",
            "tool_name": "Bash",
            "tool_use_id": "toolu_01",
            "description": "run the tests",
            "input": {"command": "pytest -q", "timeout": 60},
            "permission_suggestions": [{"type": "addRules", "rules": ["Bash(pytest:*)"]}],
        },
    ),
    "permission_response": (
        PermissionResponse,
        {
            "type": "permission_response",
            "request_id": "perm-1-k3x9",
            "subtype": "success",
            "response": {"updatedInput": {"command": "pytest -q"}},
            "error": "",
        },
    ),
    "teammate_terminated": (
        TeammateTerminated,
        {"type": "teammate_terminated", "message": "gemini-1 has shut down."},
    ),
}

#: The minimal (required-only) wire dict per type.
MINIMAL: dict[str, dict[str, Any]] = {
    "idle_notification": {"type": "idle_notification", "from": "g", "timestamp": TS},
    "shutdown_request": {
        "type": "shutdown_request",
        "requestId": "r",
        "from": "l",
        "timestamp": TS,
    },
    "shutdown_approved": {
        "type": "shutdown_approved",
        "requestId": "r",
        "from": "g",
        "timestamp": TS,
    },
    "shutdown_rejected": {
        "type": "shutdown_rejected",
        "requestId": "r",
        "from": "g",
        "reason": "busy",
        "timestamp": TS,
    },
    "plan_approval_request": {
        "type": "plan_approval_request",
        "from": "g",
        "timestamp": TS,
        "planFilePath": "p",
        "planContent": "c",
        "requestId": "r",
    },
    "plan_approval_response": {
        "type": "plan_approval_response",
        "requestId": "r",
        "approved": True,
        "timestamp": TS,
    },
    "task_assignment": {
        "type": "task_assignment",
        "taskId": "1",
        "subject": "s",
        "description": "d",
        "assignedBy": "l",
        "timestamp": TS,
    },
    "task_completed": {"type": "task_completed", "taskId": "1"},
    "permission_request": {
        "type": "permission_request",
        "request_id": "perm-1-a",
        "agent_id": "g@t",
        "tool_name": "Bash",
        "tool_use_id": "u",
        "description": "d",
        "input": {},
    },
    "permission_response": {
        "type": "permission_response",
        "request_id": "perm-1-a",
        "subtype": "error",
    },
    "teammate_terminated": {"type": "teammate_terminated", "message": "bye"},
}

TYPES = sorted(WIRE)


def test_all_eleven_types_are_covered() -> None:
    assert len(WIRE) == 11
    assert set(MINIMAL) == set(WIRE)


@pytest.mark.parametrize("kind", TYPES)
def test_encode_is_compact_json_with_type_first(kind: str) -> None:
    cls, wire = WIRE[kind]
    msg = cls.model_validate({k: v for k, v in wire.items() if k != "type"})
    text = encode(msg)
    assert text.startswith('{"type":"' + kind + '",')
    assert text == orjson.dumps(wire).decode()  # compact, same order, same values
    assert text == orjson.dumps(orjson.loads(text)).decode()  # no pretty separators
    assert "\n" not in text


@pytest.mark.parametrize("kind", TYPES)
def test_decode_returns_the_class_with_equal_fields(kind: str) -> None:
    cls, wire = WIRE[kind]
    msg = decode(orjson.dumps(wire).decode())
    assert type(msg) is cls
    assert msg.to_json() == wire
    assert msg == cls.model_validate(wire)
    assert decode(encode(msg)) == msg


@pytest.mark.parametrize("kind", TYPES)
def test_minimal_messages_round_trip(kind: str) -> None:
    wire = MINIMAL[kind]
    text = orjson.dumps(wire).decode()
    msg = decode(text)
    assert msg is not None
    assert type(msg) is WIRE[kind][0]
    assert msg.type == kind
    assert encode(msg) == text


@pytest.mark.parametrize("kind", TYPES)
def test_missing_required_field_decodes_to_none(kind: str) -> None:
    wire = MINIMAL[kind]
    for key in wire:
        if key == "type":
            continue
        broken = {k: v for k, v in wire.items() if k != key}
        assert decode(orjson.dumps(broken).decode()) is None, key


@pytest.mark.parametrize("kind", TYPES)
def test_extra_fields_are_preserved(kind: str) -> None:
    wire = {**MINIMAL[kind], "lead_sig": "c2ln", "future": {"nested": [1, None]}}
    text = orjson.dumps(wire).decode()
    msg = decode(text)
    assert msg is not None
    assert msg.model_extra == {"lead_sig": "c2ln", "future": {"nested": [1, None]}}
    assert encode(msg) == text


def test_python_field_names_construct_messages() -> None:
    msg = ShutdownRequest(request_id="shutdown-1@g", from_="team-lead", timestamp=TS)
    assert encode(msg) == (
        '{"type":"shutdown_request","requestId":"shutdown-1@g","from":"team-lead",'
        f'"timestamp":"{TS}"}}'
    )
    idle = IdleNotification(from_="g", timestamp=TS, idle_reason="failed", failure_reason="x")
    assert encode(idle) == (
        f'{{"type":"idle_notification","from":"g","timestamp":"{TS}",'
        '"idleReason":"failed","failureReason":"x"}'
    )


def test_type_is_first_even_when_given_last() -> None:
    msg = TeammateTerminated.model_validate({"message": "bye", "type": "teammate_terminated"})
    assert encode(msg) == '{"type":"teammate_terminated","message":"bye"}'


def test_unicode_is_not_escaped() -> None:
    msg = TeammateTerminated(message="fertig ✓ 😀")
    assert encode(msg) == '{"type":"teammate_terminated","message":"fertig ✓ 😀"}'


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("just words", id="plain"),
        pytest.param("", id="empty"),
        pytest.param("{not json", id="invalid-json"),
        pytest.param('{"type":"idle_notification"', id="truncated"),
        pytest.param('{"type":"made_up_type","from":"g"}', id="unknown-type"),
        pytest.param('{"from":"g","timestamp":"t"}', id="no-type"),
        pytest.param('{"type":5}', id="numeric-type"),
        pytest.param('{"type":null}', id="null-type"),
        pytest.param("[1,2]", id="array"),
        pytest.param('"idle_notification"', id="string"),
        pytest.param(' {"type":"teammate_terminated","message":"x"}', id="leading-space"),
        pytest.param(
            '{"type":"idle_notification","from":"g","timestamp":"t","idleReason":"bored"}',
            id="bad-literal",
        ),
        pytest.param(
            '{"type":"plan_approval_response","requestId":"r","approved":"maybe","timestamp":"t"}',
            id="bad-bool",
        ),
        pytest.param(
            '{"type":"permission_request","request_id":"r","agent_id":"a","tool_name":"t",'
            '"tool_use_id":"u","description":"d","input":[1]}',
            id="input-not-object",
        ),
        pytest.param('{"type":"teammate_terminated","message":"x"} trailing', id="trailing"),
    ],
)
def test_non_protocol_text_decodes_to_none(text: str) -> None:
    assert decode(text) is None


def test_json_that_looks_like_a_message_text_is_still_plain() -> None:
    # A teammate writing JSON about something else is just a message.
    assert decode('{"answer": 42}') is None
