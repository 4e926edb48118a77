"""Human escalation through a real tmux popup, answered by typing into the tmux client."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.panes import TmuxBackend
from exomonad.policy import Allow, ApprovalStore, Deny, PolicyEngine, ToolRequest
from exomonad.server.identity import Identity
from exomonad.server.permissions import Gatekeeper
from exomonad.util.waiting import retry_until
from tests.support.gate import worker_gate
from tests.support.tmux import TmuxServer, kill_server, run_tmux

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


class Client:
    """An attached tmux client on a pseudo-terminal we can type into and read from."""

    def __init__(self, server: TmuxServer) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"TERM": "xterm-256color"}
        self.proc = subprocess.Popen(
            ["tmux", "-L", server.socket, "attach", "-t", "main"],
            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.screen = b""

    def read(self) -> str:
        while select.select([self.master], [], [], 0)[0]:
            try:
                self.screen += os.read(self.master, 65536)
            except OSError:
                break
        return self.screen.decode("utf-8", "replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(5)
        os.close(self.master)


@pytest.fixture
def client(tmux_server: TmuxServer) -> Iterator[Client]:
    c = Client(tmux_server)
    retry_until(lambda: tmux_server.tmux("list-clients").strip() != "", timeout=10)
    yield c
    c.close()


def test_popup_approval(tmux_server: TmuxServer, client: Client, tmp_path: Path) -> None:
    state = tmp_path / ".exomonad"
    approvals = ApprovalStore(state / "approvals.db")
    gate = Gatekeeper(
        PolicyEngine.for_project(state, audit=False),
        approvals,
        timeout=60,
        on_timeout="deny",
        backend=TmuxBackend(tmux_server.socket),
        popup=True,
    )
    lead = Identity("team-lead", "tl")
    req = ToolRequest("claude", role="tl", agent="team-lead", tool_name="Bash",
                      tool_input={"command": "fly deploy"}, cwd=str(tmp_path))  # fmt: skip
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(v=gate.check(req, lead, None)))
    t.start()
    retry_until(lambda: "approve?" in client.read(), timeout=45,
                message="the popup never showed the question")  # fmt: skip
    screen = client.read()
    assert "team-lead" in screen
    assert "deploy" in screen
    client.type("y\r")
    t.join(30)
    verdict = result["v"]
    assert isinstance(verdict.decision, Allow), verdict
    record = approvals.get(verdict.approval_id)
    assert record.state == "approved"  # a time-out would have denied (on_timeout="deny")
    approvals.close()


def test_the_popup_shows_a_padded_calls_delete_next_to_the_question(
    tmux_server: TmuxServer, tmp_path: Path
) -> None:
    """Found probing: ``rm -rf ../../src; true '<20000 spaces>'; sudo apt-get install -y
    jq`` in a 200x50 client's popup showed blank lines and the ``sudo``'s JSON above
    ``approve?``; the delete had scrolled off (no scrollback) and ``y`` ran it. Here the
    client runs in a pane of a second tmux server, whose screen is what a person sees."""
    outer = f"exo-out-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"TERM": "xterm-256color"}
    subprocess.run(["tmux", "-L", outer, "-f", "/dev/null", "new-session", "-d", "-s", "o",
                    "-x", "200", "-y", "50", "--", "env", "-u", "TMUX", "tmux", "-L",
                    tmux_server.socket, "attach", "-t", "main"],
                   check=True, env=env, timeout=10)  # fmt: skip
    store: ApprovalStore | None = None
    t: threading.Thread | None = None
    try:
        retry_until(lambda: tmux_server.tmux("list-clients").strip() != "", timeout=10)
        wg = worker_gate(tmp_path, backend=TmuxBackend(tmux_server.socket), popup=True)
        root, store = wg.root, wg.store
        command = f"rm -rf ../../src; true '{' ' * 20000}'; sudo apt-get install -y jq"
        req = wg.request("Bash", {"command": command})
        result: dict[str, Any] = {}
        who = Identity("w1", "worker")
        t = threading.Thread(target=lambda: result.update(v=wg.gate.check(req, who, None)))
        t.start()

        def screen() -> str:
            return run_tmux(outer, "capture-pane", "-p", "-t", "o").stdout

        retry_until(lambda: "approve?" in screen(), timeout=45,
                    message="the popup never showed the question")  # fmt: skip
        rows = screen().splitlines()
        at = next(i for i, row in enumerate(rows) if "approve?" in row)
        above = "\n".join(rows[max(0, at - 6) : at])
        assert f"delete -r {root}/src" in above, "\n".join(rows)
        assert "sudo apt-get install -y jq" in above, "\n".join(rows)
        assert "why:" in rows[at - 1] or "why:" in rows[at - 2], "\n".join(rows)
        run_tmux(outer, "send-keys", "-t", "o", "n", "Enter")
        retry_until(lambda: "reason" in screen(), timeout=20,
                    message="the popup never asked for a reason")  # fmt: skip
        run_tmux(outer, "send-keys", "-t", "o", "Enter")
        t.join(30)
        assert isinstance(result["v"].decision, Deny), result
        assert (root / ".worktrees").is_dir()
    finally:
        if store is not None:
            store.stop_waiting()  # a failed check leaves the call waiting: end it
            if t is not None:
                t.join(30)
            store.close()
        kill_server(outer)
