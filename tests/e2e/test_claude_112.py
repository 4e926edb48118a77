"""The real Claude Code 2.1.112 (`cli.js`), headless, against a scripted Anthropic API.

Proves, with the team files on disk while the run is alive:

* `TeamCreate` creates `teams/<name>/config.json` (lead only, `leadSessionId` = the
  run's session id); `SendMessage(to=<synthetic member>)` writes `inboxes/<name>.json`
  (`from`/`text`/`summary`/`timestamp`/`read: false`, no envelope keys).
* After TeamCreate a `-p` run does not exit when its turn ends: the lead counts as a
  teammate, so print mode polls `inboxes/team-lead.json` every 500 ms; an entry that
  ExoMonad appends there becomes the next model request as
  `<teammate-message teammate_id="...">` and is flagged `read: true`.
* `TeamDelete` refuses while a synthetic member is active (`isActive: true`) and
  succeeds once it is removed; then the run exits 0 and the team/task dirs are gone.
* `--input-format stream-json`: each stdin line `{"type": "user", "message": {"role":
  "user", "content": ...}}` is one turn (one model request); EOF ends the run.

These tests never skip: a missing CLI is a setup error, reported with the fix.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from exomonad.teams import (
    Mailbox,
    TeamPaths,
    get_dialect,
    register_synthetic,
    remove_synthetic,
)
from tests.e2e.claude_cli import (
    CLAUDE_112,
    ClaudeHome,
    HeadlessClaude,
    prepare_home,
    read_json_file,
    start_headless,
    wait_for_path,
)
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

STEP_TIMEOUT = 45.0  # one model round trip or file change; generous for a loaded 2-core box
EXIT_TIMEOUT = 30.0
ISO_MS_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _require_installed() -> None:
    """Fail (never skip) when the pinned CLI is missing; says how to fix it."""
    fail_if_missing(CLAUDE_112.install_problem)


@pytest.fixture
def home(tmp_path: Path) -> ClaudeHome:
    return prepare_home(tmp_path)


def _dump(run: HeadlessClaude, model: ScriptedClaude) -> str:
    kinds = [f"{e.get('type')}/{e.get('subtype', '')}" for e in run.events]
    return (
        f"--- requests ---{model.describe()}\n--- stream-json events ---\n{kinds}\n"
        f"--- stderr ---\n{run.stderr_tail()}"
    )


def _wait(event: threading.Event, what: str, run: HeadlessClaude, model: ScriptedClaude) -> None:
    if not event.wait(STEP_TIMEOUT):
        pytest.fail(f"timed out waiting for {what}\n{_dump(run, model)}", pytrace=False)


def _inbox(path: Path) -> list[dict[str, Any]]:
    data = read_json_file(path)
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


class LeadDriver:
    """The scripted lead: its responder holds the HTTP response at two gates while the
    test inspects and changes the disk (Claude Code simply waits for the model)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.task_text = f"please review module alpha {token}"
        self.team_created = threading.Event()  # TeamCreate's result is in a request
        self.member_registered = threading.Event()  # worker-x added: release gate 1
        self.delete_refused = threading.Event()  # TeamDelete refused (synthetic member)
        self.member_removed = threading.Event()  # worker-x removed: release gate 2

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        results = req.newest_tool_results()
        names = [name for name, _ in results]
        if names == ["TeamCreate"]:
            self.team_created.set()
            if not self.member_registered.wait(STEP_TIMEOUT):
                return "gate timed out"
            return tool_reply(
                "SendMessage",
                {
                    "to": "worker-x",
                    "summary": f"review alpha {self.token}",
                    "message": self.task_text,
                },
            )
        if any(m.teammate_id == "gemini-1" for m in req.teammate_messages()) and not results:
            return tool_reply("TeamDelete", {})
        if names == ["TeamDelete"] and "Cannot cleanup" in results[0][1]:
            self.delete_refused.set()
            if not self.member_removed.wait(STEP_TIMEOUT):
                return "gate timed out"
            return tool_reply("TeamDelete", {})
        return None  # the script, else the default text


def _check_team_created(
    home: ClaudeHome, team: TeamPaths, run: HeadlessClaude, model: ScriptedClaude
) -> None:
    config = read_json_file(team.config_file)
    assert isinstance(config, dict), f"no {team.config_file}\n{_dump(run, model)}"
    assert config["name"] == team.team
    assert config["description"].startswith("e2e ")
    assert config["leadAgentId"] == f"team-lead@{team.team}"
    assert config["leadSessionId"] == run.session_id
    assert "leadProcess" not in config  # a 2.1.330 addition
    assert [m["name"] for m in config["members"]] == ["team-lead"]
    lead = config["members"][0]
    assert lead["agentId"] == f"team-lead@{team.team}"
    assert lead["tmuxPaneId"] == ""
    assert lead["cwd"] == str(home.workspace)


def _check_worker_inbox(team: TeamPaths, driver: LeadDriver, model: ScriptedClaude) -> None:
    wait_for_path(
        lambda: bool(_inbox(team.inbox("worker-x"))), STEP_TIMEOUT, what="inboxes/worker-x.json"
    )
    [entry] = _inbox(team.inbox("worker-x"))
    assert entry["from"] == "team-lead"
    assert entry["text"] == driver.task_text
    assert entry["summary"] == f"review alpha {driver.token}"
    assert entry["read"] is False
    assert ISO_MS_Z.match(entry["timestamp"]), entry
    assert datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
    assert not {"msgV", "msg_id", "type"} & entry.keys()  # 2.1.112 has no envelope
    sent = model.wait_for_request(
        lambda r: any(n == "SendMessage" for n, _ in r.newest_tool_results()), STEP_TIMEOUT
    )
    result_text = sent.newest_tool_results()[0][1]
    assert "Message sent to worker-x's inbox" in result_text, result_text


def _deliver_to_lead(
    team: TeamPaths, text: str, run: HeadlessClaude, model: ScriptedClaude
) -> float:
    """Append to inboxes/team-lead.json; returns the latency to the model request."""
    since = model.next_index
    appended_at = time.monotonic()
    Mailbox(team, dialect=get_dialect("2.1.112")).send(
        "team-lead", sender="gemini-1", text=text, check_member=False
    )
    try:
        got = model.wait_for_teammate_message("gemini-1", text, STEP_TIMEOUT, since=since)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(run, model)}", pytrace=False)
    assert got.last_user_texts() == [
        f'<teammate-message teammate_id="gemini-1">\n{text}\n</teammate-message>'
    ]
    wait_for_path(
        lambda: any(e.get("read") is True for e in _inbox(team.inbox("team-lead"))),
        STEP_TIMEOUT,
        what="the lead marking its inbox entry read",
    )
    [lead_entry] = _inbox(team.inbox("team-lead"))  # flagged, not deleted (2.1.112)
    assert lead_entry["text"] == text
    return got.received_at - appended_at


def _delete_team(
    home: ClaudeHome,
    team: TeamPaths,
    driver: LeadDriver,
    run: HeadlessClaude,
    model: ScriptedClaude,
) -> int:
    _wait(driver.delete_refused, "TeamDelete refusing the synthetic member", run, model)
    refusal = model.wait_for_request(
        lambda r: any("Cannot cleanup" in t for _, t in r.newest_tool_results()), STEP_TIMEOUT
    ).newest_tool_results()[0][1]
    assert "worker-x" in refusal, refusal  # "Cannot cleanup team with 1 active member(s)"
    assert team.config_file.exists()
    remove_synthetic(team, "worker-x")
    driver.member_removed.set()
    rc = run.wait(EXIT_TIMEOUT)
    assert rc == 0, _dump(run, model)
    cleaned = [
        t for r in model.agent_requests() for n, t in r.newest_tool_results() if n == "TeamDelete"
    ]
    assert any("Cleaned up" in t for t in cleaned), cleaned
    assert not team.config_dir.exists()
    assert not (home.config_dir / "tasks" / team.team).exists()
    return rc


def test_team_create_send_message_and_lead_inbox(home: ClaudeHome) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    team = home.team(f"exo-e2e-{token}")
    driver = LeadDriver(token)
    script: list[ReplySpec] = [
        tool_reply("TeamCreate", {"team_name": team.team, "description": f"e2e {token}"})
    ]
    with (
        ScriptedClaude(script, responder=driver) as model,
        start_headless(CLAUDE_112, home, model.url, prompt=f"create a team {token}") as run,
    ):
        # TeamCreate: the team exists while the run is alive (the responder holds it)
        _wait(driver.team_created, "the request carrying TeamCreate's result", run, model)
        _check_team_created(home, team, run, model)
        # SendMessage to a synthetic member registered now
        register_synthetic(team, "worker-x")
        driver.member_registered.set()
        _check_worker_inbox(team, driver, model)
        # The turn ends (then a shutdown-prompt turn), yet the run stays alive polling
        results = run.wait_for_results(2, STEP_TIMEOUT)
        assert run.running(), _dump(run, model)
        shutdown = model.wait_for_request(lambda r: r.mentions("Shut down your team"), 5)
        latency = _deliver_to_lead(team, f"module alpha reviewed {token}", run, model)
        # TeamDelete: refused while our member is active, then the run ends
        rc = _delete_team(home, team, driver, run, model)

    print(
        f"\n[claude-112] {len(model.requests)} requests ({len(model.agent_requests())} agent, "
        f"{len(model.side_requests())} side); shutdown prompt at #{shutdown.index}; "
        f"{len(results)} results before the append; inbox append -> model request "
        f"{latency:.2f}s; run exited {rc}"
    )


def test_stream_json_stdin_turns(home: ClaudeHome) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    first = f"exo e2e first turn {token}"
    second = f"exo e2e second turn {token}"
    with (
        ScriptedClaude([f"ACK one {token}", f"ACK two {token}"]) as model,
        start_headless(CLAUDE_112, home, model.url, stream_input=True) as run,
    ):
        # Nothing happens before the first stdin line: no init event, no model request.
        sent_at = run.send_turn(first)
        try:
            req1 = model.wait_for_user_text(first, STEP_TIMEOUT)
            [result1] = run.wait_for_results(1, STEP_TIMEOUT)
            sent2_at = run.send_turn([{"type": "text", "text": second}])  # blocks work too
            req2 = model.wait_for_user_text(second, STEP_TIMEOUT, since=req1.index + 1)
            results = run.wait_for_results(2, STEP_TIMEOUT)
        except TimeoutError as e:
            pytest.fail(f"{e}\n{_dump(run, model)}", pytrace=False)
        assert result1["result"] == f"ACK one {token}"
        assert results[1]["result"] == f"ACK two {token}"
        assert req2.last_user_texts() == [second]
        history = req2.user_texts()
        assert history.index(first) < history.index(second)
        assert {"type": "text", "text": f"ACK one {token}"} in req2.blocks("assistant")
        assert len(model.agent_requests()) == 2
        assert run.session_id is not None
        assert {r["session_id"] for r in results} == {run.session_id}

        run.close_stdin()  # EOF ends a stream-json run
        rc = run.wait(EXIT_TIMEOUT)
        assert rc == 0, _dump(run, model)
    print(
        f"\n[claude-112] stream-json stdin -> request {req1.received_at - sent_at:.2f}s "
        f"(first, includes start-up), {req2.received_at - sent2_at:.2f}s (second)"
    )


def test_title_side_request_does_not_consume_the_script(home: ClaudeHome) -> None:
    """With nonessential traffic allowed, a title request (`tools: []`, a JSON schema in
    `output_config.format`) comes first; it is answered from the schema, and the script
    still goes to the agent turn."""
    _require_installed()
    token = secrets.token_hex(4)
    prompt = f"exo e2e side requests {token}"
    with (
        ScriptedClaude([f"ACK {token}"]) as model,
        start_headless(
            CLAUDE_112, home, model.url, prompt=prompt, nonessential_traffic=True
        ) as run,
    ):
        try:
            [result] = run.wait_for_results(1, STEP_TIMEOUT)
            assert run.wait(EXIT_TIMEOUT) == 0
        except TimeoutError as e:
            pytest.fail(f"{e}\n{_dump(run, model)}", pytrace=False)
    assert result["result"] == f"ACK {token}"
    side = model.side_requests()
    assert side, model.describe()
    title = side[0]
    assert title.body.get("tools") == []
    schema = title.body["output_config"]["format"]["schema"]
    assert schema["required"] == ["title"]
    assert prompt in title.user_texts()
    served = {index: (reply, source) for index, reply, source in model.served()}
    assert served[title.index][1] == "side"
    assert json.loads(served[title.index][0].blocks[0]["text"]) == {"title": "Scripted session"}
    [agent] = model.agent_requests()
    assert served[agent.index][1] == "script"
    print(
        f"\n[claude-112] side requests: "
        f"{[(r.model, r.max_tokens, r.system_text[:60]) for r in side]}"
    )
