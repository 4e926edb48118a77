"""A recursive read of a tree holding a credential store, narrowed to names a credential
file has, reads the credentials.

Found trying the gate as a worker (reads): ``grep -r --include='*' -h . ~``, ``find ~
-name 'id_*' -exec cat {} +`` and ``grep -rh --include=hosts.yml oauth ~/.config``
printed the AWS key, the SSH key and gh's token, allowed: a tree read narrowed by any
``--include`` or ``-name`` was taken for one that reads none of the stores. Now the
globs are matched against the names credential files have, as the state's are against
its files; ``grep -r --include='*.py' foo ~`` stays allowed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, scratch_worktree

SECRETS = {
    ".aws/credentials": "aws_secret_access_key = AKIA_SCRATCH_SECRET\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY----- scratch\n",
    ".config/gh/hosts.yml": "github.com:\n  oauth_token: gho_scratch_secret\n",
}

NARROWED = [
    ("grep -r --include='*' -h . ~", "AKIA_SCRATCH_SECRET"),
    ("grep -rh --include=credentials . ~", "AKIA_SCRATCH_SECRET"),
    ("find ~ -name 'id_*' -exec cat {} +", "OPENSSH PRIVATE KEY"),
    ("find ~ -maxdepth 3 -name '*' -type f -exec cat {} +", "gho_scratch_secret"),
    ("grep -rh --include=hosts.yml oauth ~/.config", "gho_scratch_secret"),
    ("grep -rh --include='*.yml' oauth ~/.config", "gho_scratch_secret"),
    ("grep -rh --include='[ch]*' . ~", "AKIA_SCRATCH_SECRET"),
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch home holding three credential stores, the gate's ``~`` too."""
    home = tmp_path / "home"
    for relative, text in SECRETS.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text)
    (home / "notes.py").write_text("foo = 1\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize(("command", "secret"), NARROWED)
def test_a_tree_read_narrowed_to_credential_names_is_refused(
    tmp_path: Path, home: Path, command: str, secret: str
) -> None:
    root, wt = scratch_worktree(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          env=env, check=False)  # fmt: skip
    assert secret in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


@pytest.mark.parametrize(
    "command",
    [
        "grep -r --include='*.py' foo ~",
        "find ~ -name '*.py' -exec grep -n foo {} +",
        "grep -rn --include='*.md' todo ~/notes",
        "grep -rn foo .",
    ],
)
def test_tree_reads_narrowed_to_other_names_stay_allowed(
    tmp_path: Path, home: Path, command: str
) -> None:
    root, _ = scratch_worktree(tmp_path)
    assert isinstance(bash(command, root=str(root)), Allow), bash(command, root=str(root))
