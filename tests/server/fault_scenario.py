"""A fault-injection run with the real parts, for ``test_fault_injection.py`` and the soak.

One scratch project, one private tmux server, and all at once:

* ``exomonad serve`` (its inbox watcher runs inside it) delivering to synthetic workers
  whose tmux panes run ``tests/support/reader.py``, which records every line typed;
* ``exomonad teammate`` (Mode B) running its own watcher and a reader on a pty it owns;
* one Node ``writer.js`` per worker inbox and one for the teammate's (Claude Code's
  SendMessage write, with its lock settings), paced to write during the whole run;
* MCP clients (the ``mcp`` SDK over ``exomonad mcp-stdio``, worker tokens) calling
  ``notify_parent`` and ``send_message`` into the lead's inbox, which Node ``drain.js``
  polls as Claude Code's lead does (prune for 2.1.330, read flags for 2.1.112);

while the server (with its watcher) and the teammate (with its watcher and agent) are
SIGKILLed at set points of progress and started again, as a user would.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from exomonad.server.pidfile import server_request
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import WaitTimeout, retry_until
from tests.interop.peers import Peer, Style, drain, node_writer, start_together
from tests.server.fault_agents import Agents, Call
from tests.support.git import make_repo
from tests.support.tmux import READER, Reader, TmuxServer

__all__ = ["Load", "Outcome", "lead_texts", "run_faults"]

TEAM = "session-fault"
TEAMMATE = "gemini-tm"
LEAD = "team-lead"


@dataclass(frozen=True)
class Load:
    """How much runs and how often it is killed."""

    dialect: Style = "2.1.330"
    workers: int = 2  # synthetic members (tmux panes), served by the server's watcher
    per_writer: int = 100  # Node messages per worker inbox (the teammate gets half)
    writer_delay_ms: float = 120  # pacing of each Node writer (the teammate's: double)
    mcp_clients: int = 2
    mcp_pace: float = 0.1  # seconds between one MCP client's calls (load shaping)
    server_kills: int = 2
    teammate_kills: int = 1

    @property
    def teammate_share(self) -> int:
        """Node messages for the teammate (it types slower: Enter 0.12 s after the text)."""
        return self.per_writer // 2

    def share(self, target: str) -> int:
        """How many Node messages ``target`` (server or teammate) has to type."""
        return self.teammate_share if target == "teammate" else self.per_writer * self.workers

    def kills(self, target: str) -> int:
        """How often ``target`` is killed."""
        return self.teammate_kills if target == "teammate" else self.server_kills


@dataclass
class Outcome:
    """What a run measured; the test asserts on it."""

    load: Load
    elapsed: float = 0.0
    writers: dict[str, dict[str, Any]] = field(default_factory=dict)  # pane label → summary
    lines: dict[str, list[str]] = field(default_factory=dict)  # label → non-empty lines typed
    expected: dict[str, list[str]] = field(default_factory=dict)  # label → written, in order
    ledger_attempts: dict[str, int] = field(default_factory=dict)  # member → Σ (attempts - 1)
    calls: list[Call] = field(default_factory=list)
    lead_entries: list[dict[str, Any]] = field(default_factory=list)  # seen by the lead's poller
    drain: dict[str, Any] = field(default_factory=dict)
    health: list[dict[str, Any]] = field(default_factory=list)  # each server, before it ended
    kills: Counter[str] = field(default_factory=Counter)
    kills_while_writing: Counter[str] = field(default_factory=Counter)
    mcp_sessions: int = 0
    broken_sessions: list[str] = field(default_factory=list)
    inboxes: dict[str, Any] = field(default_factory=dict)  # file name → parsed JSON
    leftovers: list[str] = field(default_factory=list)  # lock dirs / temp files at the end
    left_locks: list[str] = field(default_factory=list)  # held by a process when killed
    final_server_exit: int | None = None
    server_stderr: list[str] = field(default_factory=list)


def _label(worker: int) -> str:
    return f"w{worker}"


class _Run:
    def __init__(self, tmp: Path, tmux: TmuxServer, load: Load) -> None:
        self.tmp, self.tmux, self.load = tmp, tmux, load
        self.root, self.project = tmp / "claude", tmp / "proj"
        self.state = self.project / ".exomonad"
        self.team = TeamPaths(TEAM, self.root)
        self.out = Outcome(load)
        self.agents: Agents | None = None
        self.abort = threading.Event()
        self.restarting = threading.Lock()
        self.writers: dict[str, Peer] = {}
        self.servers: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.teammates: list[subprocess.Popen[bytes]] = []
        self.readers: dict[str, Reader] = {}
        #: lines typed by the server / teammate when it was last (re)started
        self.started_at: dict[str, int] = {"server": 0, "teammate": 0}
        self.teammate_out = tmp / "teammate.jsonl"
        self.peers: list[Peer] = []
        self._files: list[IO[bytes]] = []
        env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
        env.update(
            CLAUDE_CONFIG_DIR=str(self.root),
            EXOMONAD_DIR=str(self.state),
            EXOMONAD_ENTER_DELAY="0.01",
            EXOMONAD_LOCK_DIR=str(tmp / "pane-locks"),
            EXOMONAD_SPOOL_DIR=str(tmp / "spool"),
            EXOMONAD_CLAUDE_DIALECT=load.dialect,
        )
        self.env = env

    # -- the project ---------------------------------------------------------------------

    def setup(self) -> None:
        make_repo(self.project)
        self.state.mkdir(parents=True)
        (self.state / "config.toml").write_text(
            "[lead]\npoll_grace = 0\n[policy]\npopup = false\n[workers]\nallow_ungated = true\n"
            '[[teammate.routes]]\nagent_type = "gemini*"\nruntime = "terminal"\n'
            f'command = "{sys.executable} {READER} {self.teammate_out}"\n'
            'ready_marker = "ready>"\n'
        )
        create_team(self.team)
        for i in range(self.load.workers):
            reader = self.tmux.reader(_label(i))
            self.readers[_label(i)] = reader
            register_synthetic(self.team, _label(i), pane=reader.pane)
        # Claude Code registers a teammate it spawns itself (not a synthetic member).
        cfg = orjson.loads(self.team.config_file.read_bytes())
        cfg["members"].append(
            {
                "agentId": f"{TEAMMATE}@{TEAM}",
                "name": TEAMMATE,
                "agentType": "gemini-worker",
                "backendType": "tmux",
                "tmuxPaneId": "%99",
                "joinedAt": 1,
                "cwd": str(self.project),
            }
        )
        self.team.config_file.write_bytes(orjson.dumps(cfg))

    def _log(self, name: str) -> IO[bytes]:
        fh = open(self.tmp / name, "wb")  # noqa: SIM115 - closed in close()
        self._files.append(fh)
        return fh

    # -- the server ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        _, data = server_request(str(self.state / "server.sock"), "GET", "/health", timeout=10)
        assert isinstance(data, dict)
        return data

    def start_server(self) -> None:
        err = self.tmp / f"serve-{len(self.servers)}.err"
        proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "serve", "--tmux-socket", self.tmux.socket],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log(err.name),
        )
        self.servers.append((proc, err))

        def up() -> bool:
            if proc.poll() is not None:
                raise AssertionError(
                    f"exomonad serve exited {proc.returncode}: {err.read_text(errors='replace')}"
                )
            try:
                return bool(self.health()["pid"] == proc.pid)
            except Exception:
                return False

        retry_until(up, timeout=60, interval=0.05, message="the server did not come up")
        self.started_at["server"] = self.delivered("server")

    def kill_server(self) -> None:
        proc, _ = self.servers[-1]
        self.out.health.append(self.health())
        self._kill(proc, "server")
        self.start_server()

    def _kill(self, proc: subprocess.Popen[bytes], target: str) -> None:
        """SIGKILL; note the inbox locks the dead process held (its lock journal)."""
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        self.out.kills[target] += 1
        for entry in (self.state / "locks-held").glob(f"{proc.pid}-*"):
            record = entry.read_text()
            if not record:  # a journal file kept for the next lock: it held none
                continue
            lock = Path(record.split("\n")[0])
            if lock.is_dir():
                self.out.left_locks.append(lock.name)

    def token(self, name: str) -> str:
        status, answer = server_request(
            str(self.state / "server.sock"), "POST", "/teammate/token", {"name": name, "team": TEAM}
        )
        assert status == 200, answer
        return str(answer["token"])

    # -- the teammate --------------------------------------------------------------------

    def start_teammate(self) -> None:
        # Claude Code's teammate command line (see docs/claude-teams-protocol.md).
        args = (
            f"--agent-id {TEAMMATE}@{TEAM} --agent-name {TEAMMATE} --team-name {TEAM} "
            "--agent-color blue --parent-session-id p1 --agent-type gemini-worker "
            "--dangerously-skip-permissions"
        ).split()
        proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "teammate", *args],
            env=self.env,
            cwd=self.project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log(f"teammate-{len(self.teammates)}.err"),
        )
        self.teammates.append(proc)

    def kill_teammate(self) -> None:
        self._kill(self.teammates[-1], "teammate")
        self.start_teammate()

    def _teammate_started(self) -> int:
        """How many teammate agents (readers on their pty) have come up so far."""
        return sum(1 for r in Reader("pty", self.teammate_out).records() if "event" in r)

    def wait_teammate(self) -> None:
        """Until the newest teammate got its token and started its agent. Restarts happen
        one at a time, so a teammate never asks a server that is being killed for its
        token (not what this run tests)."""
        proc = self.teammates[-1]

        def up() -> bool:
            if proc.poll() is not None:
                err = (self.tmp / f"teammate-{len(self.teammates) - 1}.err").read_text()
                raise AssertionError(f"exomonad teammate exited {proc.returncode}: {err}")
            return self._teammate_started() >= len(self.teammates)

        retry_until(up, timeout=60, interval=0.02, message="the teammate did not start")
        self.started_at["teammate"] = self.delivered("teammate")

    def teammate_lines(self) -> list[str]:
        return Reader("pty", self.teammate_out).lines()

    # -- the run -------------------------------------------------------------------------

    def delivered(self, target: str) -> int:
        """Lines typed so far by ``target``: the server (into the workers' panes) or the
        teammate (into its agent's pty)."""
        if target == "teammate":
            return len(self.teammate_lines())
        return sum(len(r.lines()) for r in self.readers.values())

    def run(self) -> Outcome:
        load, started = self.load, time.monotonic()
        self.setup()
        self.start_server()
        tokens = [self.token(f"mcp-{i}") for i in range(load.mcp_clients)]
        self.start_teammate()
        self.wait_teammate()
        stop_file = self.tmp / "drain.stop"
        drained = self.tmp / "drained.jsonl"
        mode: Literal["flag", "prune"] = "flag" if load.dialect == "2.1.112" else "prune"
        poller = drain(self.team.inbox(LEAD), mode, 100, drained, stop_file)
        self.peers.append(poller)
        # Claude Code's SendMessage into each inbox; the teammate types slower, so half.
        writers = {label: self._writer(label) for label in [*self.readers, "pty"]}
        self.peers += writers.values()
        agents = self.agents = Agents(tokens, self.env, self._log, pace=load.mcp_pace)
        agents.start()
        start_together(writers.values())
        self.writers = writers
        with ThreadPoolExecutor(2) as pool:  # each target on its own schedule
            killers = [pool.submit(self._killer, target) for target in ("server", "teammate")]
            try:
                for killer in killers:
                    killer.result()
            finally:
                self.abort.set()  # a failed killer stops the other
        for label, peer in writers.items():
            self.out.writers[label] = peer.result(600)
        agents.stop()
        self.out.calls, self.out.mcp_sessions = agents.calls, agents.sessions
        self.out.broken_sessions = agents.broken
        self._expect()
        try:
            retry_until(self._all_delivered, timeout=180, interval=0.1)
        except WaitTimeout:
            lines = self._lines()
            missing = {k: sorted(set(v) - set(lines[k]))[:5] for k, v in self.out.expected.items()}
            raise AssertionError(f"not every written message reached its pane: {missing}") from None
        stop_file.touch()
        self.out.drain = poller.result(60)
        self.out.lead_entries = [
            orjson.loads(x)["entry"] for x in drained.read_bytes().splitlines() if x.strip()
        ]
        self._finish()
        self.out.elapsed = time.monotonic() - started
        return self.out

    def _writer(self, label: str) -> Peer:
        load, pty = self.load, label == "pty"
        return node_writer(
            self.team.inbox(TEAMMATE if pty else label),
            LEAD,
            load.teammate_share if pty else load.per_writer,
            load.dialect,
            delay_ms=load.writer_delay_ms * (2 if pty else 1),
            wait=True,
            prefix=TEAMMATE if pty else label,
        )

    def _killer(self, target: str) -> None:
        """Kill ``target`` (server or teammate) at even steps of the share of its messages
        it has typed, each time once it typed a line since it was last started (so it is
        delivering, not still starting) or its writers are done; one restart at a time."""
        labels = ["pty"] if target == "teammate" else [_label(i) for i in range(self.load.workers)]
        kills = self.load.kills(target)
        for n in range(kills):
            due = self._due(target, (n + 1) * self.load.share(target) // (kills + 1), labels)
            retry_until(
                due,
                timeout=300,
                interval=0.02,
                message=f"the {target} stopped delivering before its kill",
            )
            with self.restarting:
                if self._writing(labels):
                    self.out.kills_while_writing[target] += 1
                if target == "server":
                    self.kill_server()
                else:
                    self.kill_teammate()
                    self.wait_teammate()

    def _writing(self, labels: list[str]) -> bool:
        return any(self.writers[x].proc.poll() is None for x in labels)

    def _due(self, target: str, want: int, labels: list[str]) -> Callable[[], bool]:
        """When ``target`` is to be killed: it typed ``want`` lines, and a line since it
        was last started unless its writers are done (then it may have nothing left)."""

        def due() -> bool:
            if self.abort.is_set():
                raise AssertionError(f"stopped before killing the {target}")
            done = self.delivered(target)
            fresh = done > self.started_at[target] or not self._writing(labels)
            return done >= want and fresh

        return due

    def _expect(self) -> None:
        for label, summary in self.out.writers.items():
            prefix = TEAMMATE if label == "pty" else label
            count = self.load.teammate_share if label == "pty" else self.load.per_writer
            dropped = set(summary["failed"])  # Claude Code drops on lock exhaustion
            self.out.expected[label] = [
                f"[from {LEAD}] {prefix}#{i}" for i in range(count) if i not in dropped
            ]

    def _lines(self) -> dict[str, list[str]]:
        lines = {label: r.lines() for label, r in self.readers.items()}
        lines["pty"] = self.teammate_lines()
        # A recovery Enter may submit an empty input line: not a message.
        return {label: [x for x in got if x] for label, got in lines.items()}

    def _all_delivered(self) -> bool:
        lines = self._lines()
        return all(set(want) <= set(lines[label]) for label, want in self.out.expected.items())

    def _finish(self) -> None:
        out = self.out
        out.lines = self._lines()
        out.health.append(self.health())
        proc, _ = self.servers[-1]
        proc.send_signal(signal.SIGTERM)
        out.final_server_exit = proc.wait(60)
        self.teammates[-1].send_signal(signal.SIGTERM)
        self.teammates[-1].wait(30)
        out.server_stderr = [err.read_text(errors="replace") for _, err in self.servers]
        db = sqlite3.connect(self.state / "ledger.db")
        try:
            rows = db.execute("SELECT member, SUM(attempts - 1) FROM deliveries GROUP BY member")
            out.ledger_attempts = {str(m): int(n) for m, n in rows}
        finally:
            db.close()
        for path in sorted(self.team.inboxes_dir.iterdir()):
            if path.name.endswith(".json"):
                out.inboxes[path.name] = orjson.loads(path.read_bytes())
            else:
                out.leftovers.append(path.name)

    def close(self) -> None:
        if self.agents is not None:
            self.agents.stop()
        for proc in [*(p for p, _ in self.servers), *self.teammates]:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        for peer in self.peers:
            peer.kill()
        for fh in self._files:
            fh.close()


def run_faults(tmp: Path, tmux: TmuxServer, load: Load) -> Outcome:
    """Run the scenario (see the module doc); every process it started is gone after."""
    run = _Run(tmp, tmux, load)
    try:
        return run.run()
    finally:
        run.close()


def lead_texts(out: Outcome) -> Counter[str]:
    """How many times each text reached the lead's poller."""
    return Counter(str(e.get("text")) for e in out.lead_entries)
