"""Loop-safe tools answered on the event loop (issue 14): where each part of a call runs.

A call of ``team_status``, ``task_get`` or ``task_list`` judged by the built-in policy
runs on the event loop, and ``notify_parent``'s is awaited there (its group write runs
in the inbox appender process once the server's services run, else in the group
commit's thread, as here); a project's ``policy.py`` (its rules are the project's
code), a policy reload that is due, an escalation's wait and every other tool run in
the server's thread pool.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from exomonad.policy import Allow, Deny, Escalate
from exomonad.policy.engine import Evaluation
from exomonad.server.identity import Identity
from exomonad.server.mcp_app import answer_call
from exomonad.server.permissions import Verdict
from exomonad.server.services import Services
from exomonad.server.tools import TOOLS
from exomonad.teams import Mailbox
from exomonad.teams.tasks import TaskStore

RULE = """from __future__ import annotations

import threading

from exomonad.policy import Allow, Policy, Role


def rule(action, ctx):
    with open({log!r}, "a") as f:
        f.write(threading.current_thread().name + "\\n")
    return Allow("the project's rule")


policy = Policy(roles={{"worker": Role(), "tl": Role()}}, rules=[rule], name="project")
examples = [("ls", "worker", "allow")]
"""


@pytest.fixture
def worker(svc: Services) -> Identity:
    svc.tokens.issue(Identity("w1", "worker", "proj", parent="team-lead"))
    TaskStore(svc.paths("proj")).create("write the docs", "all of them")
    return Identity("w1", "worker", "proj", parent="team-lead")


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Threads the tool ``name`` runs in, from now on."""
    ran: list[str] = []
    tool = TOOLS[name]

    def spy(svc: Services, who: Identity, args: Any) -> dict[str, Any]:
        ran.append(threading.current_thread().name)
        return tool.fn(svc, who, args)

    monkeypatch.setitem(TOOLS, name, dataclasses.replace(tool, fn=spy))
    return ran


def _answer(svc: Services, who: Identity, name: str, args: dict[str, Any]) -> tuple[Any, str]:
    """``answer_call`` on an event loop: its result and the loop's thread."""

    async def main() -> tuple[Any, str]:
        return await answer_call(svc, who, name, args), threading.current_thread().name

    return anyio.run(main, backend="asyncio")


def _write_policy(svc: Services, log: Path) -> None:
    path = svc.state_dir / "policy.py"
    path.write_text(RULE.format(log=str(log)))
    stamp = int(path.stat().st_mtime) + 5  # a change even on coarse timestamps
    os.utime(path, (stamp, stamp))


def test_loop_safe_tools_under_the_builtin_policy_run_on_the_loop(
    svc: Services, worker: Identity, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, args in (("task_get", {"task_id": "1"}), ("team_status", {}), ("task_list", {})):
        ran = _spy(monkeypatch, name)
        result, loop = _answer(svc, worker, name, args)
        assert result["isError"] is False, result
        assert ran == [loop]
    assert result["structuredContent"]["tasks"][0]["subject"] == "write the docs"


def test_notify_parent_is_awaited_on_the_loop_and_written_by_the_group_commit(
    svc: Services, worker: Identity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its append (inbox lock, fsync) is written by a thread of the group commit while
    the loop awaits it; the tool's thread form is not used."""
    thread_form = _spy(monkeypatch, "notify_parent")
    writers: list[str] = []
    real = Mailbox.write_group

    def write_group(mb: Mailbox, member: str, take: Any) -> float:
        writers.append(threading.current_thread().name)
        return real(mb, member, take)

    monkeypatch.setattr(Mailbox, "write_group", write_group)
    result, loop = _answer(svc, worker, "notify_parent", {"status": "success", "message": "hi"})
    assert result["isError"] is False, result
    assert thread_form == []
    assert len(writers) == 1
    assert writers[0].startswith("inbox-group")
    assert writers[0] != loop
    [entry] = svc.mailbox("proj").read_raw("team-lead")
    assert entry["messageId"] == result["structuredContent"]["messageId"]
    assert svc.counters["tool:notify_parent"] == 1


def test_a_projects_policy_and_a_due_reload_keep_the_call_in_a_thread(
    svc: Services, worker: Identity, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "rule-threads.log"
    _write_policy(svc, log)  # not loaded yet: the reload is due
    assert svc.gatekeeper.loop_policy() is None
    ran = _spy(monkeypatch, "task_get")
    result, loop = _answer(svc, worker, "task_get", {"task_id": "1"})
    assert result["isError"] is False, result
    assert svc.gatekeeper.engine.store.current().policy.name == "project"  # reloaded there
    assert len(ran) == 1
    assert ran[0] != loop
    assert svc.gatekeeper.loop_policy() is None  # loaded, but the project's own code
    result, loop = _answer(svc, worker, "team_status", {})
    assert result["isError"] is False, result
    rule_threads = log.read_text().split()
    assert rule_threads[-1] != loop  # the project's rule ran, in a thread
    assert rule_threads[-1].startswith("exomonad")
    notify = _spy(monkeypatch, "notify_parent")  # and the tool's thread form, not the loop's
    result, loop = _answer(svc, worker, "notify_parent", {"status": "success", "message": "hi"})
    assert result["isError"] is False, result
    assert len(notify) == 1
    assert notify[0] != loop
    assert log.read_text().split()[-1] == notify[0]


def test_an_escalation_is_waited_for_in_a_thread_and_its_answer_decides(
    svc: Services, worker: Identity, monkeypatch: pytest.MonkeyPatch
) -> None:
    def escalates(req: Any, loaded: Any = None) -> Evaluation:
        return Evaluation(Escalate("tl", "ask the lead"), (), (), "builtin", 0.0)

    waited: list[str] = []

    def settle(ev: Evaluation, req: Any, who: Identity, mailbox: Any) -> Verdict:
        waited.append(threading.current_thread().name)
        assert mailbox is not None  # the lead's inbox, where it would be asked
        return Verdict(Deny("the lead said no"))

    monkeypatch.setattr(svc.gatekeeper.engine, "evaluate", escalates)
    monkeypatch.setattr(svc.gatekeeper, "settle", settle)
    ran = _spy(monkeypatch, "task_get")
    result, loop = _answer(svc, worker, "task_get", {"task_id": "1"})
    assert result["isError"] is True
    assert "refused by policy: the lead said no" in result["content"][0]["text"]
    assert len(waited) == 1
    assert waited[0] != loop
    assert ran == []
    monkeypatch.setattr(svc.gatekeeper, "settle", lambda *a: Verdict(Allow("yes")))
    result, _ = _answer(svc, worker, "task_get", {"task_id": "1"})
    assert result["isError"] is False, result
