"""A real Gemini CLI worker against the real ExoMonad server: MCP, hooks, policy, idle.

Everything is real except the model (`ScriptedGemini`): Gemini CLI 0.61.0 in a tmux
pane, `python -m exomonad serve` (its watcher types the lead's inbox entries into the
pane), `exomonad mcp-stdio` as Gemini's `exo` MCP server (proxying to the server over
its Unix socket), and `exomonad hook ... --runtime gemini` as Gemini's hooks.

What Gemini CLI 0.61.0 needs (found in its bundle and checked by
`test_gemini_environment_of_mcp_servers_and_hooks`):

* **MCP servers do not see `EXOMONAD_TOKEN`.** A stdio MCP server gets Gemini's
  environment after *forced* redaction: every name matching /TOKEN|SECRET|KEY|AUTH|.../i
  is dropped (`sanitizeEnvironment(..., enableEnvironmentVariableRedaction: true)` in
  `mcp-client`), so without an explicit entry `exomonad mcp-stdio` runs token-less, as
  the least role. `EXOMONAD_DIR` and `CLAUDE_CONFIG_DIR` pass through. The fix is the
  server entry's `env`: `{"EXOMONAD_TOKEN": "${EXOMONAD_TOKEN}"}`. `$VAR` / `${VAR}` /
  `${VAR:-default}` are expanded when settings.json is loaded, against Gemini's own
  (unredacted) environment, so one settings file serves every worker.
* **Hooks do see it.** Hook commands get Gemini's environment unredacted unless
  `security.environmentVariableRedaction.enabled` is set (then use the hook's `env`).
* **Matcher**: missing, `""` or `"*"` match every tool; anything else is a regex tested
  (unanchored) against the tool name, falling back to string equality if it does not
  compile. So `"*"` and `".*"` both work.
* **`--yolo` does not bypass hooks**: the scheduler runs BeforeTool before its own
  policy / approval-mode check, and a hook `deny` ends the call with
  `Tool execution blocked: <reason>` as the functionResponse. The policy test runs with
  `--yolo` (as `spawn_workers` launches workers) and shows an allowed command does run.
* **AfterAgent fires once per prompt**, after the last model turn (not after turns that
  end in tool calls); BeforeAgent once per prompt, before the first.
* **Regression test (`?` and `!`)**: Gemini judges the keys of a burst of plain (not
  bracketed-paste) input against the input box as it was before the burst, so a `?`
  would be eaten (it opens the shortcuts help) and a `!` would switch to shell mode,
  running the rest of the message as a shell command without any BeforeTool hook.
  ExoMonad pastes bracketed (`paste-buffer -p`) and presses Enter only once the end of
  the text shows on screen (Gemini turns an Enter within ~40 ms of a paste into a
  newline, and a busy pane redraws before it reads the paste).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.scripted.gemini import RecordedRequest, ScriptedGemini
from exomonad.server.identity import Identity, TokenStore
from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic
from exomonad.teams.protocol import IdleNotification, decode
from exomonad.util.waiting import WaitTimeout, retry_until
from tests.e2e.gemini_cli import GeminiPane, Tmux, prepare_home, start_gemini_in_tmux
from tests.e2e.harness import ExomonadServe
from tests.e2e.test_gemini_pane import READY_TIMEOUT, REQUEST_TIMEOUT, _require_installed

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TEAM = "proj"
WORKER = "gemini-1"
LEAD = "team-lead"
SERVER_START_TIMEOUT = 30.0
HOOK_TIMEOUT_MS = 60000


# ---------------------------------------------------------------------------- fixture


@dataclass
class Exo:
    """A project with a running ExoMonad server, its team, and a token for the worker."""

    root: Path  # CLAUDE_CONFIG_DIR
    state: Path  # EXOMONAD_DIR (<project>/.exomonad)
    paths: TeamPaths
    token: str  # the worker's token, issued before the server started
    env: dict[str, str]  # the server's environment
    tmux: Tmux  # the private tmux server the ExoMonad server drives
    server: ExomonadServe | None = None

    def worker_env(self) -> dict[str, str]:
        """What `spawn_workers` puts in a worker pane (plus the config root)."""
        return {
            "EXOMONAD_TOKEN": self.token,
            "EXOMONAD_NAME": WORKER,
            "EXOMONAD_TEAM": TEAM,
            "EXOMONAD_DIR": str(self.state),
            "CLAUDE_CONFIG_DIR": str(self.root),
        }

    def lead_inbox(self) -> list[dict[str, Any]]:
        return Mailbox(self.paths).read_raw(LEAD)

    def idle_notifications(self) -> list[IdleNotification]:
        out = []
        for entry in self.lead_inbox():
            msg = decode(str(entry.get("text", "")))
            if isinstance(msg, IdleNotification):
                out.append(msg)
        return out

    def server_log(self) -> str:
        return self.server.log() if self.server is not None else ""

    def hook(self, event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "exomonad", "hook", event, "--runtime", "claude"],
            input=json.dumps(payload), env=self.env, capture_output=True, text=True,
            timeout=30, check=False,
        )  # fmt: skip

    def health(self) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "exomonad", "status", "--json"],
            env=self.env, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        data: dict[str, Any] = orjson.loads(done.stdout)
        return data

    def start(self) -> None:
        self.server = ExomonadServe(state=self.state, env=self.env, tmux_socket=self.tmux.socket,
                                    log_path=self.state.parent / "server.log")  # fmt: skip
        self.server.start(SERVER_START_TIMEOUT, message="exomonad serve did not create its socket")

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


@pytest.fixture
def exo(tmp_path: Path) -> Iterator[Exo]:
    """Team `proj`, token for `gemini-1`, `exomonad serve` on a private tmux server.

    Teardown kills tmux first (Gemini, its MCP bridge and hooks go with it), then stops
    the server, so no bridge ever outlives the server it talks to.
    """
    _require_installed()
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    state.mkdir(parents=True)
    paths = TeamPaths(TEAM, root)
    create_team(paths)
    token = TokenStore(state).issue(Identity(name=WORKER, role="worker", team=TEAM, parent=LEAD))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXOMONAD_") and k != "TMUX"}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    # Not EXOMONAD_ENTER_DELAY: Gemini needs the default gap between text and Enter.
    tmux = Tmux()
    p = Exo(root=root, state=state, paths=paths, token=token, env=env, tmux=tmux)
    try:
        p.start()
        # The lead made team `proj` (as Claude Code's TeamCreate post-tool-use hook says).
        done = p.hook("post-tool-use", {"session_id": "lead-1", "tool_name": "TeamCreate",
                                        "tool_input": {"team_name": TEAM}})  # fmt: skip
        assert done.returncode == 0, done.stderr
        yield p
    finally:
        tmux.kill()
        p.stop()


# ---------------------------------------------------------------------------- helpers


def _tag() -> str:
    return secrets.token_hex(4)


def _hook_command(event: str) -> dict[str, Any]:
    cmd = f"{shlex.quote(sys.executable)} -m exomonad hook {event} --runtime gemini"
    return {"type": "command", "command": cmd, "timeout": HOOK_TIMEOUT_MS}


#: The `exo` MCP server for a worker. EXOMONAD_TOKEN must be named here (Gemini drops
#: *TOKEN* variables from MCP servers' environment); the others would pass through,
#: but are spelled out so the entry does not depend on that.
EXO_MCP_SERVERS: dict[str, Any] = {
    "exo": {
        "command": sys.executable,
        "args": ["-m", "exomonad", "mcp-stdio", "--role", "worker"],
        "env": {
            "EXOMONAD_TOKEN": "${EXOMONAD_TOKEN}",
            "EXOMONAD_DIR": "${EXOMONAD_DIR}",
            "CLAUDE_CONFIG_DIR": "${CLAUDE_CONFIG_DIR}",
        },
        "timeout": 30000,
    }
}

#: The worker's hooks: policy before every tool, activity and idle around each prompt.
EXO_HOOKS: dict[str, Any] = {
    "BeforeAgent": [{"matcher": "*", "hooks": [_hook_command("before-agent")]}],
    "BeforeTool": [{"matcher": "*", "hooks": [_hook_command("before-tool")]}],
    "AfterAgent": [{"matcher": "*", "hooks": [_hook_command("after-agent")]}],
}


def _diag(exo: Exo, pane: GeminiPane | None, model: ScriptedGemini) -> str:
    reqs = [
        f"#{r.index} {r.path} tools={r.has_tools} last_user={r.last_user_texts()[-1:]!r} "
        f"responses={json.dumps(r.function_responses())[:300]}"
        for r in model.requests
    ]
    screen = pane.capture() if pane is not None else "(no pane)"
    return (
        f"--- pane ---\n{screen}\n--- model requests ---\n"
        + "\n".join(reqs)
        + f"\n--- lead inbox ---\n{json.dumps(exo.lead_inbox(), indent=1)[-3000:]}"
        + f"\n--- server log ---\n{exo.server_log()}"
    )


def _await_request(
    exo: Exo,
    pane: GeminiPane,
    model: ScriptedGemini,
    predicate: Callable[[RecordedRequest], bool],
    what: str,
    *,
    since: int = 0,
) -> RecordedRequest:
    try:
        return model.wait_for_request(predicate, REQUEST_TIMEOUT, since=since)
    except TimeoutError as e:
        pytest.fail(f"no model request with {what}: {e}\n{_diag(exo, pane, model)}",
                    pytrace=False)  # fmt: skip


def _await(exo: Exo, pane: GeminiPane, model: ScriptedGemini, cond: Callable[[], bool],
           what: str, timeout: float = REQUEST_TIMEOUT) -> float:  # fmt: skip
    """Wait for `cond`; returns time.monotonic() when it held."""
    try:
        retry_until(cond, timeout=timeout, interval=0.01, message=what)
    except WaitTimeout:
        pytest.fail(f"timed out waiting for {what}\n{_diag(exo, pane, model)}", pytrace=False)
    return time.monotonic()


def _agent_turn_with(text: str) -> Callable[[RecordedRequest], bool]:
    return lambda r: r.is_agent_turn and r.mentions(text)


def _agent_turn_answering(n: int) -> Callable[[RecordedRequest], bool]:
    """An agent turn whose history holds at least `n` functionResponses."""
    return lambda r: r.is_agent_turn and len(r.function_responses()) >= n


def _responses_named(req: RecordedRequest, name: str) -> list[dict[str, Any]]:
    return [r for r in req.function_responses() if r.get("name") == name]


# ---------------------------------------------------------------------------- tests


def test_worker_task_from_lead_inbox_and_report_back_through_exo_mcp(
    exo: Exo, tmp_path: Path
) -> None:
    """Lead inbox → watcher → Gemini pane → model; model → `exo` MCP → lead inbox."""
    tag = _tag()
    task = f"build the parser {tag}"
    report = f"parser built, 12 tests pass {tag}"
    with ScriptedGemini() as model:
        model.add_function_call("mcp_exo_notify_parent", {"status": "success", "message": report})
        model.add_text(f"Reported to the lead {tag}")
        home = prepare_home(tmp_path / "gem", mcp_servers=EXO_MCP_SERVERS)
        pane = start_gemini_in_tmux(exo.tmux, home, model.url, yolo=True,
                                    extra_env=exo.worker_env(),
                                    ready_timeout=READY_TIMEOUT)  # fmt: skip
        register_synthetic(exo.paths, WORKER, pane=pane.pane_id, agent_type="gemini")

        # The lead (Claude Code's SendMessage) writes the task into the worker's inbox.
        written = time.monotonic()
        Mailbox(exo.paths).send(WORKER, sender=LEAD, text=task)
        typed = f"[from {LEAD}] {task}"
        req1 = _await_request(exo, pane, model, _agent_turn_with(typed), f"the task {typed!r}")
        hop_task = req1.received_at - written
        assert typed in req1.last_user_texts()[-1], req1.last_user_texts()
        assert "mcp_exo_notify_parent" in req1.tool_names(), (
            f"the exo MCP server's tools were not offered: {sorted(req1.tool_names())}\n"
            f"{_diag(exo, pane, model)}"
        )
        # The reply to req1 (sent as it was recorded) is the notify_parent functionCall.
        want = f"[from: {WORKER}] success: {report}"
        seen = _await(exo, pane, model,
                      lambda: any(e.get("text") == want for e in exo.lead_inbox()),
                      f"{want!r} in the lead's inbox")  # fmt: skip
        hop_report = seen - req1.received_at
        req2 = _await_request(exo, pane, model, _agent_turn_answering(1),
                              "a functionResponse", since=req1.index + 1)  # fmt: skip
        pane.wait_for_text(f"Reported to the lead {tag}", REQUEST_TIMEOUT)
        health = exo.health()

    entries = [e for e in exo.lead_inbox() if e.get("text") == want]
    assert len(entries) == 1, exo.lead_inbox()
    assert entries[0]["from"] == WORKER
    assert entries[0]["summary"] == f"Agent update: {WORKER}"
    assert not entries[0].get("read")  # unread: for the lead to pick up

    responses = _responses_named(req2, "mcp_exo_notify_parent")
    assert len(responses) == 1, req2.function_responses()
    answer = json.dumps(responses[0].get("response"))
    assert f"delivered to {LEAD}'s inbox" in answer, answer
    assert "error" not in responses[0].get("response", {}), answer
    calls = [c for c in req2.function_calls() if c.get("name") == "mcp_exo_notify_parent"]
    assert [c.get("args") for c in calls] == [{"status": "success", "message": report}]

    # The watcher typed the task exactly once and marked it delivered (the dialect
    # either flags it read or prunes it).
    assert not [e for e in Mailbox(exo.paths).read_raw(WORKER) if not e.get("read")]
    assert health["counters"]["delivered"] == 1, health["counters"]
    assert health["counters"]["tool:notify_parent"] == 1, health["counters"]
    assert sum(typed in t for t in req2.user_texts()) == 1  # one conversation, typed once
    print(
        f"\n[gemini-worker] ready {pane.ready_after:.2f}s; "
        f"inbox write→model request {hop_task:.2f}s; "
        f"functionCall reply→lead inbox entry {hop_report:.2f}s; "
        f"functionCall reply→functionResponse request {req2.received_at - req1.received_at:.2f}s"
    )


def _fake_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `git` first on PATH that logs its arguments (one line per call) and says so.

    Gemini CLI runs git itself too (`rev-parse ...` for its footer), so the log holds
    more than the model's commands.
    """
    bin_dir, log = tmp_path / "bin", tmp_path / "git-calls.log"
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text(
        f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> {shlex.quote(str(log))}\necho "fake-git ran: $*"\n',
        encoding="utf-8",
    )
    git.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}, log


def test_before_tool_hook_denies_force_push_and_after_agent_reports_idle_once(
    exo: Exo, tmp_path: Path
) -> None:
    """Policy through Gemini's BeforeTool hook (with --yolo), idle through AfterAgent.

    Prompt 1 takes three model turns (a denied push, an allowed control command, a
    text answer) and prompt 2 one: two idle transitions, so exactly two idle
    notifications, whatever the number of turns.
    """
    tag = _tag()
    path_env, git_log = _fake_git(tmp_path)
    push, control = "git push --force origin main", "git status"
    with ScriptedGemini() as model:
        model.add_function_call("run_shell_command", {"command": push})
        model.add_function_call("run_shell_command", {"command": control})
        model.add_text(f"The push was refused {tag}")
        model.add_text(f"Nothing new {tag}")
        home = prepare_home(tmp_path / "gem", hooks=EXO_HOOKS)
        pane = start_gemini_in_tmux(exo.tmux, home, model.url, yolo=True,
                                    extra_env={**exo.worker_env(), **path_env},
                                    ready_timeout=READY_TIMEOUT)  # fmt: skip
        register_synthetic(exo.paths, WORKER, pane=pane.pane_id, agent_type="gemini")

        task = f"release it: force-push main {tag}"
        written = time.monotonic()
        Mailbox(exo.paths).send(WORKER, sender=LEAD, text=task)
        req1 = _await_request(exo, pane, model, _agent_turn_with(f"[from {LEAD}] {task}"),
                              "the first task")  # fmt: skip
        req2 = _await_request(exo, pane, model, _agent_turn_answering(1),
                              "the push's functionResponse", since=req1.index + 1)  # fmt: skip
        req3 = _await_request(exo, pane, model, _agent_turn_answering(2),
                              "the control's functionResponse", since=req2.index + 1)  # fmt: skip
        pane.wait_for_text(f"The push was refused {tag}", REQUEST_TIMEOUT)
        idle_at = _await(exo, pane, model, lambda: len(exo.idle_notifications()) >= 1,
                         "the first idle_notification")  # fmt: skip
        assert len(exo.idle_notifications()) == 1, exo.lead_inbox()

        note = f"any news {tag}?"
        written2 = time.monotonic()
        Mailbox(exo.paths).send(WORKER, sender=LEAD, text=note)
        req4 = _await_request(exo, pane, model, _agent_turn_with(f"[from {LEAD}] {note}"),
                              "the second message", since=req3.index + 1)  # fmt: skip
        pane.wait_for_text(f"Nothing new {tag}", REQUEST_TIMEOUT)
        _await(exo, pane, model, lambda: len(exo.idle_notifications()) >= 2,
               "the second idle_notification")  # fmt: skip
        health = exo.health()

    _check_denied_and_control(req2, req3, push, git_log)
    idle = exo.idle_notifications()
    assert len(idle) == 2, exo.lead_inbox()
    assert all(n.from_ == WORKER and n.idle_reason == "available" for n in idle)
    assert {e["from"] for e in exo.lead_inbox()} == {WORKER}  # nothing else reached the lead
    counters = health["counters"]
    assert counters["idle_notifications"] == 2, counters
    assert counters["hook_pre_tool_use"] == 2, counters  # push + control, one hook each
    print(
        f"\n[gemini-policy] ready {pane.ready_after:.2f}s; "
        f"inbox write→model request {req1.received_at - written:.2f}s; "
        f"denied call→next request {req2.received_at - req1.received_at:.2f}s; "
        f"allowed call→next request {req3.received_at - req2.received_at:.2f}s; "
        f"last reply→idle_notification {idle_at - req3.received_at:.2f}s; "
        f"second inbox write→model request {req4.received_at - written2:.2f}s"
    )


def _check_denied_and_control(
    req2: RecordedRequest, req3: RecordedRequest, push: str, git_log: Path
) -> None:
    """The push was denied before it ran and the reason reached the model; the control
    command (allowed for a worker) did run, so under --yolo the push's absence is the
    hook's doing."""
    denied = _responses_named(req2, "run_shell_command")
    assert len(denied) == 1, req2.function_responses()
    denial = json.dumps(denied[0].get("response"))
    assert "Tool execution blocked" in denial, denial
    assert f"force push to a protected branch: {push}" in denial, denial
    ran = _responses_named(req3, "run_shell_command")
    assert len(ran) == 2, req3.function_responses()
    assert "fake-git ran: status" in json.dumps(ran[1].get("response")), ran[1]
    calls = git_log.read_text("utf-8").splitlines()
    assert "status" in calls, calls
    assert not [c for c in calls if c.startswith("push")], calls


def test_lead_text_with_question_and_exclamation_marks_reaches_gemini_intact(
    exo: Exo, tmp_path: Path
) -> None:
    tag = _tag()
    texts = [f"any news? {tag}", f"ship it! echo exo-shell-{tag}"]
    received: list[str] = []
    with ScriptedGemini() as model:
        for i in range(len(texts)):
            model.add_text(f"ack {i} {tag}")
        home = prepare_home(tmp_path / "gem")
        pane = start_gemini_in_tmux(exo.tmux, home, model.url, yolo=True,
                                    extra_env=exo.worker_env(),
                                    ready_timeout=READY_TIMEOUT)  # fmt: skip
        register_synthetic(exo.paths, WORKER, pane=pane.pane_id, agent_type="gemini")
        for i, text in enumerate(texts):
            since = len(model.requests)
            Mailbox(exo.paths).send(WORKER, sender=LEAD, text=text)

            def arrived(since: int = since) -> bool:
                got = any(r.is_agent_turn for r in model.requests[since:])
                return got or "shell mode enabled" in pane.capture()

            retry_until(arrived, timeout=REQUEST_TIMEOUT, interval=0.1,
                        message=f"neither a model request nor shell mode for {text!r}")  # fmt: skip
            turn = next((r for r in model.requests[since:] if r.is_agent_turn), None)
            if turn is None:
                screen = "\n".join(ln.rstrip() for ln in pane.capture().splitlines() if ln.strip())
                received.append(f"<Gemini shell mode; pane:>\n{screen}")
                break
            received.append(turn.last_user_texts()[-1])
            pane.wait_for_text(f"ack {i} {tag}", REQUEST_TIMEOUT)
    assert received == [f"[from {LEAD}] {t}" for t in texts]


def test_gemini_environment_of_mcp_servers_and_hooks(exo: Exo, tmp_path: Path) -> None:
    """Why EXO_MCP_SERVERS names EXOMONAD_TOKEN: Gemini redacts it from MCP servers.

    Two MCP servers dump their environment and exit (Gemini then lists them as
    disconnected, which is fine here); a SessionStart hook dumps its environment.
    """
    out = tmp_path / "env"
    out.mkdir()
    dump = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"
    hook_dump = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
        "import json, os, sys; sys.stdin.read(); "
        f"open({str(out / 'hook.json')!r}, 'w').write(json.dumps(dict(os.environ))); "
        "print('{}')"
    )
    servers = {
        "plain": {"command": sys.executable, "args": ["-c", dump, str(out / "plain.json")]},
        "named": {
            "command": sys.executable,
            "args": ["-c", dump, str(out / "named.json")],
            "env": {"EXOMONAD_TOKEN": "${EXOMONAD_TOKEN}", "EXO_LITERAL": "literal"},
        },
    }
    hooks = {"SessionStart": [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook_dump, "timeout": HOOK_TIMEOUT_MS}]}]}  # fmt: skip
    with ScriptedGemini() as model:
        home = prepare_home(tmp_path / "gem", mcp_servers=servers, hooks=hooks)
        pane = start_gemini_in_tmux(exo.tmux, home, model.url, yolo=True,
                                    extra_env=exo.worker_env(),
                                    ready_timeout=READY_TIMEOUT)  # fmt: skip
        names = ("plain.json", "named.json", "hook.json")
        _await(exo, pane, model, lambda: all((out / n).exists() for n in names),
               f"environment dumps {names}")  # fmt: skip

    def env_of(name: str) -> dict[str, str]:
        data: dict[str, str] = json.loads((out / name).read_text("utf-8"))
        return data

    plain, named, hook = env_of("plain.json"), env_of("named.json"), env_of("hook.json")
    assert "EXOMONAD_TOKEN" not in plain  # redacted: the name matches /TOKEN/i
    assert plain["EXOMONAD_DIR"] == str(exo.state)  # passes through
    assert plain["CLAUDE_CONFIG_DIR"] == str(exo.root)
    assert named["EXOMONAD_TOKEN"] == exo.token  # ${VAR} expanded from Gemini's env
    assert named["EXO_LITERAL"] == "literal"
    assert hook["EXOMONAD_TOKEN"] == exo.token  # hooks: not redacted by default
    assert hook["EXOMONAD_DIR"] == str(exo.state)
