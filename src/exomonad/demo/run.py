"""``exomonad demo``: set the stage, play the scene, print the timeline, clean up (or keep).

Exit code 0 only when every hop happened (and origin's ``main`` did not move); 1 with
the missing hop named otherwise, or when something needed is not installed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console
from rich.markup import escape

from exomonad.client import ServerClient
from exomonad.clis.claude import CLAUDE_330
from exomonad.clis.codex import codex_install_problem, kill_codex_processes
from exomonad.clis.gemini import gemini_install_problem
from exomonad.demo import live
from exomonad.demo.play import Scene, play
from exomonad.demo.stage import Stage, build_stage, open_models
from exomonad.demo.timeline import Hop, Timeline
from exomonad.errors import ExomonadError, PaneError
from exomonad.panes import TmuxBackend
from exomonad.util.probe import Probe

__all__ = ["Options", "Result", "attach_command", "install_problems", "run_demo"]


@dataclass(frozen=True)
class Options:
    """What ``exomonad demo`` was asked for."""

    keep: bool = False  # leave the tmux session and the server running
    live: bool = False  # the real models (API keys from the environment)
    timeout: float = 90.0  # seconds each hop may take
    root: Path | None = None  # the scratch directory (default: a new temp dir)


@dataclass
class Result:
    """How the demo went."""

    code: int
    timeline: Timeline
    error: str = ""
    stage: Stage | None = None
    elapsed: float = 0.0  # seconds the scene took (set-up and clean-up not counted)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "ok": self.code == 0,
            "error": self.error,
            "elapsed": round(self.elapsed, 3),
            "hops": self.timeline.to_json(),
        }
        if self.stage is not None:
            out.update(
                root=str(self.stage.root),
                tmux_socket=self.stage.socket,
                attach=attach_command(self.stage),
            )
        return out


def install_problems() -> list[str]:
    """What is missing to run the demo (each with how to install it)."""
    found = [CLAUDE_330.install_problem(), gemini_install_problem(), codex_install_problem()]
    found += [
        f"{tool} is not on PATH: `make setup` installs it (apt-get install {tool})"
        for tool in ("tmux", "git")
        if shutil.which(tool) is None
    ]
    return [p for p in found if p]


def attach_command(stage: Stage) -> str:
    """The command that attaches to the demo's tmux session."""
    return f"tmux -L {stage.socket} attach -t {stage.session}"


def stop_command(stage: Stage) -> str:
    """What ends a kept demo: ``exomonad down`` (it closes the windows ``up`` opened, and
    the tmux server goes with its last one), then the tmux server if anything is left,
    and the socket file tmux leaves behind."""
    env = " ".join(f"{k}={shlex.quote(stage.env[k])}" for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"))
    exo = shlex.quote(str(stage.bin_dir / "exomonad"))
    tail = f"tmux -L {stage.socket} kill-server 2>/dev/null"
    if stage.socket_path is not None:
        tail += f"; rm -f {shlex.quote(str(stage.socket_path))}"
    down = f"{env} {exo} down --tmux-socket {stage.socket}"
    return f"cd {shlex.quote(str(stage.project))} && {down} && ({tail}; true)"


def teardown(stage: Stage) -> list[str]:
    """``exomonad down`` (workers shut down through the protocol, server stopped; the tmux
    server exits with the last window ``up`` opened), then whatever is left of the tmux
    server (its socket file too) and what Codex leaves running; returns what went wrong."""
    problems = []
    done = stage.exo("down", "--tmux-socket", stage.socket)
    if done.returncode != 0:
        problems.append(f"exomonad down: {done.stderr.strip()}")
    with contextlib.suppress(PaneError):  # gone with its last window
        TmuxBackend(stage.socket).run("kill-server")
    if stage.socket_path is not None:
        stage.socket_path.unlink(missing_ok=True)
    kill_codex_processes(stage.codex)
    return problems


def _echo(console: Console) -> Any:
    def echo(timeline: Timeline, hop: Hop) -> None:
        t, chain, label, latency = timeline.row(hop)
        console.print(f"  {t}  [cyan]{chain:<16}[/cyan] {label}  [dim]{latency}[/dim]")

    return echo


def _serve_until_stopped(console: Console, stage: Stage) -> None:
    """Say how to attach and how to stop; serve the models until Ctrl-C (or SIGTERM)."""
    stopped = threading.Event()

    def stop(_sig: int, _frame: FrameType | None) -> None:
        stopped.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        console.print(
            "The team stays up. The models answer from this process: Ctrl-C stops them "
            f"(the tmux session and the server stay up).\n{_dashboard(stage)}\n"
            f"attach: {attach_command(stage)}\nstop:   {stop_command(stage)}"
        )
        while not stopped.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _dashboard(stage: Stage) -> str:
    """The dashboard's line: its URL (the server's loopback listener, a one-time token:
    this process is the person's), or why there is none."""
    try:
        opened = ServerClient(stage.state, timeout=30).call("POST", "/dashboard/api/open", {})
    except ExomonadError as exc:
        return f"dashboard: not available ({exc})"
    return f"dashboard: {opened['url']}"


def _report(result: Result, console: Console) -> None:
    console.print(result.timeline.table())
    if result.code == 0:
        hops = len(result.timeline.hops)
        console.print(f"[green]all {hops} hops happened[/green] ({result.elapsed:.1f}s)")
    else:
        console.print(f"[red]{escape(result.error)}[/red]")


def run_demo(opts: Options, console: Console) -> Result:
    """The demo; see the module doc. ``ExomonadError`` for what prevents it from starting
    (``--live`` without keys, a CLI not installed)."""
    keys = live.live_keys(os.environ) if opts.live else None
    problems = install_problems()
    if problems:
        raise ExomonadError("cannot run the demo:\n  " + "\n  ".join(problems))
    root = opts.root or Path(tempfile.mkdtemp(prefix="exomonad-demo-"))
    result = Result(1, Timeline(echo=_echo(console)))
    with open_models(keys, os.environ) as models, Probe() as probe:
        stage = result.stage = build_stage(root, models, keys)
        mode = "the real models" if keys else "scripted models (offline, no API key)"
        console.print(
            f"[bold]exomonad demo[/bold]: Claude Code 2.1.330 leads a Gemini CLI and a Codex "
            f"CLI worker, on {mode}.\nproject: {stage.project}\nwatch it: {attach_command(stage)}"
        )
        scene = Scene(stage, models, result.timeline, probe, console, opts.timeout)
        result.timeline.started = time.monotonic()
        try:
            play(scene)
            result.code = 0
        except ExomonadError as exc:  # MissingHop among them
            result.error = str(exc)
        finally:
            result.elapsed = (
                time.monotonic() - result.timeline.started
            )  # an interrupt too: the team goes (unless asked to keep it)
            if not opts.keep:
                for problem in teardown(stage):
                    console.print(f"[yellow]{escape(problem)}[/yellow]")
        _report(result, console)
        if opts.keep:
            _serve_until_stopped(console, stage)
            return result
    if result.code == 0 and opts.root is None:
        shutil.rmtree(root, ignore_errors=True)
    else:
        console.print(f"files kept in {root}")
    return result
