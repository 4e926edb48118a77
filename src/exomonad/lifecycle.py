"""``exomonad up`` and ``exomonad down``: a project's team session, started and ended whole.

``up`` makes (or completes) a tmux session, ``[workers] tmux_session``, with a
``server`` window running ``exomonad serve`` and a ``lead`` window running Claude Code
with teams on, and waits for the server's ``/health``. Running it again changes nothing.
Every window it makes is tagged with the tmux user option ``@exomonad-window`` (a
session it makes with ``@exomonad-session``).

``down`` shuts the workers down through the protocol (ExoMonad's own workers with
``remove_worker``; teammates Claude Code spawned through ``exomonad teammate`` with a
``shutdown_request``), removes ExoMonad's synthetic members, stops the server, revokes
every token, and closes only the windows tagged ``@exomonad-window`` (never a pane it did not
make). A worktree with work in it is kept, and ``down`` says where.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exomonad import runtimes
from exomonad.client import ServerClient
from exomonad.errors import ExomonadError, PaneError
from exomonad.panes import TmuxBackend
from exomonad.server.config import ProjectConfig, load_project_config
from exomonad.server.identity import TokenStore
from exomonad.server.pidfile import read_server_info
from exomonad.teams import Mailbox, TeamPaths, remove_all_synthetic
from exomonad.teams.models import now_iso
from exomonad.teams.protocol import ShutdownRequest, encode
from exomonad.util.waiting import WaitTimeout, retry_until
from exomonad.worktrees import WorktreeManager

__all__ = ["INSTALL_HINTS", "Report", "down", "require_tool", "up", "worktrees_of"]

#: How to install each program ExoMonad runs, for the one-line error when it is missing.
INSTALL_HINTS = {
    "tmux": "apt-get install tmux",
    "git": "apt-get install git",
    **{
        r.program: f"npm install -g {r.npm_package}"
        for r in runtimes.RUNTIMES.values()
        if r.program
    },
}
#: tmux user options marking what ``up`` made (distinct names: a window's format lookup
#: falls back to its session's options, so one name would mark every window).
_TAG = "@exomonad-window"
#: Variables ``up`` passes from the caller into the session (a tmux session starts with
#: the tmux server's environment, not the caller's): the agents' and ExoMonad's settings.
PASSED_ENV = ("CLAUDE_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_",
              "EXOMONAD_", "GIT_", "XDG_", "LANG", "LC_", "HOME")  # fmt: skip
_SESSION_TAG = "@exomonad-session"


def worktrees_of(state: Path) -> WorktreeManager:
    """The worktree manager of the project whose state dir is ``state`` (its config's
    ``[workers] worktree_dir`` and ``branch_prefix``)."""
    cfg = load_project_config(state).workers
    return WorktreeManager(state.resolve().parent, worktree_dir=cfg.worktree_dir,
                           branch_prefix=cfg.branch_prefix)  # fmt: skip


def require_tool(name: str) -> str:
    """The path of program ``name``, or an error that says how to install it."""
    found = shutil.which(name)
    if found is None:
        hint = INSTALL_HINTS.get(name, "install it, or fix PATH")
        raise ExomonadError(f"{name} is not installed or not on PATH: {hint}")
    return found


@dataclass
class Report:
    """What ``up`` or ``down`` did, step by step, and what needs a person's attention."""

    done: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"done": self.done, "warnings": self.warnings, **self.data}


def _exomonad_bin() -> str:
    """The directory of this installation's ``exomonad`` script (put first on PATH in the
    session, so hooks and MCP servers that call ``exomonad`` find this one)."""
    return str(Path(sys.executable).parent)


def _windows(tmux: TmuxBackend, session: str) -> dict[str, tuple[str, bool]]:
    """Window name → (window id, made by us) in ``session`` (empty: no such session)."""
    try:
        out = tmux.run("list-windows", "-t", f"={session}", "-F",
                       f"#{{window_id}}\t#{{window_name}}\t#{{{_TAG}}}")  # fmt: skip
    except PaneError:
        return {}
    rows = (line.split("\t") for line in out.splitlines() if line.strip())
    return {r[1]: (r[0], r[2] == "1") for r in rows if len(r) == 3}


def _open(tmux: TmuxBackend, session: str, name: str, command: str, root: Path,
          env: dict[str, str], *, new_session: bool) -> str:  # fmt: skip
    opts = ["-d", "-P", "-F", "#{window_id}", "-c", str(root)]
    for key, value in env.items():
        opts += ["-e", f"{key}={value}"]
    if new_session:
        window = tmux.run("new-session", *opts, "-s", session, "-n", name, command).strip()
        tmux.run("set-option", "-t", window, _SESSION_TAG, "1")  # the window's session
    else:
        window = tmux.run("new-window", *opts, "-t", f"={session}:", "-n", name, command).strip()
    tmux.run("set-option", "-w", "-t", window, _TAG, "1")
    return window


def up(root: Path, *, tmux_socket: str | None = None, lead: str | None = "claude",
       wait: float = 30.0) -> Report:  # fmt: skip
    """Start the server and the lead in the project's tmux session (idempotent).

    ``lead=None`` starts no lead window (e.g. a headless lead run elsewhere).
    """
    report = Report()
    require_tool("tmux")
    if lead is not None:
        require_tool(shlex.split(lead)[0])
    state = root / ".exomonad"
    if not (state / "config.toml").exists():
        raise ExomonadError(f"{root} is not set up for ExoMonad: run `exomonad init` there first")
    config = load_project_config(state)
    program = shlex.split(config.workers.command)[0]
    if shutil.which(program) is None:
        hint = INSTALL_HINTS.get(program, "install it, or fix PATH")
        report.warnings.append(f"workers will not start: {program} is not on PATH ({hint})")
    tmux = TmuxBackend(tmux_socket)
    session = config.workers.tmux_session
    windows = _windows(tmux, session)
    env = {k: v for k, v in os.environ.items()
           if k.startswith(PASSED_ENV) and k not in ("TMUX", "EXOMONAD_TOKEN")}  # fmt: skip
    env.update(PATH=f"{_exomonad_bin()}:{os.environ.get('PATH', '')}",
               EXOMONAD_DIR=str(state.resolve()))  # fmt: skip
    info = read_server_info(state)
    if info is None or not info.alive:
        serve = [sys.executable, "-I", "-m", "exomonad", "serve"]
        if tmux_socket:
            serve += ["--tmux-socket", tmux_socket]
        window = _open(tmux, session, "server", shlex.join(serve), root, env,
                       new_session=not windows)  # fmt: skip
        tmux.run("set-option", "-w", "-t", window, "remain-on-exit", "on")  # errors stay visible
        report.done.append(f"started the server in {session}:server")
        windows = _windows(tmux, session)
    else:
        window = None
    client = ServerClient(state, timeout=5)
    try:
        retry_until(lambda: _healthy(client) or _died(tmux, window), timeout=wait, interval=0.1)
    except WaitTimeout as exc:
        raise ExomonadError(f"the server did not answer /health within {wait:.0f}s: see "
                            f"`tmux attach -t {session}` (window server)") from exc  # fmt: skip
    if lead is not None and "lead" not in windows:
        _open(tmux, session, "lead", lead, root, env, new_session=False)
        report.done.append(f"started the lead ({lead}) in {session}:lead")
    report.data.update(
        session=session,
        tmux_socket=tmux_socket,
        server_pid=client.info().pid,
        windows=sorted(_windows(tmux, session)),
    )
    if not report.done:
        report.done.append("already up")
    return report


def _died(tmux: TmuxBackend, window: str | None) -> bool:
    """Raise with what the server printed if its window's process has exited."""
    if window is None or tmux.run("display-message", "-p", "-t", window,
                                  "#{pane_dead}").strip() != "1":  # fmt: skip
        return False
    shown = tmux.run("capture-pane", "-p", "-t", window).strip().splitlines()[-5:]
    raise ExomonadError("the server exited at start: " + " | ".join(shown))


def _healthy(client: ServerClient) -> bool:
    try:
        return client.health().get("status") == "ok"
    except ExomonadError:
        return False


def request_shutdown(paths: TeamPaths, name: str, lead: str) -> str:
    """Ask teammate ``name`` to shut down (the protocol's ``shutdown_request``)."""
    req = ShutdownRequest(request_id=f"shutdown-{now_iso()}@{name}", from_=lead,
                          timestamp=now_iso(), reason="exomonad down")  # fmt: skip
    Mailbox(paths).send(name, sender=lead, text=encode(req), check_member=False)
    return req.request_id


def _stop_workers(state: Path, config: ProjectConfig, report: Report, wait: float) -> None:
    lead = TokenStore(state).lead_path
    client = ServerClient(state, token=lead.read_text().strip() if lead.exists() else None)
    status = client.tool("team_status")
    team = str(status["team"])
    paths = TeamPaths(team)
    asked: list[str] = []
    for m in status["members"]:
        if m["backend"] == "exomonad":
            out = client.tool("remove_worker", {"name": m["name"]})
            report.done.append(str(out["message"]))
            wt = out.get("worktree")
            if isinstance(wt, dict) and not wt.get("removed"):
                report.warnings.append(str(wt["message"]))
        elif m.get("worker"):  # a teammate run by `exomonad teammate`: ask it
            request_shutdown(paths, m["name"], config.lead.name)
            asked.append(m["name"])
    try:
        retry_until(lambda: not any(_holds_token(client, n) for n in asked), timeout=wait,
                    interval=0.2)  # fmt: skip
        report.done.extend(f"{name} shut down" for name in asked)
    except WaitTimeout:
        late = [n for n in asked if _holds_token(client, n)]
        report.warnings.append(f"{', '.join(late)} did not answer a shutdown_request "
                               f"within {wait:.0f}s")  # fmt: skip
    removed = remove_all_synthetic(paths)
    if removed:
        report.done.append(f"removed members {', '.join(removed)}")


def _holds_token(client: ServerClient, name: str) -> bool:
    members = client.tool("team_status")["members"]
    return any(m["name"] == name and m.get("worker") for m in members)


def down(root: Path, *, tmux_socket: str | None = None, wait: float = 30.0) -> Report:
    """Shut the team down (see the module doc); safe to run when nothing is up."""
    report = Report()
    state = root / ".exomonad"
    config = load_project_config(state)
    info = read_server_info(state)
    if info is not None and info.alive:
        try:
            _stop_workers(state, config, report, wait)
        except ExomonadError as exc:
            report.warnings.append(f"workers: {exc}")
        os.kill(info.pid, signal.SIGTERM)
        try:
            retry_until(lambda: not info.alive, timeout=wait, interval=0.1)
        except WaitTimeout:
            os.kill(info.pid, signal.SIGKILL)
            report.warnings.append(f"the server (pid {info.pid}) ignored SIGTERM: killed")
        report.done.append(f"stopped the server (pid {info.pid})")
    TokenStore(state).clear()
    report.done.append("revoked every token")
    tmux = TmuxBackend(tmux_socket)
    for name, (window, ours) in _windows(tmux, config.workers.tmux_session).items():
        if ours:
            with contextlib.suppress(PaneError):  # e.g. the server's window closed with it
                tmux.run("kill-window", "-t", window)
            report.done.append(f"closed window {name}")
    return report
