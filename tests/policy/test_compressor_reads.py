"""What a compressor, ``zip`` and ``install`` are given is read, not only written.

Found trying the gate as a worker (reads), each run here for real with a scratch home,
where it printed (or copied into the worktree) the AWS key, and allowed before:
``gzip -c ~/.aws/credentials | gunzip`` (and ``bzip2``, ``xz``, ``zstd``, ``lz4``),
``zip -q - ~/.aws/credentials | funzip`` and ``install -m644 ~/.aws/credentials x``:
their operands were judged as the files they write, or not at all, and none is a
credential. Now each operand is also a read, judged as ``cat``'s: refused for a store
or the state, as before for the worktree's files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, scratch_worktree

SECRET = "AKIA_SCRATCH_SECRET"

COPIES = [
    "gzip -c ~/.aws/credentials | gunzip",
    "gzip -k ~/.aws/credentials --stdout | gunzip",
    "bzip2 -c ~/.aws/credentials | bunzip2",
    "xz -c ~/.aws/credentials | xz -d",
    "zstd -qc ~/.aws/credentials | zstd -qd",
    "lz4 -c ~/.aws/credentials | lz4 -dc",
    "zip -q - ~/.aws/credentials | funzip",
    "install -m644 ~/.aws/credentials x && cat x",
    "install -D ~/.aws/credentials out/x && cat out/x",
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch home holding an AWS key, the gate's ``~`` too."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize("command", COPIES)
def test_a_compressor_or_install_given_a_credential_reads_it(
    tmp_path: Path, home: Path, command: str
) -> None:
    needed = command.split(maxsplit=1)[0]
    if shutil.which(needed) is None:
        pytest.fail(f"{needed} is not installed (make setup)")
    root, wt = scratch_worktree(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          env=env, check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


def test_the_state_given_to_gzip_is_refused(tmp_path: Path, home: Path) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("exo_lead_secret\n")
    (wt / "t").symlink_to("../../.exomonad/lead.token")
    done = subprocess.run(["bash", "-c", "gzip -c t | gunzip"], cwd=wt, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert "exo_lead_secret" in done.stdout
    assert isinstance(bash("gzip -c t | gunzip", root=str(root)), Deny)


@pytest.mark.parametrize(
    "command",
    [
        "gzip -c notes.txt > notes.txt.gz",
        "gzip notes.txt",
        "xz -d build.tar.xz",
        "zip -q out.zip notes.txt",
        "install -m755 tool.sh bin/tool",
        "zstd -q notes.txt -o notes.zst",
    ],
)
def test_ordinary_compression_and_install_stay_allowed(
    tmp_path: Path, home: Path, command: str
) -> None:
    root, _ = scratch_worktree(tmp_path)
    assert isinstance(bash(command, root=str(root)), Allow), bash(command, root=str(root))
