"""Real parts for the live benchmarks: a private tmux server, an ``exomonad serve`` process,
worker tokens, HTTP over the server's Unix socket, and per-process CPU accounting.

Every process started here is stopped by its pid when its context manager exits; every
wait is on a condition (:func:`~exomonad.util.waiting.retry_until`), never a blind sleep.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchmarks._common import Settings
from exomonad.server.identity import Identity, TokenStore
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until

__all__ = [
    "ExoServer",
    "Tmux",
    "clean_env",
    "cpu_seconds",
    "cpu_times",
    "exomonad_server",
    "machine_cpu_seconds",
    "temp_root",
    "tmux_server",
    "uds_request",
    "verdict",
]

TMUX_WIDTH, TMUX_HEIGHT = 160, 48
CLK_TCK = os.sysconf("SC_CLK_TCK")


def verdict(target: str, ok: bool) -> str:
    """``target`` followed by a green ok or a red missed (rich markup)."""
    return f"{target} " + ("[green]ok[/]" if ok else "[bold red]missed[/]")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without agent/tmux variables, plus ``extra``.

    ``PYTHONDONTWRITEBYTECODE`` goes too: the processes measured here run with cached
    bytecode, as an installed ExoMonad does (an editable install's first run writes it);
    with that variable set, every hook process would compile ExoMonad's modules again
    (~12 ms of CPU each, measured).
    """
    drop = ("EXOMONAD_TOKEN", "TMUX", "TMUX_PANE", "EXOMONAD_DIR", "CLAUDE_CONFIG_DIR",
            "PYTHONDONTWRITEBYTECODE")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra)
    return env


def cpu_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of process ``pid`` so far (from ``/proc/<pid>/stat``)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # utime, stime (14, 15)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    return sum(cpu_times(pid))


def machine_cpu_seconds() -> float:
    """CPU seconds every core of the machine spent busy so far, all processes and the
    kernel's own work together (``/proc/stat``: user, nice, system, irq and softirq)."""
    with open("/proc/stat", encoding="ascii") as f:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / CLK_TCK


@contextmanager
def temp_root(settings: Settings, prefix: str = "exomonad-bench-") -> Iterator[Path]:
    """A temporary directory under ``settings.base_dir``, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=settings.base_dir))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- tmux --------------------------------------------------------------------------------


@dataclass
class Tmux:
    """A private tmux server (``tmux -L <socket>``)."""

    socket: str
    socket_path: Path

    def run(self, *args: str) -> str:
        """Run one tmux command on this server; return stdout (raise on failure)."""
        proc = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True, text=True, encoding="utf-8", check=False, timeout=10,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"tmux {args}: {proc.stderr.strip()}")
        return proc.stdout

    def new_pane(self, *command: str) -> str:
        """Run ``command`` in a new window of session ``main``; return its ``%N`` id."""
        return self.run(
            "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "--", *command
        ).strip()


@contextmanager
def tmux_server() -> Iterator[Tmux]:
    """A throwaway tmux server (160x48, no config file), killed and its socket unlinked."""
    if shutil.which("tmux") is None:
        raise RuntimeError("tmux is not installed: run `make setup`")
    name = f"exo-bench-{uuid.uuid4().hex[:12]}"
    subprocess.run(
        ["tmux", "-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "main",
         "-x", str(TMUX_WIDTH), "-y", str(TMUX_HEIGHT), "--", "sleep", "86400"],
        check=True, env=clean_env(), timeout=10,
    )  # fmt: skip
    # Where tmux puts -L sockets; asked from the server when it answers.
    fallback = Path(f"/tmp/tmux-{os.getuid()}") / name
    server = Tmux(name, fallback)
    try:
        server.socket_path = Path(server.run("display-message", "-p", "#{socket_path}").strip())
        yield server
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False,
                       timeout=10)  # fmt: skip
        server.socket_path.unlink(missing_ok=True)  # tmux 3.3 leaves the socket file behind
        fallback.unlink(missing_ok=True)


# -- the server --------------------------------------------------------------------------


def uds_request(
    sock: str | Path,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    timeout: float = 30.0,
) -> tuple[int, Any]:
    """One HTTP request over a Unix socket; (status, parsed JSON body)."""
    conn = http.client.HTTPConnection("localhost", timeout=timeout)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(sock))
        conn.sock = s
        headers = {"Content-Type": "application/json"}
        if token:
            headers["x-exomonad-token"] = token
        conn.request(method, path, body=orjson.dumps(body) if body is not None else None,
                     headers=headers)  # fmt: skip
        resp = conn.getresponse()
        return resp.status, orjson.loads(resp.read() or b"null")
    finally:
        conn.close()


@dataclass
class ExoServer:
    """A running ``python -m exomonad serve`` for a temporary project and team."""

    root: Path  # the Claude config root (CLAUDE_CONFIG_DIR)
    state: Path  # the project's .exomonad/ (EXOMONAD_DIR)
    team: str
    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    log: Path
    workers: dict[str, str] = field(default_factory=dict)  # worker name -> token

    @property
    def sock(self) -> Path:
        """The server's Unix socket."""
        return self.state / "server.sock"

    @property
    def lead_token(self) -> str:
        """The root lead's token (``lead.token``)."""
        return (self.state / "lead.token").read_text().strip()

    @property
    def paths(self) -> TeamPaths:
        """The team's paths."""
        return TeamPaths(self.team, self.root)

    def health(self) -> dict[str, Any]:
        """``GET /health``."""
        status, doc = uds_request(self.sock, "GET", "/health")
        if status != 200 or not isinstance(doc, dict):
            raise RuntimeError(f"/health answered {status}: {doc!r}")
        return doc

    def hook(self, event: str, payload: dict[str, Any], *, token: str | None,
             runtime: str = "claude") -> dict[str, Any]:  # fmt: skip
        """``POST /hook/<event>`` directly (no hook client process)."""
        status, doc = uds_request(self.sock, "POST", f"/hook/{event}?runtime={runtime}", payload,
                                  token=token)  # fmt: skip
        if status != 200 or not isinstance(doc, dict):
            raise RuntimeError(f"hook {event} answered {status}: {doc!r}")
        return doc

    def cpu_seconds(self) -> float:
        """The server process's CPU seconds so far."""
        return cpu_seconds(self.proc.pid)

    def log_tail(self, lines: int = 20) -> str:
        """The end of the server's stderr log."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _stop(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    if proc.poll() is not None:
        return
    with suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


@contextmanager
def exomonad_server(
    settings: Settings,
    *,
    team: str = "bench",
    workers: Sequence[str] = (),
    tmux_socket: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[ExoServer]:
    """A fresh project + team, worker tokens issued, and ``exomonad serve`` running on it.

    Workers are registered as synthetic members (no pane bound) and get ``worker``
    tokens (parent ``team-lead``) *before* the server starts, the way ``spawn_workers``
    would have left them. The lead's TeamCreate is posted as the PostToolUse hook, so
    the server's current team is ``team``. ``tmux_socket`` defaults to a name no server
    uses (nothing here needs a pane).
    """
    with temp_root(settings) as tmp:
        root, state = tmp / "claude", tmp / "proj" / ".exomonad"
        state.mkdir(parents=True)
        paths = TeamPaths(team, root)
        create_team(paths)
        store = TokenStore(state)
        tokens: dict[str, str] = {}
        for name in workers:
            register_synthetic(paths, name)
            tokens[name] = store.issue(Identity(name, "worker", team, "team-lead"))
        env = clean_env(
            CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
            EXOMONAD_LOCK_DIR=str(tmp / "locks"), EXOMONAD_SPOOL_DIR=str(tmp / "spool"),
            **(extra_env or {}),
        )  # fmt: skip
        log = tmp / "server.log"
        tmux = tmux_socket or f"exo-bench-unused-{uuid.uuid4().hex[:8]}"
        with log.open("wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", tmux],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                cwd=tmp / "proj",
            )  # fmt: skip
        server = ExoServer(root, state, team, env, proc, log, tokens)
        try:
            retry_until(lambda: _answers(server), timeout=30, interval=0.05,
                        message=f"exomonad serve did not start:\n{server.log_tail()}")  # fmt: skip
            server.hook("post-tool-use", {"session_id": "lead-bench", "tool_name": "TeamCreate",
                                          "tool_input": {"team_name": team}},
                        token=server.lead_token)  # fmt: skip
            if server.health().get("team") != team:
                raise RuntimeError("the server did not adopt the team from TeamCreate")
            yield server
        finally:
            _stop(proc)


def _answers(server: ExoServer) -> bool:
    if server.proc.poll() is not None:
        raise RuntimeError(f"exomonad serve exited {server.proc.returncode}:\n{server.log_tail()}")
    if not server.sock.exists():
        return False
    try:
        server.health()
    except (OSError, RuntimeError):
        return False
    return True
