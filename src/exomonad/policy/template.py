"""Project policy for ExoMonad (.exomonad/policy.py).

Check it with `exomonad policy check` (imports it in a separate process, runs mypy
--strict and the examples below). The server picks up a saved change on the next tool
call; a version that fails to load or fails an example is never used.
"""

from __future__ import annotations

from exomonad.policy import (
    Action,
    Allow,
    Call,
    Context,
    Decision,
    Deny,
    Deploy,
    Example,
    ExampleSpec,
    Forbid,
    GitPush,
    Grant,
    Internal,
    Network,
    Policy,
    ReadFile,
    Role,
    Shell,
    host_in,
)
from exomonad.policy.default import DEV, FORBID, TL, WORKER

#: Documentation sites any developer may fetch without asking.
DOCS = host_in("docs.python.org", "pypi.org", "github.com")


def staging_deploy(action: Deploy, ctx: Context) -> bool:
    """`fly deploy` (our staging app); production goes through CI."""
    del ctx
    return action.tool == "fly" and action.target == "deploy"


def release_branch(action: GitPush, ctx: Context) -> bool:
    """Release branches are cut by CI, never pushed by an agent."""
    del ctx
    return action.branch is not None and action.branch.startswith("release/")


def reviewer(action: Action, ctx: Context) -> Decision | None:
    """A free-form rule: reviewers read and run checks, nothing else."""
    if ctx.role != "reviewer":
        return None  # not ours: fall through to the roles
    if isinstance(action, ReadFile | Internal):
        return Allow("reviewers read")
    if isinstance(action, Shell) and action.argv[:1] in (("pytest",), ("ruff",), ("mypy",)):
        return Allow("reviewers run checks")
    return Deny("reviewers only read and run checks")


policy = Policy(
    roles={
        # The lead may also deploy staging; a dev asking for it goes to a human.
        "tl": TL.extend(Grant(Deploy, staging_deploy, delegate="human")),
        # Devs may read documentation sites directly.
        "dev": DEV.extend(Grant(Network, DOCS, delegate="allow", why="documentation")),
        "worker": WORKER,
        "reviewer": Role(description="reads and runs checks (see the rule)"),
    },
    forbid=[*FORBID, Forbid(GitPush, release_branch, reason="release branches are CI's")],
    rules=[reviewer],
    protected_branches=["main", "release/*"],
    name="acme",
)

examples: list[ExampleSpec] = [
    ("git push origin feature/dev1", "dev", "allow"),
    ("git push origin release/2.0", "tl", "deny"),
    ("cd app && fly deploy", "tl", "allow"),
    ("fly deploy", "dev", "human"),
    ("pytest -q", "reviewer", "allow"),
    ("git commit -am wip", "reviewer", "deny"),
    (Call("WebFetch", {"url": "https://docs.python.org/3/library/shlex.html"}), "dev", "allow"),
    (Call("web_fetch", {"prompt": "summarise https://example.com/x"}, "gemini"), "dev", "tl"),
    Example("git push origin HEAD", "dev", "allow", branch="feature/login"),
    (GitPush(remote="origin", branch="main", force=True), "tl", "deny"),
]
