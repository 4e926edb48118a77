"""Seeing the team on a real ``exomonad serve``: a scripted team (a worker pane in tmux,
Claude Code's writes by a real Node writer with its lock settings, the worker's
``exomonad notify`` and hooks through the real clients) shows on ``/events`` and in
``exomonad status``; a worker cannot read the stream; a client that stops reading
stalls nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.client import ServerClient, ServerError
from exomonad.errors import ExomonadError
from exomonad.server.events import SseMessage
from exomonad.teams import TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until
from tests.interop.peers import node_writer
from tests.support.git import make_repo
from tests.support.served import worker_token
from tests.support.tmux import Reader, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@dataclass
class Team:
    root: Path
    state: Path
    env: dict[str, str]
    proc: subprocess.Popen[str]
    reader: Reader
    worker: str  # w1's token

    @property
    def paths(self) -> TeamPaths:
        return TeamPaths("proj", self.root)

    def lead(self) -> ServerClient:
        return ServerClient.as_lead(self.state, timeout=120)

    def run(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        """``exomonad ARGS`` (as worker ``token`` if given, else as a person)."""
        env = {**self.env, **({"EXOMONAD_TOKEN": token} if token else {})}
        return subprocess.run([sys.executable, "-m", "exomonad", *args], env=env, text=True,
                              capture_output=True, timeout=120, check=False)  # fmt: skip

    def hook(self, event: str, payload: dict[str, Any], runtime: str = "gemini") -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "exomonad", "hook", event, "--runtime", runtime],
            input=orjson.dumps(payload).decode(), capture_output=True, text=True, timeout=60,
            env={**self.env, "EXOMONAD_TOKEN": self.worker}, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return orjson.loads(done.stdout) if done.stdout.strip() else {}

    def status(self) -> dict[str, Any]:
        done = self.run("status", "--json")
        assert done.returncode == 0, done.stderr
        doc: dict[str, Any] = orjson.loads(done.stdout)
        return doc

    def member(self, name: str) -> dict[str, Any]:
        [team] = [t for t in self.status()["teams"] if t["name"] == "proj"]
        [row] = [m for m in team["members"] if m["name"] == name]
        found: dict[str, Any] = row
        return found


@dataclass
class Tap:
    """An SSE client of ``/events`` reading on a thread until the stream ends."""

    client: ServerClient
    items: list[SseMessage] = field(default_factory=list)
    error: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()
        retry_until(lambda: bool(self.items) or bool(self.error), timeout=30,
                    message="no hello on /events")  # fmt: skip
        assert not self.error, self.error
        assert self.items[0].event == "hello"

    def _read(self) -> None:
        try:
            with self.client.events(since=0) as stream:
                self.items.extend(stream)
        except ExomonadError as exc:
            self.error.append(str(exc))

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [orjson.loads(m.data) for m in list(self.items) if m.event == kind]

    def wait(self, kind: str, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        retry_until(lambda: any(match(e) for e in self.events(kind)), timeout=60,
                    message=f"no matching {kind} event in {self.events(kind)}")  # fmt: skip
        return next(e for e in self.events(kind) if match(e))

    def wait_texts(self, kind: str, texts: list[str]) -> dict[str, dict[str, Any]]:
        """Wait for a ``kind`` event carrying each of ``texts``; them by text."""

        def seen() -> dict[str, dict[str, Any]]:
            return {e["text"]: e for e in self.events(kind) if e["text"] in texts}

        retry_until(lambda: len(seen()) == len(texts), timeout=60,
                    message=f"{kind} events for {texts}: only {list(seen())}")  # fmt: skip
        return seen()


def _start(tmp: Path, tmux: TmuxServer, **extra_env: str) -> Iterator[Team]:
    root, state = tmp / "claude", tmp / "proj" / ".exomonad"
    make_repo(tmp / "proj")
    state.mkdir(parents=True)
    paths = TeamPaths("proj", root)
    create_team(paths)
    reader = tmux.reader("w1")
    register_synthetic(paths, "w1", agent_type="gemini", pane=reader.pane)
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state), EXOMONAD_ENTER_DELAY="0.01",
               COLUMNS="160",
               EXOMONAD_LOCK_DIR=str(tmp / "locks"), EXOMONAD_SPOOL_DIR=str(tmp / "spool"),
               **extra_env)  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "exomonad", "serve", "--tmux-socket",
                             tmux.socket], env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        worker = worker_token(state, pid=os.getpid())  # this process: w1's teammate
        yield Team(root, state, env, proc, reader, worker)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err  # event streams end cleanly with the server


@pytest.fixture
def team(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Team]:
    yield from _start(tmp_path, tmux_server)


def test_a_worker_token_cannot_read_the_event_stream(team: Team) -> None:
    as_worker = ServerClient(team.state, token=team.worker)
    with pytest.raises(ServerError, match="other agents' messages"), as_worker.events(since=0):
        pass
    status, body = as_worker.request("GET", "/status")
    assert status == 403, body
    done = team.run("status", "--watch", token=team.worker)  # its own shell: lead.token is
    assert done.returncode == 1  # readable, but from inside a worker's session it is not
    assert "needs the lead's token" in done.stderr  # the lead's (SO_PEERCRED)


def test_a_scripted_team_shows_on_events_and_in_status(team: Team) -> None:
    tap = Tap(team.lead())
    tap.wait("presence", lambda e: (e["member"], e["source"]) == ("w1", "provisioned"))
    # The lead's SendMessage, written by Node with Claude Code's lock settings.
    writer = node_writer(team.paths.inbox("w1"), "team-lead", 3, "2.1.330", prefix="task")
    assert writer.result()["written"] == 3
    assert team.reader.wait_lines(3, timeout=60) == [f"[from team-lead] task#{i}"
                                                     for i in range(3)]  # fmt: skip
    for got in tap.wait_texts("message_in", [f"task#{i}" for i in range(3)]).values():
        assert (got["sender"], got["to"], got["team"], got["pane"]) == (
            "team-lead", "w1", "proj", team.reader.pane)  # fmt: skip
    delivered = [i for e in tap.events("delivery") for i in e["message_ids"]]
    assert len(delivered) == 3
    # The worker reports back (notify_parent through `exomonad notify`).
    done = team.run("notify", "parser done", token=team.worker)
    assert done.returncode == 0, done.stderr
    out = tap.wait("message_out", lambda e: e["sender"] == "w1")
    assert (out["to"], out["text"]) == ("team-lead", "[from: w1] success: parser done")
    tap.wait("policy_decision", lambda e: (e["agent"], e["tool"], e["decision"]) == (
        "w1", "notify_parent", "allow"))  # fmt: skip
    assert team.member("w1")["presence"] == "active"
    # A policy decision from the worker's hook: a force push to main is denied.
    push = {"session_id": "w1-s", "tool_name": "run_shell_command",
            "tool_input": {"command": "git push --force origin main"}, "cwd": "/tmp"}  # fmt: skip
    assert team.hook("before-tool", push)["decision"] == "deny"
    denied = tap.wait("policy_decision", lambda e: e["decision"] == "deny")
    assert (denied["agent"], denied["runtime"], denied["tool"]) == (
        "w1", "gemini", "run_shell_command")  # fmt: skip
    # The end of its turn: idle (event and status), then it leaves: terminated.
    team.hook("after-agent", {"session_id": "w1-s"})
    tap.wait("presence", lambda e: (e["member"], e["state"]) == ("w1", "idle"))
    row = team.member("w1")
    assert {k: row[k] for k in ("presence", "kind", "runtime", "pane", "worker")} == {
        "presence": "idle", "kind": "synthetic", "runtime": "gemini",
        "pane": team.reader.pane, "worker": True}  # fmt: skip
    ServerClient(team.state, token=team.worker).call("POST", "/teammate/release")
    tap.wait("presence", lambda e: (e["member"], e["state"]) == ("w1", "terminated"))
    assert team.member("w1")["presence"] == "terminated"
    human = team.run("status")
    assert human.returncode == 0, human.stderr
    assert "w1" in human.stdout
    assert "TERMINATED" in human.stdout
    seqs = [int(m.id) for m in tap.items if m.id is not None]
    assert seqs == sorted(set(seqs))  # in order, none twice
    assert not tap.events("gap")


def test_status_watch_redraws_on_events_and_ends_with_the_server(team: Team) -> None:
    watch = subprocess.Popen([sys.executable, "-m", "exomonad", "status", "--watch", "--json"],
                             env=team.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    lines: list[dict[str, Any]] = []
    threading.Thread(target=lambda: lines.extend(orjson.loads(x) for x in watch.stdout or []),
                     daemon=True).start()  # fmt: skip

    def lead_unread() -> list[int]:
        return [m["unread"] for doc in list(lines) for t in doc["teams"]
                for m in t["members"] if m["name"] == "team-lead"]  # fmt: skip

    retry_until(lambda: bool(lead_unread()), timeout=60, message="no first snapshot")
    assert lead_unread()[-1] == 0
    assert team.run("notify", "done", token=team.worker).returncode == 0
    retry_until(lambda: lead_unread()[-1] == 1, timeout=60,
                message=f"no redraw after the event: {lead_unread()}")  # fmt: skip
    team.proc.send_signal(signal.SIGTERM)
    team.proc.wait(timeout=60)  # it stops though a client follows its events
    _, err = watch.communicate(timeout=60)
    assert watch.returncode == 1
    assert "closed the event stream" in err or "broke off" in err, err


def test_status_without_a_server_says_so(tmp_path: Path) -> None:
    state = tmp_path / ".exomonad"
    state.mkdir()
    env = {**os.environ, "EXOMONAD_DIR": str(state)}
    env.pop("EXOMONAD_TOKEN", None)
    done = subprocess.run([sys.executable, "-m", "exomonad", "status"], env=env, text=True,
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1
    assert "no server running" in done.stdout


@pytest.fixture
def small_queues(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Team]:
    yield from _start(tmp_path, tmux_server, EXOMONAD_EVENTS_QUEUE="64")


def test_a_client_that_stops_reading_does_not_stall_delivery(small_queues: Team) -> None:
    team = small_queues
    token = (team.state / "lead.token").read_text().strip()
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(str(team.state / "server.sock"))
    stalled.sendall(f"GET /events HTTP/1.1\r\nHost: localhost\r\nx-exomonad-token: {token}"
                    "\r\n\r\n".encode())  # fmt: skip  # ...and never reads a byte
    lead = team.lead()

    def subscribers() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = lead.health()["services"]["events"]["subscribers"]
        return found

    retry_until(lambda: len(subscribers()) == 1, timeout=30, message="stalled client not in")
    # A flood of big events (a task with a 4 KiB description is a 4 KiB event): more than
    # the socket buffers and the stalled client's queue hold.
    for i in range(300):
        lead.tool("task_create", {"subject": f"t{i}", "description": "x" * 4096})
    retry_until(lambda: any(s["dropped"] > 0 for s in subscribers()), timeout=60,
                message=f"the stalled client never fell behind: {subscribers()}")  # fmt: skip
    tap = Tap(lead)
    writer = node_writer(team.paths.inbox("w1"), "team-lead", 20, "2.1.330", prefix="m")
    assert writer.result()["written"] == 20
    want = [f"[from team-lead] m#{i}" for i in range(20)]
    assert team.reader.wait_lines(20, timeout=120) == want  # delivery went on
    tap.wait_texts("message_in", [f"m#{i}" for i in range(20)])
    stalled_dropped = max(s["dropped"] for s in subscribers())
    assert stalled_dropped > 0
    stalled.close()  # the server notices the hang-up and forgets it
    retry_until(lambda: len(subscribers()) == 1, timeout=60,
                message=f"the stalled client is still subscribed: {subscribers()}")  # fmt: skip
    health = lead.health()["services"]["events"]
    assert health["dropped"] >= stalled_dropped
