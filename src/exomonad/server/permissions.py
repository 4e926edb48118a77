"""Every tool call through the policy: agent < team lead < human, with waiting approvals.

:class:`Gatekeeper` asks the :class:`~exomonad.policy.PolicyEngine`. ``Allow`` and ``Deny``
answer at once. ``Escalate`` records an approval (``.exomonad/approvals.db``) and waits
for an answer, up to ``[policy] approval_timeout`` seconds:

* to the lead (``tl``): a ``permission_request`` goes to the lead's inbox. Claude Code
  answers it with a ``permission_response`` in the requester's inbox, which the watcher
  hands to :meth:`Gatekeeper.intercept` instead of typing it; the lead can also call the
  ``answer_permission`` tool;
* to a human: a tmux popup opens on every attached client of the project's tmux server
  (``exomonad approvals prompt ID``), and ``exomonad approve|deny ID`` works anywhere.

Without an answer in time the result is ``[policy] on_timeout``: ``ask`` (the runtime's
own prompt takes over) or ``deny``; ``ask`` only for a runtime whose prompt reaches a
person (:attr:`~exomonad.runtimes.Runtime.prompt_reaches_person`: Claude Code), else
``deny`` (a Gemini CLI worker's prompt waits in its pane, where the next message typed
there would answer it). Never a silent allow.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from exomonad import runtimes
from exomonad.errors import ExomonadError
from exomonad.panes import TmuxBackend
from exomonad.policy import (
    Action,
    Approval,
    ApprovalStore,
    Decision,
    Deny,
    Escalate,
    PolicyEngine,
    ToolRequest,
    action_to_dict,
)
from exomonad.policy.cascade import asked
from exomonad.policy.decisions import label
from exomonad.policy.engine import Evaluation
from exomonad.policy.errors import PolicyError
from exomonad.policy.hook_output import hook_output
from exomonad.policy.loader import BUILTIN_SOURCE, LoadedPolicy
from exomonad.server.events import (
    BaseEvent,
    EscalationAnswered,
    EscalationOpened,
    PolicyDecision,
)
from exomonad.server.identity import Identity
from exomonad.teams import Mailbox
from exomonad.teams.protocol import PermissionRequest, PermissionResponse, decode, encode
from exomonad.util.selfexec import self_command

__all__ = ["MAX_WAITING", "Gatekeeper", "Verdict", "verdict_output"]

log = logging.getLogger("exomonad.server")
_PREFIX = "perm-exo-"


@dataclass(frozen=True)
class Verdict:
    """A decision and where it came from (for hook output and tool errors)."""

    decision: Decision
    approval_id: str | None = None
    policy_id: str | None = None
    #: What the call was classified as (e.g. ``CreatePR`` for ``gh pr create``).
    actions: tuple[Action, ...] = ()


#: Escalations one agent may have waiting at once; the next is denied unasked (each holds
#: one of the server's threads until it is answered or times out).
MAX_WAITING = 8


class Gatekeeper:
    """The policy engine, the approvals store, and the waiting in between.

    ``publish`` receives a ``policy_decision`` event for every decision, and an
    ``escalation`` and an ``escalation_answered`` for every approval it waits for
    (however it was answered: the lead's tool or inbox, a person's CLI or popup, time).
    """

    def __init__(
        self,
        engine: PolicyEngine,
        approvals: ApprovalStore,
        *,
        timeout: float,
        on_timeout: str,
        backend: Any = None,
        popup: bool = True,
        publish: Callable[[BaseEvent], object] | None = None,
    ) -> None:
        self.publish = publish or (lambda _: None)
        self.engine = engine
        self.approvals = approvals
        self.timeout = timeout
        self.on_timeout = on_timeout
        self.backend = backend
        self.popup = popup
        self._waiting: Counter[tuple[str | None, str]] = Counter()
        self._waiting_lock = threading.Lock()

    def check(self, req: ToolRequest, who: Identity, mailbox: Mailbox | None) -> Verdict:
        """Decide ``req`` for ``who``; escalations wait for an answer (see module doc)."""
        return self.settle(self.judge(req, who), req, who, mailbox)

    def loop_policy(self) -> LoadedPolicy | None:
        """The policy to :meth:`judge` with on the event loop, if judging cannot block
        there or run a project's code: ExoMonad's built-in policy, no reload due. None
        otherwise (a project's ``policy.py`` runs its own rules, a reload may take up to
        its time-out): judge in a thread."""
        loaded = self.engine.store.current_if_fresh()
        return loaded if loaded is not None and loaded.source == BUILTIN_SOURCE else None

    def judge(self, req: ToolRequest, who: Identity,
              loaded: LoadedPolicy | None = None) -> Evaluation:  # fmt: skip
        """The policy's evaluation of ``req`` (audited and published); never waits.
        ``loaded``: the policy to decide with (:meth:`loop_policy`), else the current one."""
        ev = self.engine.evaluate(req, loaded)
        self.publish(PolicyDecision(team=who.team, agent=who.name, role=who.role,
                                    runtime=req.runtime, tool=req.tool_name,
                                    decision=label(ev.decision), reason=ev.decision.reason,
                                    policy_id=ev.policy_id))  # fmt: skip
        return ev

    def settle(self, ev: Evaluation, req: ToolRequest, who: Identity,
               mailbox: Mailbox | None) -> Verdict:  # fmt: skip
        """The verdict on :meth:`judge`'s ``ev``: at once, unless it escalates; then the
        answer of whoever it is for (this waits, up to the approval time-out)."""
        decision = ev.decision
        if not isinstance(decision, Escalate):
            return Verdict(decision, policy_id=ev.policy_id, actions=ev.actions)
        key = (who.team, who.name)
        with self._waiting_lock:
            crowded = self._waiting[key] >= MAX_WAITING
            if not crowded:
                self._waiting[key] += 1
        if crowded:  # found probing: 80 at once held the server's threads for minutes
            log.warning("%s has %d escalations waiting: another is denied", who.name, MAX_WAITING)
            why = (f"{who.name} already has {MAX_WAITING} calls waiting for an answer; this "
                   f"one is refused unasked ({decision.reason})")  # fmt: skip
            return Verdict(Deny(why), policy_id=ev.policy_id, actions=ev.actions)
        try:
            return self._escalate(ev, decision, req, who, mailbox)
        finally:
            with self._waiting_lock:
                self._waiting[key] -= 1

    def _escalate(self, ev: Evaluation, decision: Escalate, req: ToolRequest, who: Identity,
                  mailbox: Mailbox | None) -> Verdict:  # fmt: skip
        """Open the approval, ask whoever it is for, and wait for the answer."""
        to_lead = decision.to == "tl" and mailbox is not None and who.team is not None
        approval = self.approvals.create(
            agent=who.name, role=who.role, action=list(ev.actions), reason=decision.reason,
            timeout=self.timeout, policy_id=ev.policy_id,
            addressee=who.parent if to_lead else "human",
            asks=asked(ev.verdicts) if len(ev.verdicts) == len(ev.actions) else None,
        )  # fmt: skip
        self.publish(EscalationOpened(team=who.team, approval_id=approval.id, agent=who.name,
                                      tool=req.tool_name, addressee=approval.addressee or "human",
                                      reason=decision.reason,
                                      deadline=approval.deadline))  # fmt: skip
        if to_lead and mailbox is not None:
            self._ask_lead(req, who, approval.id, decision.reason, ev.actions, mailbox)
        else:
            self._ask_human(approval.id)
        answered = self.approvals.wait(approval.id, timeout=self.timeout)
        if answered.state in ("approved", "denied"):
            verdict = Verdict(answered.decision, approval.id, ev.policy_id, ev.actions)
        else:
            waited = (f"no answer: the ExoMonad server stopped ({decision.reason})"
                      if self.approvals.stopping
                      else f"no answer within {self.timeout:.0f}s ({decision.reason})")  # fmt: skip
            known = runtimes.RUNTIMES.get(req.runtime)
            ask = self.on_timeout == "ask" and known is not None and known.prompt_reaches_person
            final: Decision = Escalate("human", waited) if ask else Deny(waited)
            verdict = Verdict(final, approval.id, ev.policy_id, ev.actions)
        self.publish(EscalationAnswered(
            team=who.team, approval_id=approval.id, agent=who.name,
            state="timeout" if answered.state == "pending" else answered.state,
            by=answered.answered_by, reason=answered.answer_reason or "",
            decision=label(verdict.decision),
        ))  # fmt: skip
        return verdict

    def _ask_lead(
        self, req: ToolRequest, who: Identity, approval_id: str, reason: str,
        actions: Any, mailbox: Mailbox,
    ) -> None:  # fmt: skip
        msg = PermissionRequest(
            request_id=f"{_PREFIX}{approval_id}", agent_id=f"{who.name}@{who.team}",
            tool_name=req.tool_name, tool_use_id=approval_id,
            description=f"{reason} — answer with answer_permission or the permission prompt",
            input=dict(req.tool_input),
            permission_suggestions=[action_to_dict(a) for a in actions],
        )  # fmt: skip
        try:
            mailbox.send(who.parent, sender=who.name, text=encode(msg))
        except ExomonadError as exc:
            log.warning("could not ask %s (%s); asking a human instead", who.parent, exc)
            self._ask_human(approval_id)

    def _ask_human(self, approval_id: str) -> None:
        if not self.popup or not isinstance(self.backend, TmuxBackend):
            return
        state = shlex.quote(str(self.approvals.path.parent))
        command = f"{self_command()} approvals prompt {approval_id} --state-dir {state}"
        threading.Thread(target=self._open_popups, args=(command,), daemon=True).start()

    def _open_popups(self, command: str) -> None:
        backend: TmuxBackend = self.backend
        try:
            clients = backend.run("list-clients", "-F", "#{client_name}").split()
        except Exception as exc:  # no tmux server: nobody to show a popup to
            log.info("no tmux clients for an approval popup: %s", exc)
            return
        base = ["tmux"] + (["-L", backend.socket_name] if backend.socket_name else [])
        for client in clients:
            subprocess.Popen([*base, "display-popup", "-c", client, "-w", "80%", "-h", "60%",
                              "-E", command])  # fmt: skip

    def answer(self, request_id: str, approved: bool, who: Identity, reason: str = "") -> Decision:
        """The lead's answer through its authenticated tool call (``answer_permission``).

        Only the request's addressee answers it, never the agent that asked; a request
        for a human is answered only by a person (``exomonad approve``, the popup).
        """
        approval = self._addressed(request_id, who.name)
        return self._record(approval.id, approved, f"{who.name} (answer_permission)", reason)

    def _addressed(self, request_id: str, answerer: str) -> Approval:
        try:
            approval = self.approvals.get(request_id.removeprefix(_PREFIX))
        except PolicyError as exc:
            raise ExomonadError(str(exc)) from exc
        if approval.addressee in (None, "human"):
            raise ExomonadError(f"request {approval.id} is for a person: only a human answers "
                                "it (exomonad approve/deny outside every agent session, or "
                                "the approval popup)")  # fmt: skip
        if answerer == approval.agent or answerer != approval.addressee:
            raise ExomonadError(f"{answerer} may not answer request {approval.id} of "
                                f"{approval.agent} (it is for {approval.addressee})")  # fmt: skip
        return approval

    def _record(self, approval_id: str, approved: bool, by: str, reason: str) -> Decision:
        try:
            return self.approvals.answer(approval_id, approved, by, reason).decision
        except PolicyError as exc:
            raise ExomonadError(str(exc)) from exc

    def intercept(self, entry: dict[str, Any]) -> bool:
        """A ``permission_response`` to one of our requests (True: consumed, never typed).

        It counts only when it comes from the request's addressee (the lead session's
        own answer, in the asker's inbox); one from anyone else, the asker included, is
        consumed and ignored.
        """
        text = entry.get("text")
        msg = decode(text) if isinstance(text, str) else None
        if not isinstance(msg, PermissionResponse) or not msg.request_id.startswith(_PREFIX):
            return False
        sender = str(entry.get("from", ""))
        try:
            approval = self._addressed(msg.request_id, sender)
            self._record(approval.id, msg.subtype == "success", f"{sender} (permission_response)",
                         msg.error or "")  # fmt: skip
        except ExomonadError as exc:
            log.warning("ignored permission response %s from %r: %s", msg.request_id, sender,
                        exc)  # fmt: skip
        return True


def verdict_output(runtime: str, verdict: Verdict, event: str = "") -> dict[str, Any]:
    """The hook output for a verdict, in the runtime's shape for hook ``event``."""
    return hook_output(runtime, verdict.decision, event)
