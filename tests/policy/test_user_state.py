"""A worker's commands that change the user's own state outside the worktree are asked:
the keyring's keys, the SSH agent, a registry login, the cluster or Docker context, the default
toolchain (found probing as a worker: each was allowed).

The live test shows the real effect on a scratch ``$HOME`` with the real gpg and the
real ssh-agent after the hook client did not allow the command.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.test_state_tree_live import QUICK_ESCALATIONS, served
from tests.policy.worker import bash
from tests.support.tmux import TmuxServer

ASKED = [
    ("gpg --quick-gen-key exo", "write"),
    ("gpg --quick-gen exo", "write"),  # gpg takes a unique prefix
    ("gpg --delete-keys ABC", "write"),
    ("gpg --import-ownertrust t.txt", "write"),
    ("ssh-add k", "changes the user's configuration"),
    ("ssh-add -D", "changes the user's configuration"),
    ("kubectl config use-context prod", "changes the user's configuration"),
    ("kubectl --context x config set-credentials y", "changes the user's configuration"),
    ("docker context use prod", "changes the user's configuration"),
    ("docker login -u x", "changes the user's configuration"),
    ("npm login", "changes the user's configuration"),
    ("npm --registry http://example.invalid login", "changes the user's configuration"),
    ("npm --loglevel silent token create", "changes the user's configuration"),
    ("docker --context x login", "changes the user's configuration"),
    ("npm token create", "changes the user's configuration"),
    ("cargo login tok", "changes the user's configuration"),
    ("pyenv global 3.12", "changes the user's configuration"),
    ("rustup default nightly", "changes the user's configuration"),
    ("nvm alias default 18", "changes the user's configuration"),
    ("helm repo add x http://example.invalid", "changes the user's configuration"),
    ("gcloud auth login", "changes the user's configuration"),
    ("az account set -s x", "az account set"),
    ("gsettings set org.gnome.x y z", "changes the user's configuration"),
]

ORDINARY = ["gpg --verify x.sig", "gpg --list-keys", "gpg --import key.asc", "gpg -d x.gpg",
            "ssh-add -l",
            "ssh-add -L", "kubectl config view", "kubectl config get-contexts",
            "docker ps", "npm test", "cargo build", "pyenv versions", "rustup show",
            "nvm use 18", "npm test -- --grep login", "docker run img login",
            "npm install --save login"]  # fmt: skip


@pytest.mark.parametrize(("command", "said"), ASKED)
def test_a_change_to_the_users_own_state_is_asked(command: str, said: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert said in verdict.reason, verdict.reason


@pytest.mark.parametrize("command", ORDINARY)
def test_reading_or_using_it_is_ordinary_work(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


def test_a_worker_cannot_change_the_users_keyring_or_ssh_agent(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    """The hook client does not allow ``gpg --quick-gen-key`` nor ``ssh-add``; run anyway,
    the real gpg makes a key in the user's keyring and the real ssh-add adds the worker's
    key to the user's agent."""
    home = tmp_path / "home"
    home.mkdir()
    plain = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    agent = tmp_path / "agent.sock"
    started = subprocess.run(["ssh-agent", "-a", str(agent)], env=plain, text=True,
                             capture_output=True, timeout=30, check=False)  # fmt: skip
    assert started.returncode == 0, started.stderr
    pid = next(p.split("=")[1].split(";")[0] for p in started.stdout.split() if "_PID=" in p)
    try:
        with served(tmp_path, tmux_server, QUICK_ESCALATIONS, home=home) as live:
            token, worktree = live.spawn_worker()
            key = worktree / "k"
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "exo-worker",
                            "-f", str(key)], env=plain, check=True, timeout=30)  # fmt: skip
            env = {**live.env, "SSH_AUTH_SOCK": str(agent)}
            for command, check in (
                ("gpg --batch --passphrase= --quick-gen-key exo-worker", ["gpg", "-k"]),
                ("ssh-add k", ["ssh-add", "-L"]),
            ):
                answer = live.hook(command, token=token, cwd=worktree)
                assert answer["permissionDecision"] != "allow", (command, answer)
                before = subprocess.run(check, env=env, capture_output=True, text=True,
                                        timeout=30, check=False)  # fmt: skip
                assert "exo-worker" not in before.stdout
                ran = subprocess.run(command.split(), cwd=worktree, env=env, text=True,
                                     capture_output=True, timeout=60, check=False)  # fmt: skip
                assert ran.returncode == 0, (command, ran.stderr)
                after = subprocess.run(check, env=env, capture_output=True, text=True,
                                       timeout=30, check=False)  # fmt: skip
                assert "exo-worker" in after.stdout, (command, after.stdout)
    finally:
        os.kill(int(pid), 15)
        subprocess.run(["gpgconf", "--kill", "all"], env=plain, capture_output=True,
                       timeout=30, check=False)  # fmt: skip
