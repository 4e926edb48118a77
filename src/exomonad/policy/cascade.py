"""The cascade: agent's own set → the lead's set (its policy or the lead agent) → a human.

For each action, in order:

1. an explicit :class:`~.model.Forbid` that applies → ``Deny`` (nothing overrides it);
2. a free-form rule (``Policy.rules``) that returns a decision → that decision;
3. a grant of the agent's role → ``Allow``;
4. (agents other than the lead) a grant of the lead's role → what that grant's
   ``delegate`` says: ``allow`` → ``Allow``, ``ask`` → ``Escalate("tl")``,
   ``human`` → ``Escalate("human")``, ``deny`` → ``Deny``;
5. otherwise → ``Escalate("human")``.

A rule that raises is a policy bug: the action escalates to a human, with the error in
the reason. A tool call's decision is the strictest over its actions.

>>> from exomonad.policy.actions import GitPush
>>> from exomonad.policy.model import Grant, Policy, Role
>>> p = Policy(roles={"tl": Role(Grant(GitPush, delegate="ask")), "dev": Role()})
>>> judge(p, GitPush(branch="x"), Context(role="dev", agent="d1")).to
'tl'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from exomonad.policy.actions import Action, DeleteFile, McpTool, ReadFile, Unknown, WriteFile
from exomonad.policy.classify import classify
from exomonad.policy.decisions import Allow, Decision, Deny, Escalate, strictest
from exomonad.policy.model import Policy
from exomonad.policy.planted import planted_reads
from exomonad.policy.predicates import reads_state_dir, reads_state_tree, secret_path
from exomonad.policy.request import Context, ToolRequest
from exomonad.util.display import visible
from exomonad.util.paths import follow, judging

__all__ = ["asked", "context_for", "decide_request", "judge", "judge_all"]


def _who(ctx: Context) -> str:
    return f"{ctx.agent} ({ctx.role})" if ctx.agent else ctx.role


def judge(policy: Policy, action: Action, ctx: Context) -> Decision:
    """The decision for one action (see the module docstring for the cascade)."""
    try:
        return _judge(policy, action, ctx)
    except Exception as exc:  # a bug in a policy predicate must not crash the server
        return Escalate(
            "human", f"policy error while judging {action.describe()}: {type(exc).__name__}: {exc}"
        )


def _judge(policy: Policy, action: Action, ctx: Context) -> Decision:
    what = visible(action.describe())  # what runs, with nothing a terminal would act on
    for forbid in policy.forbid:
        if forbid.applies(action, ctx):
            return Deny(f"{forbid.reason}: {what}")
    for rule in policy.rules:
        decision = rule(action, ctx)
        if decision is not None:
            return decision
    role = policy.roles.get(ctx.role)
    if role is not None:
        grant = role.grant_for(action, ctx)
        if grant is not None:
            return Allow(f"{ctx.role} may {what}" + (f" ({grant.why})" if grant.why else ""))
    lead = policy.roles.get(policy.lead)
    if ctx.role != policy.lead and lead is not None:
        grant = lead.grant_for(action, dataclasses.replace(ctx, on_behalf_of=policy.lead))
        if grant is not None:
            mode = grant.delegate
            if mode == "allow":
                return Allow(f"{policy.lead} policy allows {_who(ctx)}: {what}")
            if mode == "ask":
                return Escalate("tl", f"{_who(ctx)} asks: {what}")
            if mode == "deny":
                return Deny(f"only the {policy.lead} may do this: {what}")
            return Escalate("human", f"{_who(ctx)} asks (lead's policy defers to a human): {what}")
    scope = (
        "its role"
        if ctx.role == policy.lead or lead is None
        else f"its role and the {policy.lead}'s"
    )
    return Escalate("human", f"{_who(ctx)} asks: {what} (outside {scope})")


def judge_all(
    policy: Policy, actions: list[Action], ctx: Context
) -> tuple[Decision, list[tuple[Action, Decision]]]:
    """The strictest decision over ``actions`` and each action's own decision. An
    escalation's reason names every action not allowed, so whoever answers sees all of
    them: before, ``sudo apt-get install ... && rm -rf ../../src`` reached a person as
    the ``sudo`` alone (the strictest), and approving it ran the delete too. An MCP tool
    call is named too, with its arguments, even when it is allowed: the other parts are
    guesses from those (``write /opt/app`` for a ``run_command`` whose ``command`` was
    ``curl ... | sh``, shown nowhere before)."""
    verdicts = [(action, judge(policy, action, ctx)) for action in actions]
    decision = strictest(d for _, d in verdicts)
    if isinstance(decision, Escalate):
        reasons = [decision.reason]
        for i in asked(verdicts):
            action, other = verdicts[i]
            allowed = isinstance(other, Allow)
            why = f"the call: {visible(action.describe())}" if allowed else other.reason
            if why not in reasons:
                reasons.append(why)
        decision = Escalate(decision.to, "; and ".join(reasons))
    return decision, verdicts


def asked(verdicts: Sequence[tuple[Action, Decision]]) -> list[int]:
    """Which parts of a call whoever answers its escalation is asked about (indexes into
    ``verdicts``): each one not allowed, and every MCP tool call (its arguments are what
    runs); none if all are allowed."""
    if all(isinstance(d, Allow) for _, d in verdicts):
        return []
    return [i for i, (action, d) in enumerate(verdicts)
            if not isinstance(d, Allow) or isinstance(action, McpTool)]  # fmt: skip


def context_for(
    request: ToolRequest,
    policy: Policy,
    *,
    project_root: str | None = None,
    state_dir: str | None = None,
) -> Context:
    """The :class:`Context` rules see for ``request``."""
    return Context(
        role=request.role,
        agent=request.agent,
        runtime=request.runtime,
        cwd=request.cwd,
        worktree=request.worktree,
        branch=request.branch,
        team=request.team,
        project_root=project_root,
        state_dir=state_dir,
        protected_branches=tuple(policy.protected_branches),
    )


def decide_request(
    policy: Policy,
    request: ToolRequest,
    *,
    project_root: str | None = None,
    state_dir: str | None = None,
) -> tuple[Decision, list[Action], list[tuple[Action, Decision]]]:
    """Classify ``request`` and judge every action: (decision, actions, per-action).
    A worker's call that may read files it does not name also carries a read of each
    link in its worktree that leads where no agent reads (:mod:`~exomonad.policy.planted`).
    One judgement (:func:`~exomonad.util.paths.judging`): each path's links are looked
    up once for it, within one budget. A path whose links cannot be followed is also
    :class:`~.actions.Unknown` (asked), whatever its text says: where it leads is not
    known (:func:`unfollowed`)."""
    with judging():
        actions = classify(request, mcp_servers=policy.mcp_servers,
                           protected_branches=policy.protected_branches)  # fmt: skip
        actions += unfollowed(actions)
        ctx = context_for(request, policy, project_root=project_root, state_dir=state_dir)

        def refused(read: ReadFile) -> bool:
            return any(p(read, ctx) for p in (reads_state_dir, reads_state_tree, secret_path))

        actions += planted_reads(request.worktree, actions, project_root, refused)
        decision, verdicts = judge_all(policy, actions, ctx)
    return decision, actions, verdicts


def unfollowed(actions: Sequence[Action]) -> list[Action]:
    """An :class:`~.actions.Unknown` for each absolute path among ``actions`` whose links
    cannot be followed (:func:`~exomonad.util.paths.follow`: a loop, past the lookup
    budget, a name that is not UTF-8): judged by its text alone, a worker's path that
    climbs out through links it cannot be followed along was allowed as a write in its
    worktree (found trying the gate as a worker: ``L -> a/a/.../a``, 1900 deep, and
    ``L/up -> <project>``: ``curl -T up.txt file://<wt>/L/up/Makefile`` overwrote the
    lead's ``Makefile``).

    >>> unfollowed([ReadFile("/nonexistent/a"), WriteFile("/x/\\udc80/../y"), WriteFile(None)])
    [Unknown(raw='/x/\\udc80/../y: where its links lead cannot be known')]
    """
    paths = [a.path for a in actions if isinstance(a, (ReadFile, WriteFile, DeleteFile))]
    lost = dict.fromkeys(p for p in paths if p is not None and p.startswith("/")
                         and follow(p) is None)  # fmt: skip
    return [Unknown(f"{p[:200]}: where its links lead cannot be known") for p in lost]
