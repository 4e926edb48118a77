"""Fast checks of the Codex test kit itself (no Codex binary): the scripted Responses
server, the hook trust hash, the TOML writer and the hook probe."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from exomonad.scripted.openai import (
    DEFAULT_TEXT,
    ScriptedCodex,
    error_reply,
    mcp_reply,
    shell_reply,
    tool_search_reply,
)
from tests.e2e.codex_cli import HOOK_PROBE, command_hook, probe_command
from tests.e2e.codex_trust import hook_state_key, hook_trust_entries, hook_trust_hash, toml_dumps

AGENT_TOOLS = [
    {"type": "function", "name": "exec_command"},
    {"type": "custom", "name": "apply_patch"},
]


def _post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def _events(raw: bytes) -> list[dict[str, Any]]:
    """The `data:` payloads of an SSE body; each `event:` line names its data's type."""
    out = []
    for block in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            data = json.loads(lines["data"])
            assert lines["event"] == data["type"]
            out.append(data)
    return out


def _done(raw: bytes) -> list[dict[str, Any]]:
    """The items of the `response.output_item.done` events."""
    return [e["item"] for e in _events(raw) if e["type"] == "response.output_item.done"]


def _turn(prompt: str, **extra: Any) -> dict[str, Any]:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
    return {"model": "gpt-5.5", "stream": True, "input": [user], "tools": AGENT_TOOLS, **extra}


def test_agent_turns_consume_the_script_and_stream_responses_events() -> None:
    shell = shell_reply("touch x")
    with ScriptedCodex([shell, "second"]) as model:
        assert model.base_url == f"{model.url}/v1"
        status, ctype, raw = _post(f"{model.base_url}/responses", _turn("go"))
        assert (status, ctype) == (200, "text/event-stream")
        events = _events(raw)
        kinds = [e["type"] for e in events]
        assert kinds == [
            "response.created",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
        ]
        item = events[2]["item"]
        assert item["type"] == "function_call"
        assert item["name"] == "exec_command"
        assert json.loads(item["arguments"]) == {"cmd": "touch x"}
        assert item["call_id"] == shell.call_ids()[0]
        done = events[-1]["response"]
        assert done["id"] == events[0]["response"]["id"]
        assert done["usage"]["total_tokens"] > 0

        # A title request (no shell tool, a json_schema) gets schema-shaped JSON.
        schema = {"type": "object", "properties": {"title": {"type": "string"}}}
        title = _turn(
            "title?",
            tools=[{"type": "custom", "name": "apply_patch"}],
            text={"format": {"type": "json_schema", "schema": schema}},
        )
        _, _, raw = _post(f"{model.base_url}/responses", title)
        [message] = _done(raw)
        assert set(json.loads(message["content"][0]["text"])) == {"title"}

        _, _, raw = _post(f"{model.base_url}/responses", _turn("again"))
        kinds = [e["type"] for e in _events(raw)]
        assert "response.output_text.delta" in kinds
        _, _, raw = _post(f"{model.base_url}/responses", _turn("and again"))
        assert _done(raw)[0]["content"][0]["text"] == DEFAULT_TEXT
        assert [s for _, _, s in model.served()] == ["script", "side", "script", "default"]
        assert [r.is_agent_turn for r in model.requests] == [True, False, True, True]
        assert model.requests[0].last_user_texts() == ["go"]


def test_request_helpers_read_tool_outputs_and_tool_search_results() -> None:
    search, call = tool_search_reply("notify"), mcp_reply("exo", "notify_parent", {"a": 1})
    [item] = call.items
    assert (item["namespace"], item["name"]) == ("mcp__exo", "notify_parent")
    assert search.items[0]["arguments"] == {"query": "notify"}
    found = {"type": "namespace", "name": "mcp__exo", "tools": [{"name": "notify_parent"}]}
    body = _turn("go")
    body["input"] += [
        {**search.items[0]},
        {"type": "tool_search_output", "call_id": search.call_ids()[0], "tools": [found]},
        {**item},
        {
            "type": "function_call_output",
            "call_id": call.call_ids()[0],
            "output": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}],
        },
    ]
    with ScriptedCodex() as model:
        _post(f"{model.base_url}/responses", body)
        req = model.wait_for_output(call.call_ids()[0], timeout=5)
        assert req.output_text(call.call_ids()[0]) == "a\nb"
        assert req.tool_search_tools(search.call_ids()[0]) == [found]
        assert [c["type"] for c in req.calls()] == ["tool_search_call", "function_call"]
        assert req.output_text("nope") is None


def test_models_list_errors_and_unknown_routes() -> None:
    with ScriptedCodex([error_reply(503, "overloaded")], models=("m1",)) as model:
        with urllib.request.urlopen(f"{model.base_url}/models", timeout=5) as resp:
            assert [m["id"] for m in json.load(resp)["data"]] == ["m1"]
        status, _, raw = _post(f"{model.base_url}/responses", _turn("go"))
        assert status == 503
        assert json.loads(raw)["error"]["message"] == "overloaded"
        status, _, _ = _post(f"{model.url}/elsewhere", {})
        assert status == 404
        assert len(model.requests) == 3


# ----------------------------------------------------------------------------- trust


_PROBE = (
    "/work/main/.venv/bin/python /work/wt-codex/tests/e2e/codex_hook_probe.py /tmp/cxr7/hooks.jsonl"
)


@pytest.mark.parametrize(
    ("event", "handler", "matcher", "written_by_codex"),
    [
        (
            "PreToolUse",
            {"command": f"{_PROBE} deny"},
            "^Bash$",
            "sha256:60c893f140f12fe224b945978318e54a90087c534961e51fc978b8f6fb9c5d98",
        ),
        (
            "PreToolUse",
            {"command": f"{_PROBE} record", "timeout": 30, "statusMessage": "checking"},
            None,
            "sha256:12702e250b8cef14b38d01eeb6705ef5d2736dafa2f2b25e8b7ca1c5ed12fffb",
        ),
        (
            "PermissionRequest",
            {"command": f"{_PROBE} allow"},
            "Bash|mcp__.*",
            "sha256:277213f9a7e0712b007b6344ccec16f855d2bae5d4328c89460f0e83532b4aff",
        ),
        (
            "Stop",
            {"command": f"{_PROBE} record"},
            "ignored",
            "sha256:8adb29cfd3782050dcb44db42956209af929779ce40d3eff79f6c40c743ccc4f",
        ),
    ],
)
def test_trust_hash_equals_what_codex_wrote(
    event: str, handler: dict[str, Any], matcher: str | None, written_by_codex: str
) -> None:
    """Vectors Codex 0.169 itself wrote into config.toml when "Trust all and continue" was
    chosen in its TUI (test_codex_tui re-checks this against the live binary)."""
    assert hook_trust_hash(event, {"type": "command", **handler}, matcher) == written_by_codex


def test_trust_hash_normalises_like_codex() -> None:
    handler = {"type": "command", "command": "x"}
    base = hook_trust_hash("PreToolUse", handler)
    assert hook_trust_hash("PreToolUse", {**handler, "timeout": 600, "async": False}) == base
    assert hook_trust_hash("pre_tool_use", handler) == base
    assert hook_trust_hash("PreToolUse", {**handler, "timeout": 30}) != base
    assert hook_trust_hash("PreToolUse", handler, "Bash") != base
    # Stop and UserPromptSubmit ignore their matcher, so it does not count.
    assert hook_trust_hash("Stop", handler, "anything") == hook_trust_hash("Stop", handler)


def test_trust_entries_for_a_project_config(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [command_hook("a", matcher="^Bash$"), command_hook("b", timeout=5)],
        "Stop": [
            {"hooks": [{"type": "command", "command": "c"}, {"type": "command", "command": "d"}]}
        ],
    }
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(toml_dumps({"hooks": hooks}), encoding="utf-8")
    entries = hook_trust_entries(path)
    assert list(entries) == [
        hook_state_key(path, "PreToolUse", 0, 0),
        hook_state_key(path, "PreToolUse", 1, 0),
        hook_state_key(path, "Stop", 0, 0),
        hook_state_key(path, "Stop", 0, 1),
    ]
    assert list(entries)[2] == f"{path}:stop:0:0"
    assert entries[f"{path}:stop:0:1"] == hook_trust_hash("Stop", {"command": "d"})
    json_path = tmp_path / "hooks.json"
    json_path.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    assert list(hook_trust_entries(json_path).values()) == list(entries.values())


def test_toml_writer_round_trips() -> None:
    data = {
        "model": "gpt-5.5",
        "flag": True,
        "n": 3,
        "args": ["a b", 'q"uote'],
        "projects": {"/tmp/x y": {"trust_level": "trusted"}},
        "hooks": {
            "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "c"}]}],
            "state": {"/p/.codex/config.toml:pre_tool_use:0:0": {"trusted_hash": "sha256:1"}},
        },
        "env": {"inline": {"A": "1"}},
    }
    assert tomllib.loads(toml_dumps(data)) == data


# ----------------------------------------------------------------------------- probe


@pytest.mark.parametrize(
    ("event", "mode", "code", "stdout", "stderr"),
    [
        ("PreToolUse", "record", 0, None, ""),
        (
            "PreToolUse",
            "deny",
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "R",
                }
            },
            "",
        ),
        ("PreToolUse", "exit2", 2, None, "R"),
        ("PreToolUse", "legacy-block", 0, {"decision": "block", "reason": "R"}, ""),
        (
            "PermissionRequest",
            "allow",
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow"},
                }
            },
            "",
        ),
        ("Stop", "deny", 0, {"decision": "block", "reason": "R"}, ""),
    ],
)
def test_hook_probe_records_and_answers(
    tmp_path: Path, event: str, mode: str, code: int, stdout: Any, stderr: str
) -> None:
    log = tmp_path / "log.jsonl"
    argv = [sys.executable, str(HOOK_PROBE), str(log), mode, "R"]
    assert probe_command(log, mode, "R").split()[1:] == argv[1:]
    payload = {"hook_event_name": event, "tool_name": "Bash"}
    proc = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, check=False, timeout=30
    )
    assert proc.returncode == code
    assert (json.loads(proc.stdout) if proc.stdout.strip() else None) == stdout
    assert proc.stderr.strip() == stderr
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert (record["event"], record["stdin"]) == (event, payload)
