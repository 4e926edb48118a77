"""Pin the policy package's public API, its error tree, and keep docs/policy.md honest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import exomonad.policy
from exomonad.errors import ExomonadError
from exomonad.policy import errors, template
from exomonad.policy.actions import ACTION_TYPES, GitPush, Shell, action_from_dict, action_to_dict

POLICY_ALL = [
    "DEFAULT_POLICY",
    "Action",
    "Allow",
    "Approval",
    "ApprovalClosedError",
    "ApprovalNotFoundError",
    "ApprovalStore",
    "AuditLog",
    "Call",
    "CheckReport",
    "CloseIssue",
    "ClosePR",
    "Context",
    "CreatePR",
    "Decision",
    "Delegation",
    "DeleteBranch",
    "DeleteFile",
    "Deny",
    "Deploy",
    "Escalate",
    "Evaluation",
    "Example",
    "ExampleSpec",
    "Forbid",
    "ForbidBase",
    "GitCommit",
    "GitPush",
    "Grant",
    "GrantBase",
    "Internal",
    "LoadedPolicy",
    "McpTool",
    "MergePR",
    "Network",
    "Policy",
    "PolicyEngine",
    "PolicyError",
    "PolicyLoadError",
    "PolicyStore",
    "ReadFile",
    "Role",
    "Rule",
    "Runtime",
    "Shell",
    "ToolRequest",
    "Unknown",
    "WebSearch",
    "WriteFile",
    "action_from_dict",
    "action_to_dict",
    "all_of",
    "any_of",
    "catastrophic_delete",
    "check_policy",
    "classify",
    "host_in",
    "in_project",
    "in_worktree",
    "known_host",
    "mcp_reads",
    "negate",
    "no_blind_force",
    "own_branch",
    "protected_branch",
    "secret_path",
    "strictest",
    "touches_control_files",
    "unprivileged",
    "unprotected_branch",
]
DOC = Path(__file__).resolve().parents[2] / "docs" / "policy.md"


def test_policy_all_is_pinned_and_sorted() -> None:
    names = list(exomonad.policy.__all__)
    assert names == POLICY_ALL
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
    for name in names:
        assert hasattr(exomonad.policy, name), name


def test_policy_errors_hang_off_the_root() -> None:
    assert issubclass(errors.PolicyError, ExomonadError)
    for cls in (errors.PolicyLoadError, errors.ApprovalNotFoundError, errors.ApprovalClosedError):
        assert errors.PolicyError in cls.__bases__
        assert cls.__name__ in (errors.__doc__ or "")
    assert str(errors.ApprovalNotFoundError("no approval with id 'x'")) == "no approval with id 'x'"


def test_every_action_round_trips_through_json() -> None:
    for name, cls in ACTION_TYPES.items():
        assert cls.__name__ == name
        assert cls.__doc__
    for action in (GitPush("o", "b", True, True, "/r"), Shell(("a", "b"), "/w", True)):
        assert action_from_dict(action_to_dict(action)) == action
        assert hash(action) == hash(action_from_dict(action_to_dict(action)))
    with pytest.raises(ValueError, match="Nope"):
        action_from_dict({"type": "Nope"})


def test_docs_complete_example_is_the_shipped_template() -> None:
    text = DOC.read_text()
    match = re.search(
        r"<!-- policy-example:start -->\n```python\n(.*?)```\n"
        r"<!-- policy-example:end -->",
        text,
        re.S,
    )
    assert match is not None
    assert match.group(1) == Path(template.__file__).read_text()


def test_docs_mention_every_action_and_public_predicate() -> None:
    text = DOC.read_text()
    for name in ACTION_TYPES:
        assert f"`{name}`" in text, name
    for name in (
        "in_worktree",
        "own_branch",
        "no_blind_force",
        "host_in",
        "all_of",
        "exomonad policy check",
        "exomonad approve",
        "approvals.db",
        "audit.jsonl",
        "EXOMONAD_MYPY_CACHE",
    ):
        assert name in text, name
