"""A hook acts for the caller its token names, never for the session or team it
claims (found probing as a worker, a fourth round, each with the worker's own token
and code the policy allowed, against a live server):

- a hook naming the lead's ``session_id`` with a pane header moved the lead's pane
  fallback to a person's shell, which then ran the worker's "report";
- a worker's ``TeamDelete`` hook removed every ExoMonad worker from the lead's team;
- a worker's ``TeamCreate`` hook moved the project, and every worker, to a team of its
  choosing;
- ``/teammate/token`` minted a ``dev`` worker and one named ``team.lead`` (the lead's
  inbox file) for a worker's code.

``tests/server/test_server_process.py`` repeats the token case against a real server
from a process that runs as a worker's code does.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator

import orjson
import pytest

from exomonad.bridge.registry import SessionInfo
from exomonad.errors import InvalidNameError
from exomonad.policy import Deny, ToolRequest
from exomonad.policy.decisions import label
from exomonad.server.hooks import handle_hook, hook_request
from exomonad.server.identity import Identity
from exomonad.server.permissions import MAX_WAITING
from exomonad.server.services import Services
from exomonad.server.workers import provision
from exomonad.teams import load_config, register_synthetic
from exomonad.util.waiting import retry_until


def _worker(svc: Services) -> tuple[Identity, str]:
    register_synthetic(svc.paths("proj"), "w1")
    who = Identity(name="w1", role="worker", team="proj", parent="team-lead")
    return who, svc.tokens.issue(who)


def _lead_session(svc: Services, lead: Identity) -> None:
    handle_hook(svc, lead, "session-start", "claude",
                {"session_id": "lead-s", "_pane": "%2"})  # fmt: skip


def _members(svc: Services) -> list[str]:
    return [m.name for m in load_config(svc.paths("proj")).members]


@pytest.mark.parametrize("event", ["before-agent", "before-tool", "after-tool"])
def test_a_workers_hook_naming_the_leads_session_is_refused(
    svc: Services, lead: Identity, event: str
) -> None:
    _lead_session(svc, lead)
    _, token = _worker(svc)
    body = orjson.dumps({"session_id": "lead-s", "tool_name": "run_shell_command",
                         "tool_input": {"command": "ls"}})  # fmt: skip
    answer = hook_request(svc, event, "gemini", body, token, "%1")
    session = svc.registry.session("lead-s")
    assert session is not None
    assert (session.pane, session.name) == ("%2", "team-lead")  # untouched
    assert "not w1's" in answer.stderr
    if event == "before-tool":
        assert b"deny" in orjson.dumps(answer.output)
    assert svc.counters["foreign_session"] == 1


def test_the_leads_own_hooks_still_move_its_pane(svc: Services, lead: Identity) -> None:
    _lead_session(svc, lead)
    handle_hook(svc, lead, "pre-tool-use", "claude",
                {"session_id": "lead-s", "_pane": "%5", "tool_name": "Read",
                 "tool_input": {"file_path": "README.md"}})  # fmt: skip
    session = svc.registry.session("lead-s")
    assert session is not None
    assert session.pane == "%5"


def test_a_tokenless_session_is_not_taken_by_a_worker(svc: Services) -> None:
    """Found probing: a worker's hook naming a Claude teammate's session (registered by
    its tokenless hooks) took it over, and every later call of the teammate was refused."""
    svc.registry.register(SessionInfo("ct-1", "claude", "anonymous", "guest", "proj"))
    _, token = _worker(svc)
    body = orjson.dumps({"session_id": "ct-1", "prompt": "x"})
    answer = hook_request(svc, "before-agent", "gemini", body, token, None)
    assert "not w1's" in answer.stderr
    session = svc.registry.session("ct-1")
    assert session is not None
    assert (session.name, session.role) == ("anonymous", "guest")


@pytest.fixture
def workers_code() -> Iterator[int]:
    """A process run as a worker's shell runs it (its token in the environment), no
    token of its own sent: the pid a tokenless hook it posts comes from."""
    env = {**os.environ, "EXOMONAD_TOKEN": "exo_worker"}
    proc = subprocess.Popen(["sleep", "60"], env=env)
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_workers_team_delete_hook_keeps_the_team(svc: Services, workers_code: int) -> None:
    who, _ = _worker(svc)
    for caller, peer in ((who, None), (svc.identify(None), workers_code)):
        handle_hook(svc, caller, "pre-tool-use", "claude",
                    {"session_id": f"s-{peer}", "tool_name": "TeamDelete", "tool_input": {},
                     "_peer": peer})  # fmt: skip
    assert _members(svc) == ["team-lead", "w1"]
    handle_hook(svc, svc.identify(None), "pre-tool-use", "claude",
                {"session_id": "s-person", "tool_name": "TeamDelete", "tool_input": {},
                 "_peer": os.getpid()})  # fmt: skip
    assert _members(svc) == ["team-lead"]  # a person's (tokenless) TeamDelete still clears


def test_a_workers_team_create_hook_moves_nothing(svc: Services, workers_code: int) -> None:
    who, _ = _worker(svc)
    for caller, peer in ((who, None), (svc.identify(None), workers_code)):
        handle_hook(svc, caller, "post-tool-use", "claude",
                    {"session_id": f"s-{peer}", "tool_name": "TeamCreate",
                     "tool_input": {"team_name": "evil"}, "_peer": peer})  # fmt: skip
    assert svc.registry.current == "proj"
    assert _members(svc) == ["team-lead", "w1"]


@pytest.mark.parametrize("name", ["team.lead", "team lead", "team-lead", "main", "system"])
def test_names_that_are_the_leads_inbox_are_reserved(svc: Services, name: str) -> None:
    with pytest.raises(InvalidNameError, match="reserved"):
        provision(svc, name, "proj")


def test_an_agent_has_at_most_a_few_escalations_waiting(svc: Services) -> None:
    """Found probing: a worker's code posted 80 escalating hooks at once; each held one of
    the server's threads until its time-out, and every other agent's calls timed out
    (denied). Past :data:`MAX_WAITING` the next is denied unasked, for that agent only."""
    who, _ = _worker(svc)
    svc.gatekeeper.timeout = 30.0
    req = ToolRequest("claude", "worker", "w1", "Bash", {"command": "sudo ls"}, cwd="/tmp")
    done: list[str] = []
    threads = [threading.Thread(target=lambda: done.append(label(
        svc.gatekeeper.check(req, who, None).decision))) for _ in range(MAX_WAITING)]  # fmt: skip
    for t in threads:
        t.start()
    retry_until(lambda: len(svc.approvals.list_pending()) == MAX_WAITING, timeout=30)
    refused = svc.gatekeeper.check(req, who, None).decision
    assert isinstance(refused, Deny)
    assert f"already has {MAX_WAITING} calls waiting" in refused.reason
    other = Identity(name="w2", role="worker", team="proj", parent="team-lead")
    opened = threading.Thread(target=lambda: svc.gatekeeper.check(req, other, None))
    opened.start()  # another agent still gets its escalation asked
    retry_until(lambda: len(svc.approvals.list_pending()) == MAX_WAITING + 1, timeout=30)
    for pending in svc.approvals.list_pending():
        svc.approvals.answer(pending.id, False, "human:test", "no")
    for t in [*threads, opened]:
        t.join(timeout=30)
    assert done == ["deny"] * MAX_WAITING
    assert len(svc.approvals.list_pending()) == 0


def test_a_gemini_worker_starts_with_the_environment_its_env_file_cannot_change(
    svc: Services,
) -> None:
    """What ``tests/e2e/test_gemini_env_file.py`` shows with the real Gemini CLI: the
    variables a worktree ``.env`` could use to turn Gemini's project hooks off are set
    in a Gemini worker's environment (Gemini never overrides a set one)."""
    env = provision(svc, "g1", "proj", runtime="gemini").env(svc.state_dir)
    assert env["GEMINI_RESTRICTED_MODE"] == "false"
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"


def test_the_transport_says_who_and_where_not_the_hook_input(svc: Services) -> None:
    """``_pane`` and ``_peer`` are the server's own notes on a hook (the pane header, the
    kernel's peer): the same keys in the hook's input, which is the agent's text, are
    overwritten; a peer the kernel did not give is no one's, and steers no team."""
    body = orjson.dumps({"session_id": "s-x", "tool_name": "TeamCreate",
                         "tool_input": {"team_name": "evil"}, "_peer": os.getpid(),
                         "_pane": "%9"})  # fmt: skip
    hook_request(svc, "post-tool-use", "claude", body, None, None, peer=None)
    assert svc.registry.current == "proj"
    session = svc.registry.session("s-x")
    assert session is not None
    assert session.pane is None
