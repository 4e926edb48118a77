"""The built-in policy, used when the project has no ``.exomonad/policy.py``.

It is written against the same API a project policy uses, so it doubles as an example:
import it and derive from it (``DEFAULT_POLICY.with_role("dev", DEV.extend(...))``).

- Everyone: never force-push to or delete a protected branch, never delete ``/``, a
  system directory, a home directory or the project, never read or write ExoMonad's
  state dir (nor a directory tree holding it: ``grep -r``, ``tar c``, ``cp -r`` of
  ``../..``), never write an agent's hook/MCP settings or Claude Code's inboxes, team
  configs and tasks, never run ExoMonad's control commands (``approve``, ``deny``,
  ``inbox send``, ``mcp-stdio``, ``hook``, ...), never read credential stores, never
  signal ExoMonad's processes (:mod:`exomonad.policy.shell_signal`).
- ``dev``: read the project, write/commit in its worktree, push its own branch
  (``--force-with-lease`` allowed), shell without sudo, web search, ExoMonad's MCP
  tools, other MCP servers' tools whose names say they read (``mcp_reads``).
- ``worker``: the same as ``dev`` (a worker in its own worktree pushes its own branch);
  the two roles differ in the ExoMonad tools they see (``[roles.tools]``).
- ``tl``: read anything but secrets, write in the project, push any unprotected branch,
  delete unprotected branches, open PRs, close PRs and issues, any known host, any MCP
  tool (another agent's MCP tool that acts goes to a person).
  A dev's request within the lead's set: reads and plain shell are allowed by the lead's
  policy; the rest is asked of the lead agent.
- Not in any of these sets (merging a PR, deploying, sudo, unknown commands) → a human.
"""

from __future__ import annotations

from exomonad.policy.actions import (
    CloseIssue,
    ClosePR,
    CreatePR,
    DeleteBranch,
    DeleteFile,
    GitCommit,
    GitPush,
    Internal,
    McpTool,
    Network,
    ReadFile,
    Shell,
    WebSearch,
    WriteFile,
)
from exomonad.policy.examples import Call, Example, ExampleSpec
from exomonad.policy.model import Forbid, ForbidBase, Grant, GrantBase, Policy, Role
from exomonad.policy.predicates import (
    all_of,
    catastrophic_delete,
    exomonad_control,
    in_project,
    in_worktree,
    known_host,
    mcp_reads,
    no_blind_force,
    own_branch,
    protected_branch,
    reads_others_mail,
    reads_others_spool,
    reads_state_dir,
    reads_state_tree,
    secret_path,
    shell_touches_control_files,
    shell_touches_state,
    touches_control_files,
    touches_team_files,
    unprivileged,
    unprotected_branch,
)
from exomonad.policy.shell_signal import signals_exomonad

__all__ = ["DEFAULT_POLICY", "DEV", "EVERYONE", "FORBID", "TL", "WORKER", "examples", "policy"]

#: Explicit denies for every role.
FORBID: tuple[ForbidBase, ...] = (
    Forbid(
        GitPush,
        lambda a, ctx: a.force and protected_branch(a, ctx),
        reason="force push to a protected branch",
    ),
    Forbid(
        DeleteBranch,
        lambda a, ctx: a.remote is not None and protected_branch(a, ctx),
        reason="deleting a protected branch",
    ),
    Forbid(DeleteFile, catastrophic_delete, reason="deleting a system, home or project dir"),
    Forbid(
        WriteFile,
        touches_control_files,
        reason="agents may not edit ExoMonad's policy or an agent's hook settings",
    ),
    Forbid(
        DeleteFile,
        touches_control_files,
        reason="agents may not delete ExoMonad's policy or an agent's hook settings",
    ),
    Forbid(ReadFile, secret_path, reason="reading credentials"),
    Forbid(
        ReadFile,
        reads_state_dir,
        reason="agents may not read ExoMonad's state (tokens, databases, policy, config)",
    ),
    Forbid(
        ReadFile,
        reads_state_tree,
        reason="agents may not read a directory tree holding ExoMonad's state (tokens, "
        "databases): search a narrower path (src/), or with rg/Grep, which skip it",
    ),
    Forbid(
        ReadFile,
        reads_others_mail,
        reason="only the lead reads Claude Code's inboxes (the team's messages and "
        "pending permission requests): a worker's messages come to it",
    ),
    Forbid(
        ReadFile,
        reads_others_spool,
        reason="only the lead reads messages spooled for others: an agent reads the "
        "files its own pointers name",
    ),
    Forbid(
        WriteFile,
        touches_team_files,
        reason="agents message through their tools, "
        "never by writing Claude Code's inboxes, team configs or tasks",
    ),
    Forbid(
        DeleteFile,
        touches_team_files,
        reason="agents may not delete Claude Code's inboxes, team configs or tasks",
    ),
    Forbid(
        Shell,
        shell_touches_state,
        reason="agents may not read or write ExoMonad's state (tokens, databases, policy, config)",
    ),
    Forbid(
        Shell,
        shell_touches_control_files,
        reason="agents may not rewrite an agent's "
        "hook/MCP settings or Claude Code's team files, or unpack files where ExoMonad's "
        "state lives",
    ),
    Forbid(
        Shell,
        exomonad_control,
        reason="ExoMonad's control commands (approve, deny, "
        "inbox send, mcp-stdio, hook, up/down, ...) are a person's to run",
    ),
    Forbid(
        Shell,
        signals_exomonad,
        reason="agents may not signal ExoMonad's processes (its server, teammates) "
        "or every process of the user",
    ),
)

#: Grants every role has.
EVERYONE: tuple[GrantBase, ...] = (
    Grant(Internal, delegate="allow"),
    Grant(WebSearch, delegate="allow"),
    Grant(McpTool, mcp_reads, delegate="allow"),
)

WORKER = Role(
    *EVERYONE,
    Grant(ReadFile, lambda a, ctx: in_project(a, ctx) or in_worktree(a, ctx)),
    Grant(WriteFile, in_worktree),
    Grant(DeleteFile, in_worktree),
    Grant(Shell, unprivileged),
    Grant(GitCommit, lambda a, ctx: ctx.in_worktree(a.repo)),
    Grant(GitPush, all_of(own_branch, no_blind_force), why="its own branch"),
    description="works in its worktree; commits and pushes its own branch",
)

DEV = WORKER.extend(description="works in its worktree; pushes its own branch")

TL = Role(
    *EVERYONE,
    Grant(
        ReadFile, lambda a, ctx: a.path is not None and not secret_path(a, ctx), delegate="allow"
    ),
    Grant(Shell, unprivileged, delegate="allow"),
    Grant(WriteFile, in_project),
    Grant(DeleteFile, in_project),
    Grant(GitCommit, lambda a, ctx: ctx.in_project(a.repo)),
    Grant(GitPush, unprotected_branch),
    Grant(DeleteBranch, lambda a, ctx: not ctx.is_protected(a.name)),
    Grant(CreatePR),
    Grant(ClosePR),
    Grant(CloseIssue),
    Grant(Network, known_host),
    Grant(McpTool, delegate="human", why="its own MCP servers"),
    description="team lead: any unprotected branch, PRs, issues",
)

DEFAULT_POLICY = Policy(
    roles={"tl": TL, "dev": DEV, "worker": WORKER},
    forbid=FORBID,
    name="exomonad built-in",
)

#: The name a policy module must bind.
policy = DEFAULT_POLICY

examples: list[ExampleSpec] = [
    Example("git push origin feature/dev1", "dev", "allow"),
    Example("git push --force-with-lease origin feature/dev1", "dev", "allow"),
    Example("git push -f origin feature/dev1", "dev", "tl"),
    Example("cd /repo && git push -f origin main", "dev", "deny"),
    Example("git push origin HEAD:main", "tl", "human"),
    Example("git push -u origin feature/x", "tl", "allow"),
    Example("git push origin feature/other", "dev", "tl"),
    Example("git push origin feature/other", "worker", "tl"),
    Example("git push origin --delete main", "tl", "deny"),
    Example("git push origin --delete old", "tl", "allow"),
    Example('git commit -m "wip"', "dev", "allow"),
    Example("gh pr create --base main --fill", "dev", "tl"),
    Example("gh pr create --base main --fill", "tl", "allow"),
    Example("gh pr merge 12 --squash", "tl", "human"),
    Example("gh issue close 7", "tl", "allow"),
    Example("kubectl apply -f deploy.yaml", "tl", "human"),
    Example("rm -rf /", "tl", "deny"),
    Example("rm -rf build", "dev", "allow"),
    Example("sudo apt-get install jq", "dev", "human"),
    Example("pytest -q", "dev", "allow"),
    Example("exomonad approve 3fa9", "worker", "deny"),
    Example("python3 -m exomonad mcp-stdio --role tl", "dev", "deny"),
    Example("exomonad inbox send team-lead hi --from team-lead", "tl", "deny"),
    Example("exomonad status --json", "worker", "allow"),
    Example("exomonad-hook rm -rf /", "worker", "deny"),  # the hook front runs any command
    Example("/usr/bin/exomonad-hook exomonad approve 3fa9", "tl", "deny"),
    Example("cat /repo/.exomonad/lead.token", "worker", "deny"),
    Example("cat .exo*/lead.token", "tl", "deny"),
    Example("tar -xf x.tar -C /repo/.exomonad", "worker", "deny"),
    Example("tar -xf x.tar -C /repo", "tl", "deny"),
    Example("perl -pi -e s/exomonad/true/ .claude/settings.json", "worker", "deny"),
    Example("git checkout HEAD~1 -- .mcp.json", "tl", "deny"),
    Example("sed -i s/exomonad/true/ .codex/config.toml", "worker", "deny"),
    Example(
        Call(
            "Write",
            {"file_path": "/repo/.worktrees/worker1/.codex/config.toml", "content": "[hooks]\n"},
        ),
        "worker",
        "deny",
    ),
    Example("cat .mcp.json", "worker", "allow"),
    Example("git add .mcp.json .claude .gemini", "tl", "allow"),
    Example(Call("Read", {"file_path": "/repo/.exomonad/tokens.json"}), "tl", "deny"),
    Example(Call("Write", {"file_path": "/repo/.exomonad/policy.py"}), "tl", "deny"),
    Example(Call("Write", {"file_path": "/repo/docs/x.md"}), "dev", "tl"),
    Example(Call("Read", {"file_path": "/usr/lib/python3/os.py"}), "dev", "allow"),
    Example(Call("WebFetch", {"url": "https://example.com"}), "dev", "tl"),
    Example(Call("read_file", {"absolute_path": "/repo/README.md"}, "gemini"), "worker", "allow"),
    Example(Call("mcp__exo__notify_parent", {"message": "done"}), "worker", "allow"),
    Example(Call("Frobnicate", {}), "dev", "human"),
]
