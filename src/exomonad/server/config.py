"""Project configuration: ``.exomonad/config.toml`` (every key optional).

Example::

    [lead]
    name = "team-lead"          # the root lead's member name
    role = "tl"                 # role of the root lead's MCP connection
    follow = "move"             # lead restarted (new session team): move | remove | keep
    poll_grace = 5.0            # unread this long in the lead's inbox → type into its pane

    [roles]
    default = "guest"           # role of a connection without a valid token

    [roles.tools]               # which tools each role sees (fnmatch patterns)
    tl = ["*"]
    dev = ["notify_parent", "send_message", "team_status", "task_*"]
    worker = ["notify_parent", "send_message", "team_status", "task_list", "task_get",
              "task_update", "task_claim"]
    guest = ["team_status", "task_list", "task_get"]

    [policy]
    approval_timeout = 50.0     # seconds a tool call waits for the lead or a human
    on_timeout = "ask"          # then: "ask" (Claude Code's own prompt) or "deny";
                                # a Gemini/Codex worker's is always denied
    popup = true                # ask humans in a tmux popup on attached clients

    [teammate]                  # exomonad teammate (CLAUDE_CODE_TEAMMATE_COMMAND)
    claude = "claude"           # the real Claude Code, for Claude teammates
    default = "claude"          # runtime when no route matches
    [[teammate.routes]]
    agent_type = "gemini*"      # e.g. subagent_type "gemini-worker"
    runtime = "gemini"          # uses [workers] command unless `command` is set
    [[teammate.routes]]
    agent_type = "codex*"       # subagent_type "codex-worker" (also name "codex-*")
    runtime = "codex"           # the runtime's own worker command

    [workers]
    command = "gemini --yolo"   # default command for spawn_workers and gemini teammates
    tmux_session = "exomonad"   # where worker panes are opened
    agent_type = "gemini"
    ready_marker = "Type your message or @path/to/file"  # wait for it before the task
    ready_timeout = 90.0
    worktree = true             # each worker in its own git worktree and branch
    worktree_dir = ".worktrees" # relative to the project root (or absolute)
    branch_prefix = "exo/"      # a worker's branch: exo/<name>, from the lead's HEAD
    sandbox = "none"            # "bwrap": run workers under bubblewrap (docs/sandbox.md)
    codex_trust = false         # consent: ExoMonad trusts its own hooks for Codex workers
                                # (set by `exomonad init --trust-codex-hooks`)
    allow_ungated = false       # consent: terminal agents (no hooks) may run unsandboxed

    [github]                    # pull-request events (exomonad.github.config; docs/github.md)
    interval = 60.0             # seconds between polls; off without $GITHUB_TOKEN
    review_timeout = 14400.0    # a head unreviewed this long → [REVIEW TIMEOUT]
    suppress_after_ready = true # parent told "ready"/"timed out": no more noise for it

    [up]                        # the session `exomonad up` makes
    status_pane = true          # a status pane (`exomonad status --tui`) below the lead
    status_size = "30%"         # its height: lines ("12") or a percentage ("30%")

    [dashboard]
    port = 8765                 # also serve the dashboard on 127.0.0.1:8765 (0: any free
                                # port); `exomonad serve` prints its URL with a token
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from exomonad import runtimes
from exomonad.errors import ExomonadError
from exomonad.github.config import GitHubConfig
from exomonad.runtimes import GEMINI

__all__ = [
    "DashboardConfig",
    "GitHubConfig",
    "LeadConfig",
    "PolicyConfig",
    "ProjectConfig",
    "RolesConfig",
    "TeammateConfig",
    "TeammateRoute",
    "UpConfig",
    "WorkersConfig",
    "load_project_config",
]

_TL_TOOLS = ["*"]  # includes answer_permission
_DEV_TOOLS = ["notify_parent", "send_message", "team_status", "task_*"]
_WORKER_TOOLS = [
    "notify_parent", "send_message", "team_status",
    "task_list", "task_get", "task_update", "task_claim",
]  # fmt: skip
_GUEST_TOOLS = ["team_status", "task_list", "task_get"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LeadConfig(_Section):
    """The root lead (a Claude Code session started by the user)."""

    name: str = "team-lead"
    role: str = "tl"
    #: When the lead restarts into a new session team: move our workers there, remove
    #: them from the old team, or leave them.
    follow: Literal["move", "remove", "keep"] = "move"
    #: Seconds a worker's message may wait unread in a lead's inbox before it is typed
    #: into the lead's pane (a 2.1.330 lead with only roster members does not poll).
    poll_grace: float = Field(default=5.0, ge=0)


class RolesConfig(_Section):
    """Roles and the tools each one sees."""

    default: str = "guest"
    tools: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "tl": _TL_TOOLS,
            "dev": _DEV_TOOLS,
            "worker": _WORKER_TOOLS,
            "guest": _GUEST_TOOLS,
        }
    )

    def allows(self, role: str, tool: str) -> bool:
        """Whether ``role`` may see and call ``tool``."""
        return any(fnmatch.fnmatchcase(tool, pat) for pat in self.tools.get(role, []))


class WorkersConfig(_Section):
    """How ExoMonad starts workers (``spawn_workers``, ``worker start``, teammates)."""

    command: str = GEMINI.worker_command or ""
    tmux_session: str = "exomonad"
    agent_type: str = GEMINI.name
    #: Text the worker shows when it can take input ("" : do not wait). A TUI that is
    #: still starting drops what is typed into it, so the task waits for this.
    ready_marker: str = GEMINI.ready_marker or ""
    ready_timeout: float = Field(default=90.0, ge=0)
    #: Give each worker its own ``git worktree`` on its own branch (from the lead's HEAD).
    worktree: bool = True
    worktree_dir: str = ".worktrees"
    branch_prefix: str = "exo/"
    sandbox: Literal["none", "bwrap"] = "none"
    #: The user's consent (``exomonad init --trust-codex-hooks``): ExoMonad records
    #: trust for its own hooks in each Codex worker's checkout, in the user's Codex
    #: config. Without it a Codex worker whose hooks are not trusted is refused.
    codex_trust: bool = False
    #: The user's consent to workers whose tool calls ExoMonad cannot judge (a
    #: ``terminal`` runtime: no hooks) running outside the sandbox.
    allow_ungated: bool = False

    def runtime_of(self, command: str) -> str:
        """The runtime a worker command runs: the one whose program it starts, else
        :attr:`agent_type` for the configured :attr:`command`, else ``terminal``."""
        program = Path(command.split(maxsplit=1)[0]).name if command.split() else ""
        found = [r.name for r in runtimes.RUNTIMES.values() if r.program == program]
        if found:
            return found[0]
        return self.agent_type if command == self.command else runtimes.TERMINAL.name

    def command_for(self, runtime: str) -> str:
        """The command that starts a worker of ``runtime``: :attr:`command` for the
        configured runtime, else the runtime's own; a runtime with none (``terminal``)
        must be given one."""
        found = runtimes.get(runtime)
        if found.name == self.agent_type:
            return self.command
        if found.worker_command is None:
            raise ExomonadError(
                f"a {found.title} worker needs its command (`command` in spawn_workers, "
                "--command, or a teammate route's command)"
            )
        return found.worker_command

    def marker_for(self, runtime: str) -> str:
        """The ready marker of a worker of ``runtime`` ("": do not wait)."""
        found = runtimes.RUNTIMES.get(runtime)
        if runtime == self.agent_type or found is None:
            return self.ready_marker
        return found.ready_marker or ""


class PolicyConfig(_Section):
    """How escalated tool calls wait for an answer."""

    approval_timeout: float = Field(default=50.0, ge=0)
    on_timeout: Literal["ask", "deny"] = "ask"
    popup: bool = True


class TeammateRoute(_Section):
    """One routing rule for ``exomonad teammate`` (fnmatch patterns; omitted = any)."""

    agent_type: str | None = None
    name: str | None = None
    #: A runtime of :mod:`exomonad.runtimes` (``terminal``: any program, ``command``).
    runtime: str = "gemini"
    command: str | None = None
    ready_marker: str | None = None

    @field_validator("runtime")
    @classmethod
    def _known(cls, value: str) -> str:
        value = runtimes.canonical(value)
        if value not in runtimes.RUNTIMES:
            raise ValueError(f"unknown runtime {value!r}: one of {', '.join(runtimes.RUNTIMES)}")
        return value

    def marker(self) -> str | None:
        """What to wait for before typing into the teammate: this rule's, else its
        runtime's ready marker."""
        if self.ready_marker is not None:
            return self.ready_marker
        return runtimes.get(self.runtime).ready_marker

    def matches(self, agent_type: str | None, name: str) -> bool:
        """Whether this rule applies to a teammate."""
        type_ok = self.agent_type is None or fnmatch.fnmatchcase(agent_type or "", self.agent_type)
        name_ok = self.name is None or fnmatch.fnmatchcase(name, self.name)
        return type_ok and name_ok and (self.agent_type is not None or self.name is not None)


class TeammateConfig(_Section):
    """How ``exomonad teammate`` runs the teammates Claude Code spawns."""

    claude: str = "claude"
    #: The runtime when no route matches (``claude``: the real Claude Code).
    default: str = "claude"
    ready_timeout: float = 90.0
    #: Default: for each runtime that can be a worker and is not Claude Code itself,
    #: agent types ``<runtime>*`` (``gemini-worker``) and names ``<runtime>-*``.
    routes: list[TeammateRoute] = Field(
        default_factory=lambda: [
            TeammateRoute(runtime=r.name, **{key: pattern})
            for r in runtimes.RUNTIMES.values()
            if r.worker_command and not r.native_teammate
            for key, pattern in (("agent_type", f"{r.name}*"), ("name", f"{r.name}-*"))
        ]
    )

    @field_validator("default")
    @classmethod
    def _known_default(cls, value: str) -> str:
        return TeammateRoute._known(value)

    def route(self, agent_type: str | None, name: str) -> TeammateRoute:
        """The first matching rule, else the default runtime."""
        for r in self.routes:
            if r.matches(agent_type, name):
                return r
        return TeammateRoute(runtime=self.default)


class UpConfig(_Section):
    """What ``exomonad up`` puts in the project's tmux session besides the server and
    the lead."""

    #: Split a status pane running ``exomonad status --tui`` below the lead (its own
    #: ``status`` window when there is no lead window); ``up --no-status`` overrides.
    status_pane: bool = True
    #: The status pane's height, as tmux's ``split-window -l`` takes it.
    status_size: str = Field(default="30%", pattern=r"^[1-9][0-9]*%?$")


class DashboardConfig(_Section):
    """The web dashboard (always at ``/dashboard/`` on the Unix socket)."""

    #: Open its loopback TCP listener when the server starts, on this port (0: any free
    #: one); None: only when a person runs ``exomonad dashboard``. It listens on
    #: 127.0.0.1 only: there is no host to set.
    port: int | None = Field(default=None, ge=0, le=65535)


class ProjectConfig(_Section):
    """The whole ``config.toml``."""

    lead: LeadConfig = Field(default_factory=LeadConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    roles: RolesConfig = Field(default_factory=RolesConfig)
    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    teammate: TeammateConfig = Field(default_factory=TeammateConfig)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    up: UpConfig = Field(default_factory=UpConfig)
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig)


def load_project_config(state_dir: Path) -> ProjectConfig:
    """Read ``<state_dir>/config.toml``; defaults when absent; a clear error when wrong."""
    path = state_dir / "config.toml"
    if not path.exists():
        return ProjectConfig()
    try:
        return ProjectConfig.model_validate(tomllib.loads(path.read_text("utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ExomonadError(f"{path}: {exc}") from exc
