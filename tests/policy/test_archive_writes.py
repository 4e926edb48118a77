"""A worker's archive extractions and copies that write outside its worktree.

Found as a worker against a live server (the real hook client, its token): each of
``NOT_ALLOWED`` was allowed and really wrote outside the worktree. ``tar -xf x.tar
-C ../../.git/hooks`` planted a ``pre-commit`` the lead's git ran, ``-C
../../.git/exomonad-hooks`` replaced ExoMonad's ``pre-push`` gate; ``tar -xPf`` (a
member ``../../README.md``) and ``unzip -o x.zip -d ../../.git/hooks`` overwrote the
lead's files; ``scp -r``/``rsync -a`` lost their destination (a flag was read as taking
a value); ``zip -r``, ``mkfifo``, ``mktemp -p``, ``install -d`` were not seen as writers.
Now an extraction is judged by the directory it writes into, an option that renames
members, keeps ``..`` and absolute names or runs a program is ``Unknown``, and the same
tools used inside the worktree stay allowed.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash
from tests.support.git import make_repo

NOT_ALLOWED = [
    # tar: the extraction directory in every spelling
    "tar -xf x.tar --directory=../..",
    "tar -xf x.tar --directory ../..",
    "tar -xf x.tar --dir=../../.git/hooks",
    "tar -xf x.tar -C../..",
    "tar -xC../../.git/hooks -f x.tar",
    "tar -xf x.tar -C ../../.git/hooks",
    "tar -xf x.tar -C ../../.git/exomonad-hooks",
    "tar xf x.tar -C ../../.git/hooks",
    "tar xfC x.tar ../../.git/hooks",
    "tar -C ../../.git/hooks -xf x.tar",
    "tar -xf x.tar -C ../.. -C .git/hooks",
    "tar -xf x.tar -C build -C ../../../.git/hooks",
    "tar --extract --file x.tar --directory ../../docs",
    "tar --get -f x.tar -C ../../docs",
    'tar -xf x.tar -C "$D"',
    "bsdtar -xf x.tar -C ../../.git/hooks",
    "gtar -xf x.tar -C ../../.git/hooks",
    # tar: names kept as they are, renamed, or put elsewhere
    "tar -xPf x.tar",
    "tar -x -P -f x.tar",
    "tar --absolute-names -xf x.tar",
    "tar --abs -xf x.tar",
    "tar -xf x.tar --transform='s,^evil.py,.exomonad/policy.py,'",
    "tar -xf x.tar --xform=s,a,../../b,",
    "tar -xf x.tar --one-top-level=../../zz",
    "bsdtar -xf x.tar -s ,a,../../b,",
    # tar: options that run a program
    "tar -xf x.tar --to-command=sh",
    "tar -xf x.tar -I 'sh -c id'",
    "tar -xf x.tar --use-compress-program=./evil",
    "tar -tf x.tar --use-compress-program=./evil",
    "tar -czf out.tgz --checkpoint=1 --checkpoint-action=exec=id src",
    "tar -xf x.tar -F ./script",
    "tar -xf x.tar --info-script=./script",
    "tar -xf x.tar --new-volume-script=./script",
    "tar -xf host:x.tar --rsh-command=./evil",
    "tar -xf host:x.tar --rmt-command=./evil",
    # tar: files written by option, archives written, files removed
    "tar -cf ../../x.tar src",
    "tar -czf out.tgz --index-file=../../idx src",
    "tar -czf out.tgz -g ../../snap src",
    "tar -rf ../../x.tar src",
    "tar --delete -f ../../x.tar member",
    "tar -cf x.tar --remove-files ../../README.md",
    "tar --bogus-option -xf x.tar",
    # unzip and other unpackers
    "unzip -o x.zip -d ../../.git/hooks",
    "unzip -o x.zip -d../../.git/hooks",
    "unzip -od ../../.git/hooks x.zip",
    "unzip x.zip -d ../..",
    "unzip -: x.zip",
    "unzip -o -: x.zip -d out",
    "cpio -idm -D ../.. < x.cpio",
    "cpio -i < x.cpio",
    "cpio -id --directory=../../docs --no-absolute-filenames < x.cpio",
    "find src | cpio -pdm ../../docs",
    "7z x x.7z -o../../.git/hooks",
    "7z e x.7z -o../..",
    "7z a ../../x.7z src",
    "busybox unzip x.zip -d ../..",
    "busybox tar -xf x.tar -C ../..",
    # copies: the last operand is the destination, whatever the flags
    "scp -r payload/pre-commit ../../.git/hooks",
    "scp payload/pre-commit ../../.git/hooks",
    "scp -rp payload ../../.git/hooks",
    "rsync -a payload/ ../../.git/hooks/",
    "rsync -r a ../../docs/",
    "rsync -av --delete a/ ../../docs/",
    "rsync -e ssh -a a/ ../../docs/",
    "rsync --exclude x -a a/ ../../docs/",
    "rsync -a a/ b/ --log-file=../../log",
    "rsync -a --link-dest=../../.. a/ b/",
    "rsync -a a host:dir/",
    "scp a host:dir/",
    # smaller writers
    "zip -r ../../z.zip .",
    "zip -qr ../../z.zip .",
    "zip ../../z.zip a",
    "zip -r out.zip src -O ../../z.zip",
    "zip -T -TT ./evil out.zip a",
    "mkfifo ../../fifo",
    "mkfifo -m 600 ../../fifo",
    "mknod ../../n p",
    "mktemp -p ../..",
    "mktemp -p ../.. x.XXXX",
    "mktemp --tmpdir=../..",
    "mktemp ../../XXXX",
    "mktemp -d ../../XXXX",
    "install -d ../../newdir",
    "install -dm 755 ../../a ../../b",
    "link a ../../hard",
]

ALLOWED = [
    "tar -xf x.tar",
    "tar xf x.tar",
    "tar -xzf a.tgz -C build",
    "tar -xzf a.tgz --directory=build",
    "tar -xf x.tar -Cbuild",
    "tar -xf x.tar --one-top-level",
    "tar -xf x.tar --strip-components=1 -C build",
    "tar -tf x.tar",
    "tar -tvzf a.tgz",
    "tar -czf out.tgz src",
    "tar czf out.tgz src",
    "tar -cf - src",
    "tar -cf x.tar --transform=s,^,pkg/, src",
    "tar -xf x.tar -O",
    "unzip x.zip",
    "unzip -o x.zip -d out",
    "unzip -l x.zip",
    "unzip -p x.zip a.txt",
    "zip -r out.zip src",
    "zip -qr out.zip src",
    "zip out.zip a b",
    "scp -r a b",
    "rsync -a src/ build/",
    "rsync -av --delete src/ build/",
    "cpio -id --no-absolute-filenames < x.cpio",
    "cpio -id -D out --no-absolute-filenames < x.cpio",
    "find src | cpio -pdm build",
    "7z x x.7z -oout",
    "7z x x.7z",
    "7z l x.7z",
    "mkfifo fifo",
    "mktemp",
    "mktemp -d",
    "mktemp -t x.XXXX",
    "mktemp -p . x.XXXX",
    "mktemp tmp.XXXX",
    "install -d newdir",
    "install -m 644 a build/a",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_a_workers_extraction_or_copy_outside_its_worktree_is_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", ALLOWED)
def test_a_workers_extraction_or_copy_inside_its_worktree_stays_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), (command, bash(command))


def test_an_extraction_where_the_state_dir_lives_is_denied_in_every_spelling() -> None:
    """Unpacking over ``.exomonad/`` (a planted ``policy.py``) is refused, not asked."""
    for command in ("tar -xf x.tar --directory=../..", "tar -xf x.tar -C../..",
                    "tar -xC ../.. -f x.tar", "unzip x.zip -d ../..", "unzip -d../.. x.zip",
                    "tar -xf x.tar -C ../../.exomonad", "7z x x.7z -o../.."):  # fmt: skip
        assert isinstance(bash(command), Deny), command


# -- real effect: the commands the policy allows do not write outside the worktree --------

#: What a worker tries; run for real in a scratch project only when the policy allows it.
LIVE_TRIES = [
    "tar -xf x.tar --directory=../../.git/hooks",
    "tar -xf x.tar -C../../.git/hooks",
    "tar -xf x.tar -C ../../.git/exomonad-hooks",
    "tar -xPf up.tar",
    "tar -xf x.tar --transform=s,^pre-commit,../../README.md,",
    "unzip -o x.zip -d ../../.git/hooks",
    "unzip -o -: up.zip",
    "scp -r payload/pre-commit ../../.git/hooks",
    "zip -r ../../z.zip payload",
    "mkfifo ../../fifo",
    "mktemp -p ../..",
    "mktemp --tmpdir=../..",
    "mktemp ../../XXXX",
    "install -d ../../newdir",
]
#: What must still run, and what each leaves in the worktree.
LIVE_ORDINARY = {
    "tar -xf x.tar": "pre-commit",
    "mkdir -p build && tar -xf x.tar -C build": "build/pre-commit",
    "unzip -o x.zip -d out": "out/pre-commit",
    "tar -czf out.tgz payload": "out.tgz",
    "zip -qr out.zip payload": "out.zip",
    "mkfifo fifo": "fifo",
    "install -d newdir": "newdir",
}


def _archives(wt: Path) -> None:
    """x.tar/x.zip hold ``pre-commit``; up.tar/up.zip a member ``../../README.md``."""
    (wt / "payload").mkdir()
    (wt / "payload" / "pre-commit").write_text("#!/bin/sh\necho planted\n")
    for name, member in (("x", "pre-commit"), ("up", "../../README.md")):
        data = b"planted\n"
        with tarfile.open(wt / f"{name}.tar", "w") as tar:
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
        with zipfile.ZipFile(wt / f"{name}.zip", "w") as zf:
            zf.writestr(member, data)


def _outside(project: Path, wt: Path) -> dict[str, bytes | int]:
    """Every path outside the worktree, with its content (else its mode)."""
    seen: dict[str, bytes | int] = {}
    for path in sorted(project.rglob("*")):
        if path == wt or wt in path.parents:
            continue
        seen[str(path)] = path.read_bytes() if path.is_file() else path.stat().st_mode
    return seen


def _run(command: str, wt: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=30,
                   check=False, stdin=subprocess.DEVNULL)  # fmt: skip


def test_what_the_policy_allows_writes_nothing_outside_the_worktree(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj")
    for sub in (".exomonad", ".git/exomonad-hooks", ".worktrees/w1"):
        (project / sub).mkdir(parents=True, exist_ok=True)
    (project / ".exomonad" / "policy.py").write_text("# the lead's policy\n")
    (project / ".git" / "exomonad-hooks" / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    wt = project / ".worktrees" / "w1"
    _archives(wt)
    before = _outside(project, wt)
    allowed = [c for c in LIVE_TRIES if isinstance(bash(c, root=str(project)), Allow)]
    for command in allowed:
        _run(command, wt)
    assert _outside(project, wt) == before, allowed
    for command, made in LIVE_ORDINARY.items():
        assert isinstance(bash(command, root=str(project)), Allow), command
        _run(command, wt)
        assert (wt / made).exists(), command
    assert _outside(project, wt) == before
