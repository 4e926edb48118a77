"""No gate, no start: the live gate probe and ungated runtimes, in-process.

The real twins: ``tests/e2e/test_codex_worker.py`` (spawn_workers with the real Codex
CLI, its hooks on and off) and ``tests/e2e/test_claude_330_codex.py`` (a Codex teammate
of the real Claude Code, refused when its hooks do not run).
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest

from exomonad import runtimes
from exomonad.errors import ExomonadError, GateError
from exomonad.panes import FakePaneBackend
from exomonad.panes.contract import DeliveryReceipt
from exomonad.runtimes.base import Runtime
from exomonad.server.gateprobe import PROBE_MARK, GateProbes
from exomonad.server.hooks import handle_hook
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.server.tools import call_tool
from exomonad.teams import load_config


class Probed(Runtime):
    """A runtime whose gate is proven live, like Codex, without its trust files."""

    name = "probed"
    title = "Probed CLI"
    worker_command = "probed-cli"
    gate_probe = True
    gate_fix = "turn its hooks on"
    tools: ClassVar[dict[str, tuple[str, ...]]] = {"sh": ("shell", "cmd")}


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch, svc: Services) -> Probed:
    runtime = Probed()
    monkeypatch.setitem(runtimes.RUNTIMES, runtime.name, runtime)
    svc.config.workers.ready_timeout = 2.0
    return runtime


def _prompt(svc: Services, who: Identity, prompt: str) -> dict[str, Any]:
    payload = {"prompt": prompt, "session_id": f"s-{who.name}-{who.role}", "cwd": "/w"}
    return handle_hook(svc, who, "user-prompt-submit", "probed", payload).output


def _worker(svc: Services, name: str) -> Identity:
    found = svc.tokens.find(name, "proj")
    assert found is not None
    return found


def test_only_the_workers_own_hook_proves_its_gate_and_the_probe_is_discarded(
    svc: Services, probed: Probed
) -> None:
    w1 = Identity(name="w1", role="worker", team="proj", parent="team-lead")
    w2 = Identity(name="w2", role="worker", team="proj", parent="team-lead")
    text = svc.gate_probes.start("proj", "w1")
    assert text.startswith(PROBE_MARK)
    # Another worker typing the same text proves nothing, and its prompt goes on.
    assert _prompt(svc, w2, text) == {}
    # An unauthenticated caller (a guest) neither.
    guest = Identity(name="w1", role="guest", team="proj", authenticated=False)
    assert _prompt(svc, guest, text) == {}
    assert _prompt(svc, w1, "an ordinary prompt") == {}
    assert _prompt(svc, w1, text) == {"decision": "block",
                                      "reason": "ExoMonad: gate check passed"}  # fmt: skip
    assert svc.gate_probes.wait("proj", "w1", 0)
    assert svc.counters["gate_probes"] == 1
    assert _prompt(svc, w1, text) == {}  # used up: the same text again is a prompt


def test_a_stale_probe_proves_nothing() -> None:
    probes = GateProbes()
    old = probes.start("t", "w")
    new = probes.start("t", "w")  # a second start voids the first
    assert not probes.seen("t", "w", old)
    assert not probes.wait("t", "w", 0.05)  # and a wait that timed out voids the second
    assert not probes.seen("t", "w", new)


def test_spawn_refuses_a_worker_whose_probe_never_comes_back(
    svc: Services, lead: Identity, fake: FakePaneBackend, probed: Probed,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    typed: list[tuple[str, str]] = []
    deliver = fake.deliver

    def recorded(pane: str, text: str, *, sender: str | None = None) -> DeliveryReceipt:
        typed.append((pane, text))
        return deliver(pane, text, sender=sender)

    monkeypatch.setattr(fake, "deliver", recorded)
    spec = {"name": "p1", "task": "the task", "runtime": "probed"}
    with pytest.raises(GateError, match="ran none of ExoMonad's hooks") as err:
        call_tool(svc, lead, "spawn_workers", {"workers": [spec]})
    assert "turn its hooks on" in str(err.value)
    [(pane, text)] = typed  # the probe, and no task
    assert text.startswith(PROBE_MARK)
    assert not fake.exists(pane)  # stopped
    assert svc.tokens.find("p1", "proj") is None
    assert not (svc.state_dir.parent / ".worktrees" / "p1").exists()
    assert load_config(svc.paths("proj")).member("p1") is None
    assert not svc.paths("proj").inbox("p1").exists()


def test_spawn_proves_the_gate_then_sends_the_task(
    svc: Services, lead: Identity, fake: FakePaneBackend, probed: Probed,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The runtime's hook, played by a thread: it brings what was typed to the server as
    the worker's prompt, as Codex's UserPromptSubmit hook does."""
    deliver = fake.deliver

    def typed_then_hooked(pane: str, text: str, *, sender: str | None = None) -> DeliveryReceipt:
        receipt = deliver(pane, text, sender=sender)
        who = _worker(svc, "p2")
        threading.Thread(target=_prompt, args=(svc, who, text)).start()
        return receipt

    monkeypatch.setattr(fake, "deliver", typed_then_hooked)
    out = call_tool(svc, lead, "spawn_workers",
                    {"workers": [{"name": "p2", "task": "the task", "runtime": "probed"},
                                 {"name": "g2", "task": "other"}]})  # fmt: skip
    assert [w["name"] for w in out["workers"]] == ["p2", "g2"]
    assert out["refused"] == []
    assert svc.counters["gates_proven"] == 1  # the Gemini worker needs no probe
    assert [e["text"] for e in svc.mailbox("proj").read_raw("p2")] == ["the task"]


def test_one_refused_worker_does_not_stop_the_others(
    svc: Services, lead: Identity, probed: Probed
) -> None:
    out = call_tool(svc, lead, "spawn_workers",
                    {"workers": [{"name": "p3", "task": "t", "runtime": "probed"},
                                 {"name": "g3", "task": "t"}]})  # fmt: skip
    assert [w["name"] for w in out["workers"]] == ["g3"]
    [refused] = out["refused"]
    assert refused["name"] == "p3"
    assert "refused p3: Probed CLI worker 'p3' ran none" in out["message"]


def test_a_terminal_agent_starts_only_sandboxed_or_with_consent(
    svc: Services, lead: Identity
) -> None:
    spec = {"name": "t1", "task": "t", "command": "aider --yes", "runtime": "command"}
    with pytest.raises(GateError, match="allow_ungated = true"):
        call_tool(svc, lead, "spawn_workers", {"workers": [spec]})
    assert not (svc.state_dir.parent / ".worktrees" / "t1").exists()
    assert svc.tokens.find("t1", "proj") is None
    # A command of no known program, no runtime named: terminal, refused the same way.
    with pytest.raises(GateError, match="terminal agent has no hooks"):
        call_tool(svc, lead, "spawn_workers",
                  {"workers": [{"name": "t2", "command": "my-agent"}]})  # fmt: skip
    svc.config.workers.allow_ungated = True
    out = call_tool(svc, lead, "spawn_workers", {"workers": [spec]})
    [w] = out["workers"]
    member = load_config(svc.paths("proj")).member("t1")
    assert member is not None
    assert member.agent_type == "terminal"
    assert w["ready"] is True  # no marker to wait for
    with pytest.raises(ExomonadError, match="needs its command"):
        call_tool(svc, lead, "spawn_workers",
                  {"workers": [{"name": "t3", "runtime": "terminal"}]})  # fmt: skip
