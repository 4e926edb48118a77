"""The real Claude Code 2.1.330 (native binary), interactive in a tmux pane, against a
scripted Anthropic API.

Proves:

* (a) With the seeded `.claude.json` / settings.json the client reaches its prompt with
  no dialog, and at start creates the session team `session-<first 8 hex of the session
  id>` (`leadSessionId`, `leadProcess`); Agent is offered, SendMessage is a deferred tool
  (named in the system message, loaded by ToolSearch), TeamCreate/TeamDelete are gone.
* (b) A synthetic member ExoMonad adds to that config.json (`register_synthetic`) is
  reachable: a scripted `SendMessage(to="gemini-1")` writes `inboxes/gemini-1.json`
  with `msgV`/`msg_id`/`type`. But with only synthetic members the lead does **not**
  poll `inboxes/team-lead.json`: an entry there is never delivered (not even with the
  next typed prompt).
* (c, d) `CLAUDE_CODE_TEAMMATE_COMMAND=<recorder>` + `Agent(name="gemini-1")` makes
  Claude Code split a tmux pane and run the recorder with `--agent-id ... --team-name
  ...`; from then on the lead polls its inbox: an entry appended there (from the
  spawned member or from a synthetic one) reaches the next model request as a
  `<teammate-message>` within about a second, and the lead prunes the file to `[]`.

These tests never skip: a missing CLI or tmux is a setup error, reported with the fix.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.scripted.anthropic import RecordedRequest, ScriptedClaude
from exomonad.teams import Mailbox, TeamPaths, register_synthetic
from tests.e2e.claude_cli import (
    CLAUDE_330,
    ClaudeHome,
    ClaudePane,
    Tmux,
    prepare_home,
    read_json_file,
    start_claude_in_tmux,
    tmux_install_problem,
    wait_for_path,
    wait_for_session_team,
)
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

READY_TIMEOUT = 60.0  # ~1-2 s on an idle box
STEP_TIMEOUT = 45.0
#: The lead polls each inbox every 1000 ms; this many seconds without a delivery means
#: it is not polling at all.
NO_POLL_WINDOW = 5.0
SESSION_TEAM = re.compile(r"^session-([0-9a-f]{8})$")


def _require_installed() -> None:
    """Fail (never skip) when the pinned CLI or tmux is missing; says how to fix it."""
    fail_if_missing(CLAUDE_330.install_problem, tmux_install_problem)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with Tmux() as server:  # its own server: socket exo-e2e-claude-<random>
        yield server


@pytest.fixture
def model() -> Iterator[ScriptedClaude]:
    with ScriptedClaude() as server:
        yield server


def _dump(pane: ClaudePane, model: ScriptedClaude) -> str:
    return f"--- pane ---\n{pane.capture()}\n--- requests ---{model.describe()}"


def _inbox(path: Path) -> list[dict[str, Any]]:
    data = read_json_file(path)
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _start(
    tmux: Tmux, model: ScriptedClaude, home: ClaudeHome, **kwargs: Any
) -> tuple[ClaudePane, TeamPaths, dict[str, Any]]:
    pane = start_claude_in_tmux(tmux, home, model.url, ready_timeout=READY_TIMEOUT, **kwargs)
    name, config = wait_for_session_team(home, STEP_TIMEOUT)
    return pane, home.team(name), config


def _tool_result(
    model: ScriptedClaude, tool: str, pane: ClaudePane, *, since: int = 0
) -> tuple[RecordedRequest, str]:
    try:
        req = model.wait_for_request(
            lambda r: any(n == tool for n, _ in r.newest_tool_results()), STEP_TIMEOUT, since=since
        )
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    return req, next(t for n, t in req.newest_tool_results() if n == tool)


def test_ready_without_dialogs_and_session_team(
    tmux: Tmux, model: ScriptedClaude, tmp_path: Path
) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    home = prepare_home(tmp_path, teammate_mode="tmux")
    pane, team, config = _start(tmux, model, home)

    match = SESSION_TEAM.match(team.team)
    assert match, team.team
    assert config["name"] == team.team
    assert config["leadSessionId"].startswith(match.group(1))
    assert uuid.UUID(config["leadSessionId"])
    assert config["leadAgentId"] == f"team-lead@{team.team}"
    lead_pid = config["leadProcess"]["pid"]
    cmdline = Path(f"/proc/{lead_pid}/cmdline").read_bytes().split(b"\0")
    assert cmdline[0].decode() == str(CLAUDE_330.entry), cmdline
    assert [m["name"] for m in config["members"]] == ["team-lead"]
    lead = config["members"][0]
    assert (lead["tmuxPaneId"], lead["backendType"]) == ("leader", "in-process")
    assert lead["cwd"] == str(home.workspace)

    model.add_text(f"ACK {token}")
    prompt = f"exo e2e hello {token}"
    sent_at = pane.type_message(prompt)
    try:
        req = model.wait_for_user_text(prompt, STEP_TIMEOUT)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    pane.wait_for_text(f"ACK {token}", STEP_TIMEOUT)

    tools = req.tool_names()
    assert "Agent" in tools
    assert not {"SendMessage", "TeamCreate", "TeamDelete"} & set(tools), tools
    deferred = "\n".join(str(m.get("content")) for m in req.messages if m.get("role") == "system")
    assert "SendMessage" in deferred  # a deferred tool: loaded through ToolSearch
    assert "TeamCreate" not in deferred
    agent = req.tool("Agent")
    assert agent is not None
    props = agent["input_schema"]["properties"]
    assert agent["input_schema"]["required"] == ["description", "prompt"]
    assert {"name", "subagent_type", "team_name", "prompt", "description"} <= props.keys()
    assert req.max_tokens > 1024  # agent turns; side requests offer `tools: []`
    print(
        f"\n[claude-330] ready after {pane.ready_after:.2f}s; team {team.team}; "
        f"send-keys -> request {req.received_at - sent_at:.2f}s; model {req.model}; "
        f"{len(model.requests)} requests ({len(model.side_requests())} side)"
    )


def test_send_message_to_synthetic_member(
    tmux: Tmux, model: ScriptedClaude, tmp_path: Path
) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    home = prepare_home(tmp_path, teammate_mode="tmux")
    pane, team, _ = _start(tmux, model, home)
    member = register_synthetic(team, "gemini-1")
    assert (member.tmux_pane_id, member.backend_type) == ("synthetic", "exomonad")

    task = f"please review module beta {token}"
    model.add_tool_use("ToolSearch", {"query": "select:SendMessage", "max_results": 5})
    model.add_tool_use(
        "SendMessage", {"to": "gemini-1", "summary": f"review beta {token}", "message": task}
    )
    model.add_text(f"sent {token}")
    pane.type_message(f"hand module beta to gemini-1 {token}")
    loaded, _ = _tool_result(model, "ToolSearch", pane)
    schema = loaded.tool("SendMessage")
    assert schema is not None, loaded.tool_names()
    assert schema["input_schema"]["required"] == ["to", "message"]
    assert {"to", "summary", "message"} <= schema["input_schema"]["properties"].keys()
    _, result = _tool_result(model, "SendMessage", pane)
    assert "Message sent to gemini-1's inbox" in result, result
    pane.wait_for_text(f"sent {token}", STEP_TIMEOUT)

    [entry] = _inbox(team.inbox("gemini-1"))
    assert entry["from"] == "team-lead"
    assert entry["text"] == task
    assert entry["summary"] == f"review beta {token}"
    assert entry["read"] is False
    assert (entry["msgV"], entry["type"]) == (1, "message")
    assert uuid.UUID(entry["msg_id"])
    assert json.loads(result)["msg_id"] == entry["msg_id"]
    config = read_json_file(team.config_file)
    assert [m["name"] for m in config["members"]] == ["team-lead", "gemini-1"]
    assert config["members"][1]["backendType"] == "exomonad"  # kept as we wrote it

    # With only synthetic members the lead does not poll inboxes/team-lead.json.
    note = f"gemini-1 finished beta {token}"
    Mailbox(team).send("team-lead", sender="gemini-1", text=note, check_member=False)
    since = model.next_index
    with pytest.raises(TimeoutError):
        model.wait_for_teammate_message("gemini-1", note, NO_POLL_WINDOW, since=since)
    model.add_text(f"second {token}")
    second = f"anything new {token}"
    pane.type_message(second)
    req = model.wait_for_user_text(second, STEP_TIMEOUT, since=since)
    assert not req.teammate_messages()
    pane.wait_for_text(f"second {token}", STEP_TIMEOUT)
    assert [e["text"] for e in _inbox(team.inbox("team-lead"))] == [note]  # untouched
    print(f"\n[claude-330] SendMessage entry keys: {sorted(entry)}; team-lead.json unread")


RECORDER = """#!{python}
import json, os, sys, time
with open({record!r} + ".tmp", "w") as f:
    json.dump({{"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(),
               "pid": os.getpid()}}, f)
os.replace({record!r} + ".tmp", {record!r})
time.sleep(300)
"""


def _write_recorder(tmp_path: Path) -> tuple[Path, Path]:
    record = tmp_path / "teammate-command.json"
    script = tmp_path / "record-teammate.py"
    script.write_text(RECORDER.format(python=sys.executable, record=str(record)), "utf-8")
    script.chmod(0o755)
    return script, record


def _options(argv: list[str]) -> dict[str, str | None]:
    """`--flag value` / `--flag` pairs of an argv (after the program)."""
    out: dict[str, str | None] = {}
    args = argv[1:]
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            nxt = args[i + 1] if i + 1 < len(args) else None
            out[arg] = None if nxt is None or nxt.startswith("--") else nxt
    return out


def _check_teammate_command(
    recorded: dict[str, Any],
    script: Path,
    home: ClaudeHome,
    team: TeamPaths,
    config: dict[str, Any],
    model: ScriptedClaude,
) -> None:
    argv, env = recorded["argv"], recorded["env"]
    assert argv[0] == str(script)
    opts = _options(argv)
    assert opts["--agent-id"] == f"gemini-1@{team.team}"
    assert opts["--agent-name"] == "gemini-1"
    assert opts["--team-name"] == team.team
    assert opts["--parent-session-id"] == config["leadSessionId"]
    assert opts["--agent-color"]
    assert opts["--lead-verify-key"]
    assert "--dangerously-skip-permissions" in opts
    assert opts["--model"] == model.agent_requests()[-1].model
    assert env["CLAUDECODE"] == "1"
    assert env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"] == "1"
    assert env["CLAUDE_CONFIG_DIR"] == str(home.config_dir)
    assert env["ANTHROPIC_BASE_URL"] == model.url
    assert "ANTHROPIC_API_KEY" not in env  # not passed on
    assert recorded["cwd"] == str(home.workspace)


def _check_spawned_member(tmux: Tmux, team: TeamPaths, task: str, env: dict[str, str]) -> None:
    """Claude Code registered the member itself and mailed it the prompt."""
    members = {m["name"]: m for m in read_json_file(team.config_file)["members"]}
    spawned = members["gemini-1"]
    assert spawned["backendType"] == "tmux"
    assert spawned["tmuxPaneId"] == env["TMUX_PANE"]
    assert spawned["prompt"] == task
    assert spawned["agentId"] == f"gemini-1@{team.team}"
    assert members["gemini-2"]["backendType"] == "exomonad"
    panes = {p["id"]: p for p in tmux.panes()}
    assert spawned["tmuxPaneId"] in panes, panes
    [first] = _inbox(team.inbox("gemini-1"))
    assert (first["from"], first["text"]) == ("team-lead", task)
    assert first["lead_sig"]


def _deliver_to_lead(
    team: TeamPaths, sender: str, note: str, pane: ClaudePane, model: ScriptedClaude
) -> float:
    """Append to inboxes/team-lead.json; the latency until the model request has it."""
    since = model.next_index
    appended_at = time.monotonic()
    Mailbox(team).send(
        "team-lead", sender=sender, text=note, summary=f"{sender} done", check_member=False
    )
    try:
        req = model.wait_for_teammate_message(sender, note, STEP_TIMEOUT, since=since)
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    [msg] = [m for m in req.teammate_messages() if m.teammate_id == sender]
    assert msg.attrs.get("summary") == f"{sender} done"
    tag = f'<teammate-message teammate_id="{sender}" summary="{sender} done">'
    assert tag in req.last_user_texts()[-1]
    wait_for_path(
        lambda: _inbox(team.inbox("team-lead")) == [],
        STEP_TIMEOUT,
        what="the lead pruning team-lead.json",
    )
    return req.received_at - appended_at


def test_teammate_command_spawn_and_lead_inbox(
    tmux: Tmux, model: ScriptedClaude, tmp_path: Path
) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    script, record = _write_recorder(tmp_path)
    home = prepare_home(tmp_path / "claude", teammate_mode="tmux")
    # pane_env=False: the split pane gets only the tmux server's scrubbed env plus what
    # Claude Code itself passes, so the record shows exactly that.
    pane, team, config = _start(
        tmux,
        model,
        home,
        pane_env=False,
        extra_env={"CLAUDE_CODE_TEAMMATE_COMMAND": str(script)},
    )
    register_synthetic(team, "gemini-2")  # a synthetic member next to the spawned one

    task = f"review module gamma {token}"
    model.add_tool_use(
        "Agent", {"description": "gemini worker", "prompt": task, "name": "gemini-1"}
    )
    model.add_text(f"spawned {token}")
    pane.type_message(f"start gemini-1 on gamma {token}")
    _, result = _tool_result(model, "Agent", pane)
    assert "Spawned successfully" in result, result
    assert f"agent_id: gemini-1@{team.team}" in result, result
    try:
        wait_for_path(record.exists, STEP_TIMEOUT, what="the teammate command's record")
    except TimeoutError as e:
        pytest.fail(f"{e}\n{_dump(pane, model)}", pytrace=False)
    recorded = json.loads(record.read_text("utf-8"))
    _check_teammate_command(recorded, script, home, team, config, model)
    _check_spawned_member(tmux, team, task, recorded["env"])
    pane.wait_for_text(f"spawned {token}", STEP_TIMEOUT)

    # Now the lead polls its inbox: entries from the spawned and a synthetic member.
    latencies = [
        _deliver_to_lead(team, sender, f"{sender} done with gamma {token}", pane, model)
        for sender in ("gemini-1", "gemini-2")
    ]
    env = recorded["env"]
    print(
        f"\n[claude-330] teammate command argv: {recorded['argv'][1:]}\n"
        f"[claude-330] env from Claude Code: "
        f"{sorted(k for k, v in env.items() if tmux.env.get(k) != v)}\n"
        f"[claude-330] inbox append -> model request: "
        f"{', '.join(f'{x:.2f}s' for x in latencies)}"
    )
