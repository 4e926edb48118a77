"""Programs that write where an option or an operand says, found in a second probing
round as a worker against a live server (the real hook front): each was allowed and
really wrote outside the worktree (``iconv -o ../../.git/config`` planted an
``fsmonitor`` the lead's ``git status`` ran; ``cmake -E copy`` a hook its ``git commit``
ran; ``dpkg-deb -x`` and ``cd ../.. && jar xf`` a ``policy.py`` in ``.exomonad/``;
``script -c CMD ~/.bashrc`` overwrote the shell's start-up file; ``vim -es -c '!CMD'``
ran a command). Now each writes what it names, or is Unknown.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash

OUTSIDE = [
    "iconv -f utf-8 -t utf-8 -o ../../.git/config cfg",
    "iconv -f utf-8 -t utf-8 --output=../../README.md a",
    "shuf -o ../../README.md -e x",
    "shuf --output ../../README.md a",
    "openssl base64 -d -in h.b64 -out ../../README.md",
    "openssl genrsa -out ../../k.pem 2048",
    "gpg -o ../../x.gpg -c a",
    "gpg --output=../../x a",
    "tic -o ../../terminfo x.ti",
    "ssh-keygen -f ../../k -N ''",
    "sqlite3 ../../x.db 'create table t(x)'",
    "convert a.png ../../b.png",
    "magick a.png ../../b.png",
    "cmake -E copy hk ../../.git/hooks/pre-commit",
    "cmake -E rm -rf ../../README.md",
    "cmake -E chdir ../.. tar xf /tmp/x.tar",
    "cmake -E env exomonad approve 1",
    "cmake -E create_symlink ../../.git g",
    "cmake -E touch ../../x",
    "dpkg-deb -x x.deb ../..",
    "dpkg-deb --extract x.deb ../..",
    "dpkg-deb -X x.deb ../..",
    "dpkg-deb --vextract x.deb ../..",
    "dpkg-deb -R x.deb ../..",
    "dpkg-deb -b dir ../../x.deb",
    "cd ../.. && jar xf /tmp/x.jar",
    "cd ../.. && ar x /tmp/x.a",
    "ar rcs ../../x.a a.o",
    "jar cf ../../x.jar a",
    "script -q -c 'cat h' ~/.bashrc",
    "script -q ../../log -c true",
    "vim -es -c '!touch ../../PWN' -c q",
    "ex -s -c '!touch ../../PWN' -c q",
    "vim +'!touch x' +q a.txt",
    "nvim --cmd '!id' a",
    "vim -S evil.vim a",
    "mount --bind ../.. x && echo pwn > x/README.md",
    "bindfs ../.. x && echo pwn > x/README.md",
    "sshfs localhost:/ x",
    "rclone mount remote: x",
]


@pytest.mark.parametrize("command", OUTSIDE)
def test_a_programs_named_output_outside_the_worktree_is_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


INSIDE = [
    "iconv -f latin1 -t utf-8 -o out.txt in.txt",
    "iconv -f latin1 -t utf-8 in.txt",
    "shuf -o out.txt in.txt",
    "openssl base64 -in a -out b",
    "openssl version",
    "gpg --verify a.sig a",
    "ssh-keygen -f ./k -N ''",
    "sqlite3 app.db 'select 1'",
    "flock build.lock make",
    "convert a.png b.png",
    "cmake -E echo hi",
    "cmake -S . -B build",
    "cmake --build build",
    "dpkg-deb -x x.deb out",
    "dpkg-deb -c x.deb",
    "jar xf lib.jar",
    "ar x lib.a",
    "ar t lib.a",
    "script -q -c true out.log",
    "vim a.txt",
    "vim +12 a.txt",
    "rclone listremotes",  # `rclone ls remote:` reaches the remote: network access, asked
]


@pytest.mark.parametrize("command", INSIDE)
def test_the_same_programs_inside_the_worktree_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


ONTO_GIT = [
    "gunzip -f .git.gz",
    "gunzip -f .git.gz && git commit -qam x",
    "gzip -d .git.gz",
    "xz -d .git.xz",
    "unzstd .git.zst",
    "bunzip2 .git.bz2",
    "gzip -d -S .q .git.q",
    "gzip -dN x.gz",
    "zstd -d a.zst -o ../../README.md",
]


@pytest.mark.parametrize("command", ONTO_GIT)
def test_a_decompressor_writes_the_name_without_its_suffix(command: str) -> None:
    """Found probing (a third round): ``gunzip -f .git.gz`` was judged a write of
    ``.git.gz``; it replaced the worktree's ``.git`` with a link to the lead's repository,
    and the next ``git commit`` moved the lead's ``main``."""
    assert not isinstance(bash(command), Allow), command


def test_the_real_effect_gunzip_writes_the_stem(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /somewhere\n")
    subprocess.run(["gzip", "-f", ".git"], cwd=tmp_path, check=True, timeout=30)
    assert not (tmp_path / ".git").exists()
    subprocess.run(["gunzip", "-f", ".git.gz"], cwd=tmp_path, check=True, timeout=30)
    assert (tmp_path / ".git").read_text() == "gitdir: /somewhere\n"
    for ordinary in ("gunzip -c .git.gz > y", "gzip notes.txt", "gunzip src/a.gz", "gunzip x.tgz"):
        assert isinstance(bash(ordinary), Allow), ordinary
