"""The cascade (agent → lead's set → human) for each role, explicit denies, rules,
delegation modes, policy bugs and the strictest-wins combination."""

from __future__ import annotations

import pytest

from exomonad.policy.actions import (
    Action,
    CloseIssue,
    CreatePR,
    DeleteBranch,
    DeleteFile,
    Deploy,
    GitCommit,
    GitPush,
    Internal,
    MergePR,
    Network,
    ReadFile,
    Shell,
    Unknown,
    WriteFile,
)
from exomonad.policy.cascade import judge, judge_all
from exomonad.policy.decisions import (
    Allow,
    Decision,
    DecisionLabel,
    Deny,
    Escalate,
    label,
    parse_label,
    strictest,
)
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.model import Delegation, Forbid, Grant, Policy, Role
from exomonad.policy.request import Context

HOME = "/home/agent"
PROJECT = "/repo"


def ctx(
    role: str,
    *,
    agent: str = "a1",
    worktree: str | None = "/repo/wt/a1",
    branch: str | None = "feature/a1",
) -> Context:
    return Context(
        role=role,
        agent=agent,
        cwd=worktree or PROJECT,
        worktree=worktree,
        branch=branch,
        project_root=PROJECT,
        state_dir=f"{PROJECT}/.exomonad",
    )


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)


# (action, dev, worker, tl) under the built-in policy.
TABLE: list[tuple[Action, DecisionLabel, DecisionLabel, DecisionLabel]] = [
    (ReadFile("/repo/wt/a1/x.py"), "allow", "allow", "allow"),
    (ReadFile("/repo/README.md"), "allow", "allow", "allow"),
    (ReadFile("/usr/lib/python3/os.py"), "allow", "allow", "allow"),
    (ReadFile(f"{HOME}/.ssh/id_rsa"), "deny", "deny", "deny"),
    (ReadFile("/repo/.env"), "deny", "deny", "deny"),
    # Another process's environment (an agent's token), memory, open files (databases).
    (ReadFile("/proc/4242/environ"), "deny", "deny", "deny"),
    (ReadFile("/proc/self/task/7/environ"), "deny", "deny", "deny"),
    (ReadFile("/proc/4242/fd/7"), "deny", "deny", "deny"),
    (ReadFile("/proc/4242/mem"), "deny", "deny", "deny"),
    (ReadFile("/proc/4242/status"), "allow", "allow", "allow"),
    # A tree read of a directory holding ~/.ssh (grep -r password ~), unless narrowed.
    (ReadFile(HOME, recursive=True), "deny", "deny", "deny"),
    (ReadFile("/", recursive=True), "deny", "deny", "deny"),
    (ReadFile(HOME, recursive=True, include=("*.py",)), "allow", "allow", "allow"),
    (ReadFile(f"{HOME}/src", recursive=True), "allow", "allow", "allow"),
    # A glob that could name a credential store names it (cat ~/.ss?/id_rsa).
    (ReadFile(f"{HOME}/.ss?/id_rsa"), "deny", "deny", "deny"),
    (ReadFile(f"{HOME}/.[s]sh/id_rsa"), "deny", "deny", "deny"),
    (ReadFile("/etc/shado?"), "deny", "deny", "deny"),
    (ReadFile("/repo/.en?"), "deny", "deny", "deny"),
    (ReadFile("/repo/wt/a1/src/*.py"), "allow", "allow", "allow"),
    (ReadFile(None), "human", "human", "human"),
    (WriteFile("/repo/wt/a1/x.py"), "allow", "allow", "allow"),
    (WriteFile("/repo/docs/x.md"), "tl", "tl", "allow"),
    (WriteFile("/etc/hosts"), "human", "human", "human"),
    (WriteFile(None), "human", "human", "human"),
    (WriteFile("/repo/.exomonad/policy.py"), "deny", "deny", "deny"),
    (WriteFile("/repo/wt/a1/.claude/settings.json"), "deny", "deny", "deny"),
    (WriteFile("/repo/wt/a1/.gemini/settings.json"), "deny", "deny", "deny"),
    (DeleteFile("/repo/wt/a1/build", True), "allow", "allow", "allow"),
    (DeleteFile("/", True), "deny", "deny", "deny"),
    (DeleteFile("/usr", True), "deny", "deny", "deny"),
    (DeleteFile(HOME, True), "deny", "deny", "deny"),
    (DeleteFile("/*", True), "deny", "deny", "deny"),
    (DeleteFile("/repo", True), "deny", "deny", "deny"),
    (DeleteFile("/srv2", True), "deny", "deny", "deny"),
    (DeleteFile(None, True), "human", "human", "human"),
    (Shell(("pytest",), "/repo/wt/a1"), "allow", "allow", "allow"),
    (Shell(("sudo", "ls"), "/repo", privileged=True), "human", "human", "human"),
    (GitCommit("/repo/wt/a1"), "allow", "allow", "allow"),
    (GitCommit("/repo"), "tl", "tl", "allow"),
    (GitCommit("/elsewhere"), "human", "human", "human"),
    (GitPush("origin", "feature/a1"), "allow", "allow", "allow"),
    (GitPush("origin", "feature/a1", force=True, lease=True), "allow", "allow", "allow"),
    (GitPush("origin", "feature/a1", force=True), "tl", "tl", "allow"),
    (GitPush("origin", "feature/other"), "tl", "tl", "allow"),
    (GitPush("origin", None), "human", "human", "human"),
    (GitPush("origin", "main"), "human", "human", "human"),
    (GitPush("origin", "master", force=True), "deny", "deny", "deny"),
    (GitPush("origin", "main", force=True, lease=True), "deny", "deny", "deny"),
    (DeleteBranch("old", "origin"), "tl", "tl", "allow"),
    (DeleteBranch("main", "origin"), "deny", "deny", "deny"),
    (DeleteBranch("main", None), "human", "human", "human"),
    (DeleteBranch(None, "origin"), "human", "human", "human"),
    (CreatePR("main", None), "tl", "tl", "allow"),
    (CloseIssue(3), "tl", "tl", "allow"),
    (MergePR(3), "human", "human", "human"),
    (Deploy("kubectl", "apply"), "human", "human", "human"),
    (Network("example.com"), "tl", "tl", "allow"),
    (Network(None), "human", "human", "human"),
    (Internal("TodoWrite"), "allow", "allow", "allow"),
    (Unknown("eval $X"), "human", "human", "human"),
]


@pytest.mark.parametrize(
    ("action", "dev", "worker", "tl"), TABLE, ids=[a.describe()[:40] for a, *_ in TABLE]
)
def test_builtin_policy_by_role(
    action: Action, dev: DecisionLabel, worker: DecisionLabel, tl: DecisionLabel
) -> None:
    got = {
        role: label(
            judge(
                DEFAULT_POLICY, action, ctx(role, worktree=None if role == "tl" else "/repo/wt/a1")
            )
        )
        for role in ("dev", "worker", "tl")
    }
    assert got == {"dev": dev, "worker": worker, "tl": tl}


def test_unknown_role_has_no_grants_and_cascades() -> None:
    assert label(judge(DEFAULT_POLICY, GitPush("origin", "x"), ctx("intern"))) == "tl"
    assert label(judge(DEFAULT_POLICY, MergePR(1), ctx("intern"))) == "human"


def test_dev_without_known_branch_cannot_push_its_branch() -> None:
    decision = judge(DEFAULT_POLICY, GitPush("origin", "feature/a1"), ctx("dev", branch=None))
    assert decision == Escalate("tl", "a1 (dev) asks: git push origin feature/a1")


def test_reasons_name_agent_and_action() -> None:
    deny = judge(DEFAULT_POLICY, GitPush("origin", "main", force=True), ctx("dev"))
    assert deny == Deny("force push to a protected branch: git push --force origin main")
    human = judge(DEFAULT_POLICY, MergePR(7), ctx("dev"))
    assert isinstance(human, Escalate)
    assert "a1 (dev)" in human.reason
    assert "merge PR #7" in human.reason


def _delegating(mode: Delegation) -> Policy:
    return Policy(roles={"tl": Role(Grant(CreatePR, delegate=mode)), "dev": Role()})


@pytest.mark.parametrize(
    ("mode", "expected"), [("allow", Allow), ("ask", Escalate), ("human", Escalate), ("deny", Deny)]
)
def test_delegation_modes(mode: Delegation, expected: type) -> None:
    decision = judge(_delegating(mode), CreatePR("main"), ctx("dev"))
    assert isinstance(decision, expected)
    if isinstance(decision, Escalate):
        assert decision.to == ("tl" if mode == "ask" else "human")
    assert label(judge(_delegating(mode), CreatePR("main"), ctx("tl"))) == "allow"


def test_lead_own_request_outside_its_set_goes_to_human_not_to_itself() -> None:
    assert judge(_delegating("ask"), MergePR(1), ctx("tl")).__class__ is Escalate
    assert label(judge(_delegating("ask"), MergePR(1), ctx("tl"))) == "human"


def test_policy_without_lead_role_goes_straight_to_human() -> None:
    policy = Policy(roles={"dev": Role(Grant(ReadFile))}, lead="boss")
    assert label(judge(policy, ReadFile("/x"), ctx("dev"))) == "allow"
    assert label(judge(policy, WriteFile("/x"), ctx("dev"))) == "human"


def test_lead_grants_see_the_requester_context_and_on_behalf_flag() -> None:
    seen: list[Context] = []

    def spy(action: WriteFile, c: Context) -> bool:
        seen.append(c)
        return True

    policy = Policy(roles={"tl": Role(Grant(WriteFile, spy, delegate="allow")), "dev": Role()})
    assert label(judge(policy, WriteFile("/x"), ctx("dev", agent="d9"))) == "allow"
    assert seen[0].agent == "d9"
    assert seen[0].on_behalf_of == "tl"


def test_forbid_beats_grants_and_rules() -> None:
    policy = Policy(
        roles={"dev": Role(Grant(Shell))},
        forbid=[Forbid(Shell, lambda a, c: a.argv[:1] == ("reboot",), reason="no reboots")],
        rules=[lambda a, c: Allow("rule")],
    )
    assert judge(policy, Shell(("reboot",)), ctx("dev")) == Deny("no reboots: reboot")
    assert judge(policy, Shell(("ls",)), ctx("dev")) == Allow("rule")


def test_rules_run_in_order_and_none_falls_through() -> None:
    calls: list[str] = []

    def first(a: Action, c: Context) -> Decision | None:
        calls.append("first")
        return None

    def second(a: Action, c: Context) -> Decision | None:
        calls.append("second")
        return Escalate("human", "second says") if isinstance(a, Shell) else None

    policy = Policy(roles={"dev": Role(Grant(Shell), Grant(ReadFile))}, rules=[first, second])
    assert judge(policy, Shell(("ls",)), ctx("dev")) == Escalate("human", "second says")
    assert label(judge(policy, ReadFile("/x"), ctx("dev"))) == "allow"
    assert calls == ["first", "second", "first", "second"]


def test_a_raising_predicate_escalates_to_a_human() -> None:
    def boom(a: ReadFile, c: Context) -> bool:
        raise RuntimeError("bug")

    policy = Policy(roles={"dev": Role(Grant(ReadFile, boom))})
    decision = judge(policy, ReadFile("/x"), ctx("dev"))
    assert isinstance(decision, Escalate)
    assert decision.to == "human"
    assert "RuntimeError: bug" in decision.reason


def test_grant_on_the_base_class_covers_every_action() -> None:
    policy = Policy(roles={"dev": Role(Grant(Action))})
    for action in (ReadFile("/x"), Unknown("?"), Deploy("fly")):
        assert label(judge(policy, action, ctx("dev"))) == "allow"


def test_strictest_of_a_compound_call() -> None:
    decision, verdicts = judge_all(
        DEFAULT_POLICY,
        [
            Shell(("ls",), "/repo/wt/a1"),
            GitPush("origin", "feature/b"),
            GitPush("origin", "main", force=True),
            Network("x.io"),
        ],
        ctx("dev"),
    )
    assert [label(d) for _, d in verdicts] == ["allow", "tl", "deny", "tl"]
    assert isinstance(decision, Deny)
    assert judge_all(DEFAULT_POLICY, [], ctx("dev"))[0] == Allow("no effect")


def test_strictness_order() -> None:
    ladder: list[Decision] = [Allow(), Escalate("tl"), Escalate("human"), Deny()]
    for i, low in enumerate(ladder):
        for high in ladder[i:]:
            assert strictest([low, high]) == high
            assert strictest([high, low]) == high
    assert strictest([Escalate("tl", "first"), Escalate("tl", "second")]).reason == "first"


def test_parse_label_accepts_synonyms_and_rejects_nonsense() -> None:
    assert parse_label("Escalate:TL") == Escalate("tl")
    assert parse_label(" deny ") == Deny()
    with pytest.raises(ValueError, match="not a decision"):
        parse_label("maybe")


def test_role_helpers_are_immutable() -> None:
    base = Role(Grant(ReadFile), description="base")
    more = base.extend(Grant(WriteFile))
    less = more.without(ReadFile)
    assert len(base.grants) == 1
    assert [g.action for g in more.grants] == [ReadFile, WriteFile]
    assert [g.action for g in less.grants] == [WriteFile]
    assert less.description == "base"
    with pytest.raises(TypeError, match="Grant"):
        Role(ReadFile)  # type: ignore[arg-type]


def test_policy_validates_its_parts() -> None:
    with pytest.raises(TypeError, match="non-empty"):
        Policy(roles={})
    with pytest.raises(TypeError, match="must be a Role"):
        Policy(roles={"dev": "all"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="Forbid"):
        Policy(roles={"dev": Role()}, forbid=[Grant(ReadFile)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="callables"):
        Policy(roles={"dev": Role()}, rules=["x"])  # type: ignore[list-item]
    policy = Policy(roles={"dev": Role()}).with_role("tl", Role(Grant(ReadFile)))
    assert sorted(policy.roles) == ["dev", "tl"]
    assert policy.replace(lead="dev").lead == "dev"
