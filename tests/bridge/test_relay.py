"""The lead relay with a stand-in lead process (the real Claude Code twin is in tests/e2e)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from exomonad.bridge.relay import render_teammate_message, user_turn
from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until
from tests.support.jsonl import whole_records

FAKE_LEAD = Path(__file__).parents[1] / "support" / "fake_lead.py"


def _turns(path: Path) -> list[dict[str, Any]]:
    return whole_records(path)


def _texts(path: Path) -> list[str]:
    return [t["message"]["content"][0]["text"] for t in _turns(path)]


def test_user_turn_is_stream_json() -> None:
    line = user_turn('hi "x"')
    assert line.endswith(b"\n")
    assert json.loads(line) == {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": 'hi "x"'}]},
    }


def test_teammate_message_escapes_attributes() -> None:
    out = render_teammate_message({"from": 'a"b', "text": "<b>", "summary": "x&y"})
    want = '<teammate-message teammate_id="a&quot;b" summary="x&amp;y"><b></teammate-message>'
    assert out == want


def test_relay_feeds_each_inbox_entry_once(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    team = TeamPaths("relay-team", root)
    create_team(team)
    register_synthetic(team, "gemini-1")
    out = tmp_path / "turns.jsonl"
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(tmp_path / "state"))
    relay = subprocess.Popen(
        [sys.executable, "-m", "exomonad", "relay", "--team", "relay-team", "--",
         sys.executable, str(FAKE_LEAD), str(out)],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert relay.stdin is not None
    try:
        relay.stdin.write(user_turn("own turn from the orchestrator"))
        relay.stdin.flush()
        retry_until(lambda: len(_turns(out)) == 1, timeout=30, message="own turn not passed on")
        mb = Mailbox(team, durable=False)
        for i in range(3):
            mb.send("team-lead", sender="gemini-1", text=f"report {i}", summary=f"s{i}")
        retry_until(lambda: len(_turns(out)) == 4, timeout=30, message=f"{_texts(out)}")
        # Delivered entries were pruned (2.1.330 dialect) without being relayed again.
        retry_until(lambda: mb.read_raw("team-lead") == [], timeout=10)
        mb.send("team-lead", sender="gemini-1", text="QUIT now")
        relay.wait(30)
    finally:
        if relay.poll() is None:
            relay.kill()
    texts = _texts(out)
    assert texts[0] == "own turn from the orchestrator"
    assert texts[1:4] == [
        f'<teammate-message teammate_id="gemini-1" summary="s{i}">report {i}</teammate-message>'
        for i in range(3)
    ]
    assert texts[4:] == ['<teammate-message teammate_id="gemini-1">QUIT now</teammate-message>']
    assert relay.returncode == 3  # the lead's exit code
    assert relay.stdout is not None
    assert relay.stdout.read().count(b'"ack"') == 5  # the lead's stdout passed through
