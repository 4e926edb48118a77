"""Typed, hot-reloadable policy for every agent's tool calls (agent < team lead < human).

The server's entry point is :class:`PolicyEngine`::

    engine = PolicyEngine.for_project()           # .exomonad/policy.py, audit.jsonl
    decision = engine.decide(ToolRequest("claude", role="dev", agent="dev1",
                                         tool_name="Bash", tool_input={"command": "ls"},
                                         cwd="/repo/wt/dev1", worktree="/repo/wt/dev1",
                                         branch="feature/x"))
    # -> Allow(...) | Deny(reason) | Escalate(to="tl" | "human", reason)

A project policy is a Python module binding ``policy = Policy(...)`` (see
``docs/policy.md``). Pipeline: :func:`classify` turns the raw call into typed actions,
the cascade judges each (:mod:`exomonad.policy.cascade`), the strictest wins.
"""

from __future__ import annotations

from exomonad.policy.actions import (
    Action,
    CloseIssue,
    ClosePR,
    CreatePR,
    DeleteBranch,
    DeleteFile,
    Deploy,
    GitCommit,
    GitPush,
    Internal,
    McpTool,
    MergePR,
    Network,
    ReadFile,
    Shell,
    Unknown,
    WebSearch,
    WriteFile,
    action_from_dict,
    action_to_dict,
)
from exomonad.policy.approvals import Approval, ApprovalStore
from exomonad.policy.audit import AuditLog
from exomonad.policy.check import CheckReport, check_policy
from exomonad.policy.classify import classify
from exomonad.policy.decisions import Allow, Decision, Deny, Escalate, strictest
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.engine import Evaluation, PolicyEngine
from exomonad.policy.errors import (
    ApprovalClosedError,
    ApprovalNotFoundError,
    PolicyError,
    PolicyLoadError,
)
from exomonad.policy.examples import Call, Example, ExampleSpec
from exomonad.policy.loader import LoadedPolicy, PolicyStore
from exomonad.policy.model import (
    Delegation,
    Forbid,
    ForbidBase,
    Grant,
    GrantBase,
    Policy,
    Role,
    Rule,
)
from exomonad.policy.predicates import (
    all_of,
    any_of,
    catastrophic_delete,
    host_in,
    in_project,
    in_worktree,
    known_host,
    mcp_reads,
    negate,
    no_blind_force,
    own_branch,
    protected_branch,
    secret_path,
    touches_control_files,
    unprivileged,
    unprotected_branch,
)
from exomonad.policy.request import Context, Runtime, ToolRequest

__all__ = [
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
