"""A worker's life in the server: its identity, token and worktree in, all of it out.

Every way a worker starts (``spawn_workers``, ``exomonad worker start``, and a teammate
Claude Code spawns through ``exomonad teammate``) goes through :func:`provision`, and
every way it ends (``remove_worker``, ``exomonad worker stop``, a teammate's
``shutdown_request``, ``exomonad down``) through :func:`release`. So the rules live
here once: which names and roles may get a token, that a worker gets its own worktree
and branch (``[workers] worktree``), that its runtime will run ExoMonad's hooks in its
checkout (no gate, no start: :meth:`exomonad.runtimes.Runtime.check_gate`, e.g. Codex's
hook trust), and that a worktree is removed only when nothing would be lost.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from exomonad import runtimes
from exomonad.errors import ExomonadError, GateError, InvalidNameError
from exomonad.gitgate import worker_env
from exomonad.gitlink import read_small
from exomonad.policy.control_files import CONTROL_FILES
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.setup import has_exomonad_hooks
from exomonad.teams import load_config
from exomonad.teams.paths import RESERVED_NAMES, sanitize_path_name, validate_name
from exomonad.util.digits import is_number
from exomonad.util.waiting import WaitTimeout, retry_until
from exomonad.worktrees import Removal, WorktreeError, WorktreeState

__all__ = [
    "WORKER_ROLES",
    "Provisioned",
    "await_gate",
    "await_mcp",
    "gate_refusal",
    "prove_gate",
    "provision",
    "release",
]

log = logging.getLogger("exomonad.server")

#: Roles a worker token may carry (never the lead's).
WORKER_ROLES = frozenset({"worker", "dev"})


@dataclass(frozen=True)
class Provisioned:
    """A worker's identity (with its worktree and branch) and its token."""

    identity: Identity
    token: str
    #: ExoMonad's git hooks dir its worktree uses (None without a worktree).
    hooks: str | None = None
    #: What its runtime needs in its environment to match the gate checked (Codex:
    #: the ``CODEX_HOME`` whose hook trust was verified).
    runtime_env: dict[str, str] = field(default_factory=dict)

    @property
    def cwd(self) -> str | None:
        """Where the worker's process should run (its worktree, if it has one)."""
        return self.identity.worktree

    def env(self, state_dir: Path) -> dict[str, str]:
        """What to add to the worker's environment: identity and git gate."""
        return {**self.runtime_env,
                **worker_env(token=self.token, name=self.identity.name,
                             team=self.identity.team or "", state_dir=str(state_dir),
                             hooks=self.hooks)}  # fmt: skip

    def to_json(self) -> dict[str, str | dict[str, str] | None]:
        """What the teammate route answers."""
        return {"token": self.token, "name": self.identity.name, "team": self.identity.team,
                "worktree": self.identity.worktree, "branch": self.identity.branch,
                "hooks": self.hooks, "env": self.runtime_env}  # fmt: skip


def _check(svc: Services, name: object, role: object, team: object) -> tuple[str, str, str]:
    if not isinstance(name, str) or not isinstance(role, str) or not isinstance(team, str):
        raise InvalidNameError("name, role and team must be strings")
    validate_name(name, "worker name")
    validate_name(team, "team name")
    lead = svc.config.lead
    inbox = sanitize_path_name(name)  # `team.lead` is the file `team-lead.json`
    if {name, inbox} & {*RESERVED_NAMES, *map(sanitize_path_name, RESERVED_NAMES), lead.name,
                        sanitize_path_name(lead.name)}:  # fmt: skip
        raise InvalidNameError(f"{name!r} is reserved (the lead's or Claude Code's name)")
    if role not in WORKER_ROLES:
        raise InvalidNameError(f"role {role!r} cannot be given to a worker "
                               f"(one of {sorted(WORKER_ROLES)})")  # fmt: skip
    return name, role, team


def provision(svc: Services, name: object, team: object, *, parent: str = "team-lead",
              role: object = "worker", pid: object = None,
              runtime: object = None) -> Provisioned:  # fmt: skip
    """Validate, make the worker's worktree (if configured), check that ``runtime``
    (when given) will run ExoMonad's hooks there, and issue its token.

    Raises
    ------
    InvalidNameError
        A name or role a worker may not have (the lead's name, a reserved name,
        the lead's role, a name that could escape a directory).
    WorktreeError
        The project is not a git repository with a commit, or the path is taken.
    GateError
        The runtime would not run ExoMonad's hooks in the worker's checkout.
    UnknownRuntimeError
        ``runtime`` is not a runtime ExoMonad knows.
    """
    name, role, team = _check(svc, name, role, team)
    svc.mcp_seen.discard((team, name))  # a new worker of that name: wait for its own MCP
    runner = runtimes.get(runtime) if isinstance(runtime, str) else None
    held = svc.tokens.find(name, team)
    if held is not None and _alive(svc, held):
        raise InvalidNameError(f"{name!r} is a live worker of team {team!r}: a new token "
                               f"would silently cut it off; stop it first "
                               f"(exomonad worker stop {name}, or a shutdown_request)")  # fmt: skip
    who = Identity(name=name, role=role, team=team, parent=parent,
                   pid=pid if isinstance(pid, int) and pid > 1 else None,
                   runtime=runner.name if runner else None)  # fmt: skip
    consent = svc.config.workers.codex_trust
    if runner is not None:
        _check_ungated(svc, runner)
    if svc.config.workers.worktree:
        wt = svc.worktrees.create(name)
        _check_start_files(svc, wt.path)  # a worktree kept from an earlier session
        try:
            _check_gate(svc.worktrees.project_root, wt.path, runner)
            extra = runner.check_gate(wt.path, consent=consent) if runner else {}
        except (WorktreeError, GateError):
            svc.worktrees.remove(name)  # just made and clean: nothing to lose
            raise
        who = replace(who, worktree=str(wt.path), branch=wt.branch)
        return Provisioned(who, _issue(svc, who), str(wt.hooks), extra)
    root = svc.state_dir.parent
    extra = runner.check_gate(root, consent=consent) if runner else {}
    return Provisioned(who, _issue(svc, who), runtime_env=extra)


def _issue(svc: Services, who: Identity) -> str:
    """``who``'s token; it joins its team (a ``presence`` event)."""
    token = svc.tokens.issue(who)
    svc.presence.note(who.team, who.name, "active", "provisioned")
    return token


def _check_ungated(svc: Services, runner: runtimes.Runtime) -> None:
    """A runtime ExoMonad cannot gate call by call runs sandboxed, or with consent."""
    cfg = svc.config.workers
    if runner.gated or cfg.sandbox != "none" or cfg.allow_ungated:
        return
    raise GateError(
        f"a {runner.title} has no hooks: ExoMonad cannot judge its tool calls, and only "
        "git's pre-push gate would stand between it and the remote. Run such workers "
        'under the sandbox (`sandbox = "bwrap"` in [workers] of .exomonad/config.toml: '
        "it may write only its worktree), or consent to them running ungated "
        "(`allow_ungated = true` there); see docs/guarantees.md. A command that starts "
        "Gemini CLI or Codex CLI through a wrapper is known by its runtime: name it "
        '(`"runtime": "gemini"` in spawn_workers, --runtime for `worker start`)'
    )


def prove_gate(svc: Services, team: str | None, name: str, runtime: str | None,
               deliver: Callable[[str], object], timeout: float) -> None:  # fmt: skip
    """No gate, no start, proven live (:mod:`exomonad.server.gateprobe`): for a runtime
    with ``gate_probe``, type the probe with ``deliver`` and :func:`await_gate`."""
    runner = runtimes.get(runtime) if runtime else None
    if runner is None or not runner.gate_probe:
        return
    text = svc.gate_probes.start(team, name)
    try:
        deliver(text)
    except ExomonadError as exc:
        svc.gate_probes.wait(team, name, 0)  # void it
        raise GateError(f"could not type the gate check into {name}'s pane: {exc}") from exc
    await_gate(svc, team, name, runner, timeout)


def await_gate(svc: Services, team: str | None, name: str, runner: runtimes.Runtime,
               timeout: float) -> None:  # fmt: skip
    """Wait for worker ``name``'s probe to come back through its own prompt hook;
    :class:`GateError` saying how to fix it if not within ``timeout`` seconds."""
    started = time.monotonic()
    if not svc.gate_probes.wait(team, name, timeout):
        raise GateError(gate_refusal(runner, name, timeout))
    svc.counters["gates_proven"] += 1
    log.info("%s's gate proven live in %.0f ms", name, (time.monotonic() - started) * 1000)


def gate_refusal(runner: runtimes.Runtime, name: str, timeout: float) -> str:
    """Why worker ``name`` is refused when its gate probe did not come back."""
    return (f"{runner.title} worker {name!r} ran none of ExoMonad's hooks: the gate check "
            f"typed into it did not reach the server within {timeout:g}s, so its tool calls "
            f"would not be judged; it is stopped. Fix: {runner.gate_fix}")  # fmt: skip


def await_mcp(svc: Services, team: str | None, name: str, timeout: float) -> bool:
    """Wait until worker ``name``'s MCP client has reached the server (it listed its
    tools); False after ``timeout`` seconds. A runtime that ``waits_for_mcp`` gets its
    task only then."""
    try:
        retry_until(lambda: (team, name) in svc.mcp_seen, timeout=timeout, interval=0.1,
                    message=f"{name}'s MCP client did not reach the server")  # fmt: skip
    except WaitTimeout:
        return False
    return True


def _alive(svc: Services, who: Identity) -> bool:
    """Whether the holder of ``who``'s token still runs: its process (a teammate says
    which), else its member's pane (a worker ExoMonad opened)."""
    if who.pid is not None:
        try:  # alive, and still ExoMonad (not a stranger that got the pid number)
            with open(f"/proc/{who.pid}/cmdline", "rb") as fh:
                return b"exomonad" in fh.read()
        except OSError:
            return False
    if who.team is None:
        return False
    try:
        member = load_config(svc.paths(who.team)).member(who.name)
    except ExomonadError:
        return False
    pane = member.pane if member is not None else None
    try:
        return bool(pane) and svc.backend.exists(str(pane))
    except ExomonadError:
        return True  # cannot tell: the name stays taken (never cut a live worker off)


#: Agent settings that carry ExoMonad's hooks (the policy gate) into a checkout.
GATE_SETTINGS = tuple(r.settings_file for r in runtimes.RUNTIMES.values()
                      if r.settings_file)  # fmt: skip


def _check_gate(project: Path, worktree: Path, runner: runtimes.Runtime | None) -> None:
    """No gate, no start: a worktree is made from the lead's ``HEAD``, so hook settings
    that ``exomonad init`` wrote but nobody committed are missing there, and an agent
    started in it would run with no policy at all. The worker's own runtime's settings
    are checked; every runtime's when it is not known (a command of the user's)."""
    own = runner.settings_file if runner is not None else None
    for rel in (own,) if own else GATE_SETTINGS:
        if has_exomonad_hooks(project / rel) and not has_exomonad_hooks(worktree / rel):
            raise WorktreeError(
                f"the worker's worktree has no ExoMonad hooks in {rel}: the lead's checkout "
                "has them but they are not committed, so the worker would run ungated. "
                "Commit what `exomonad init` wrote (git add .mcp.json .claude .gemini .codex "
                ".exomonad/config.toml && git commit), then start the worker again"
            )


#: Bytes of an agent settings file compared (the lead's are far smaller).
_SETTINGS_AT_MOST = 1 << 20


def _check_start_files(svc: Services, worktree: Path) -> None:
    """Refuse a worktree whose agent settings (:data:`CONTROL_FILES`: hooks, MCP servers)
    are neither the lead's checkout's nor its ``HEAD``'s. An agent reads them when its
    session starts, and runs what they name before any hook judges anything. The gate
    refuses a worker's writes to them, but found probing, ``git checkout REV --
    .gemini/settings.json``, a merge or ``tar -xf`` swapped them in a kept worktree, and
    a hook the worker added would run at its next session. A worktree made just now
    holds ``HEAD``'s."""
    project = svc.worktrees.project_root
    changed = []
    for rel in CONTROL_FILES:
        mine = worktree / rel
        if not os.path.lexists(mine):
            continue
        text = read_small(mine, _SETTINGS_AT_MOST)  # a link is not the lead's file
        lead = read_small(project / rel, _SETTINGS_AT_MOST)
        if text is None or (text != lead and text != svc.worktrees.committed(rel)):
            changed.append(rel)
    if changed:
        files = " ".join(changed)
        raise WorktreeError(
            f"the worker's worktree {worktree} holds {files} changed from the lead's "
            "checkout and its HEAD: an agent runs the hooks and MCP servers they name when "
            f"its session starts, before any hook judges it. Compare each (diff "
            f"{project}/FILE {worktree}/FILE), copy the lead's over it or remove the "
            "worktree, then start the worker again"
        )


#: How long a released worker's processes get to go before its worktree is kept instead.
SETTLE_TIMEOUT = 10.0


def working_in(folder: Path, ignore: int | None = None) -> list[int]:
    """The processes (not this one, nor ``ignore``) whose working directory is ``folder``
    or below it: a worker's, sandboxed or not, as the host's ``/proc`` shows them."""
    prefix = str(folder.resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if not is_number(entry.name) or int(entry.name) in (os.getpid(), ignore):
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone, or not ours to read
            continue
        if cwd == prefix or cwd.startswith(prefix + "/"):
            found.append(int(entry.name))
    return found


def _settle(worktree: Path, ignore: int | None = None) -> list[int]:
    """Wait until no process works in ``worktree`` (at most :data:`SETTLE_TIMEOUT`); the
    pids still there. Found probing: the server's git ran on a worktree while the
    worker's code (a killed pane's sandbox, going down) still changed it, and a race
    with a swapped ``.git`` or a swapped directory ran the worker's filter as the server
    or made ``git worktree remove`` delete files outside."""
    with contextlib.suppress(WaitTimeout):
        retry_until(lambda: not working_in(worktree, ignore), timeout=SETTLE_TIMEOUT,
                    interval=0.05)  # fmt: skip
    return working_in(worktree, ignore)


def release(svc: Services, name: str, team: str, *, force: bool = False,
            caller: int | None = None) -> Removal | None:  # fmt: skip
    """Revoke ``name``'s token and remove its worktree if nothing would be lost.

    Returns what happened to the worktree (``None`` when the worker had none). A kept
    worktree is logged and stays listed by ``exomonad worker list`` / ``status``. It is
    also kept while processes (but ``caller``, the releasing teammate) still work in it
    after :data:`SETTLE_TIMEOUT`: the server runs no git where a worker's code still runs.
    """
    who = svc.tokens.find(name, team)
    svc.tokens.revoke(name, team)
    svc.presence.note(team, name, "terminated", "released")
    if who is None or who.worktree is None:
        return None
    still = _settle(Path(who.worktree), caller)
    if still:  # its code still changes the worktree: no git of ours runs there now
        state = WorktreeState(Path(who.worktree), who.branch)
        why = f"kept: processes still run in it (pids {', '.join(map(str, still[:5]))})"
        log.warning("worktree of %s %s", name, why)
        return Removal(False, state, why)
    try:
        removal = svc.worktrees.remove(name, force=force)
    except ExomonadError as exc:  # never lose work because git failed: keep and say so
        log.warning("worktree of %s kept: %s", name, exc)
        state = WorktreeState(Path(who.worktree), who.branch)
        return Removal(False, state, f"not removed: {exc}")
    log.info("%s", removal.message())
    return removal
