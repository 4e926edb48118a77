"""The real Gemini CLI, interactive in a tmux pane, against a scripted model server.

Proves that text typed into the pane (`send-keys -l`, Enter ~150 ms later) becomes the
user text of the next model request, that a later message in the same session arrives
in a later request, and that a scripted `functionCall` makes the CLI call a tool on an
MCP server named `exo` and send the result back as a `functionResponse`.

These tests never skip: a missing CLI is a setup error, reported with the fix.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.panes.tmux import TmuxBackend
from exomonad.scripted.gemini import ScriptedGemini
from tests.e2e.gemini_cli import (
    GeminiPane,
    Tmux,
    gemini_install_problem,
    prepare_home,
    start_gemini_in_tmux,
    tmux_install_problem,
)
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MCP_STUB = Path(__file__).resolve().parent / "exo_mcp_stub.py"
READY_TIMEOUT = 60.0  # cold start is 3-6 s on an idle 2-core box; leave room for load
REQUEST_TIMEOUT = 45.0


def _require_installed() -> None:
    """Fail (never skip) when the pinned CLI or tmux is missing; says how to fix it."""
    fail_if_missing(gemini_install_problem, tmux_install_problem)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with Tmux() as server:  # its own server: socket exo-e2e-<random>
        yield server


@pytest.fixture
def model() -> Iterator[ScriptedGemini]:
    with ScriptedGemini() as server:
        yield server


def _token() -> str:
    return secrets.token_hex(4)


def _dump(pane: GeminiPane, model: ScriptedGemini) -> str:
    reqs = [f"#{r.index} {r.path} tools={r.has_tools}" for r in model.requests]
    return f"--- pane ---\n{pane.capture()}\n--- requests ---\n" + "\n".join(reqs)


def test_typed_text_reaches_model_requests(
    tmux: Tmux, model: ScriptedGemini, tmp_path: Path
) -> None:
    _require_installed()
    token = _token()
    first = f"exo e2e first message {token}"
    second = f"exo e2e second message {token}"
    model.add_text(f"ACK one {token}")
    model.add_text(f"ACK two {token}")

    home = prepare_home(tmp_path)
    pane = start_gemini_in_tmux(tmux, home, model.url, ready_timeout=READY_TIMEOUT)

    sent_at = pane.type_message(first)
    try:
        req1 = model.wait_for_user_text(first, timeout=REQUEST_TIMEOUT)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    assert first in req1.last_user_texts(), req1.last_user_texts()
    assert req1.is_agent_turn
    assert req1.method_name in ("streamGenerateContent", "generateContent")
    first_latency = req1.received_at - sent_at

    # Let the turn finish (the scripted reply is on screen) before typing again.
    pane.wait_for_text(f"ACK one {token}", timeout=REQUEST_TIMEOUT)

    sent_at = pane.type_message(second)
    try:
        req2 = model.wait_for_user_text(second, timeout=REQUEST_TIMEOUT, since=req1.index + 1)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    second_latency = req2.received_at - sent_at
    assert req2.index > req1.index
    assert req2.last_user_texts() == [second]
    history = req2.user_texts()
    assert first in history
    assert history.index(first) < history.index(second)
    # the first scripted reply is in the history as a model turn
    model_texts = [p.get("text") for p in req2.parts("model")]
    assert f"ACK one {token}" in model_texts
    pane.wait_for_text(f"ACK two {token}", timeout=REQUEST_TIMEOUT)

    print(
        f"\n[gemini-e2e] ready after {pane.ready_after:.2f}s; "
        f"send-keys->request {first_latency:.2f}s (first), {second_latency:.2f}s (second); "
        f"{len(model.requests)} requests ({len(model.agent_requests())} agent turns)"
    )


def _read_calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _wait_calls(path: Path, event: str, timeout: float) -> list[dict[str, Any]]:
    # The stub writes from another process: poll the file against a deadline.
    deadline = time.monotonic() + timeout
    while True:
        found = [c for c in _read_calls(path) if c.get("event") == event]
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def test_model_function_call_reaches_exo_mcp_tool(
    tmux: Tmux, model: ScriptedGemini, tmp_path: Path
) -> None:
    _require_installed()
    token = _token()
    calls = tmp_path / "exo-calls.jsonl"
    args = {"status": "success", "message": f"worker finished {token}"}
    model.add_function_call("mcp_exo_notify_parent", args)
    model.add_text(f"Parent notified {token}")

    home = prepare_home(
        tmp_path,
        mcp_servers={
            "exo": {
                "command": sys.executable,
                "args": [str(MCP_STUB), str(calls)],
                "timeout": 30000,
            }
        },
    )
    pane = start_gemini_in_tmux(tmux, home, model.url, yolo=True, ready_timeout=READY_TIMEOUT)
    launched = pane.started_at
    # Not required (prompts typed earlier are queued until MCP is up), but it makes a
    # broken MCP config fail here, with a clear message.
    assert _wait_calls(calls, "initialized", REQUEST_TIMEOUT), (
        f"MCP server `exo` never completed its handshake\n{_dump(pane, model)}"
    )
    mcp_after = time.monotonic() - launched

    prompt = f"report completion to the parent {token}"
    sent_at = pane.type_message(prompt)
    try:
        req1 = model.wait_for_user_text(prompt, timeout=REQUEST_TIMEOUT)
        assert "mcp_exo_notify_parent" in req1.tool_names(), req1.tool_names()
        req2 = model.wait_for_request(
            lambda r: r.is_agent_turn and bool(r.function_responses()),
            timeout=REQUEST_TIMEOUT,
            since=req1.index + 1,
        )
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)

    tool_calls = _wait_calls(calls, "call", 10)
    assert [c["args"] for c in tool_calls] == [args]
    assert tool_calls[0]["tool"] == "notify_parent"

    responses = req2.function_responses()
    assert [r.get("name") for r in responses] == ["mcp_exo_notify_parent"]
    assert "notified parent: success" in json.dumps(responses[0].get("response"))
    assert {"name": "mcp_exo_notify_parent", "args": args} in [
        {"name": c.get("name"), "args": c.get("args")} for c in req2.function_calls()
    ]
    pane.wait_for_text(f"Parent notified {token}", timeout=REQUEST_TIMEOUT)
    print(
        f"\n[gemini-e2e] ready after {pane.ready_after:.2f}s, MCP up after {mcp_after:.2f}s; "
        f"send-keys->request {req1.received_at - sent_at:.2f}s; "
        f"functionCall->functionResponse request {req2.received_at - req1.received_at:.2f}s"
    )


class _EnterWithTheText(TmuxBackend):
    """Pastes the text and presses Enter in one tmux call, the first time: Gemini CLI
    then processes that Enter within 40 ms of the paste, as it does when its event loop
    was busy while the keys waited, and takes it as a newline."""

    _before: str | None = None

    def _type(self, pane: str, line: str) -> None:
        self._before = self._snapshot(pane)
        buffer = ("-b", f"exomonad-test-{_token()}")
        self.run("load-buffer", *buffer, "-", ";", "paste-buffer", "-d", "-p", *buffer,
                 "-t", pane, ";", "send-keys", "-t", pane, "Enter", input=line)  # fmt: skip

    def _snapshot_then_enter(self, pane: str) -> str:
        before, self._before = self._before, None
        return before if before is not None else super()._snapshot_then_enter(pane)


def test_an_enter_taken_as_a_newline_is_pressed_again(
    tmux: Tmux, model: ScriptedGemini, tmp_path: Path
) -> None:
    """Measured before the fix: the pane changed after the Enter (the newline), so the
    delivery counted as submitted and the text stayed in the input box, never sent (a
    worker's task, in CI). Now the screen shows the text still in the input, Enter is
    pressed again, and the text reaches the model, once."""
    _require_installed()
    text = f"the task {_token()}"
    model.add_text("on it")
    home = prepare_home(tmp_path)
    pane = start_gemini_in_tmux(tmux, home, model.url, yolo=True, ready_timeout=READY_TIMEOUT)
    receipt = _EnterWithTheText(tmux.socket).deliver(pane.pane_id, text)
    try:
        model.wait_for_user_text(text, timeout=REQUEST_TIMEOUT)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{receipt}\n{_dump(pane, model)}", pytrace=False)
    assert receipt.submitted, receipt
    assert receipt.enter_attempts == 2, receipt
    pane.wait_for_text("on it", timeout=REQUEST_TIMEOUT)
    turns = [r for r in model.agent_requests() if text in r.last_user_texts()]
    assert len(turns) == 1, _dump(pane, model)
