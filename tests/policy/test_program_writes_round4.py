"""Programs that wrote outside the worker's worktree, ran commands or signalled every
process, found probing as a worker (a fourth round), each allowed and run for real in a
scratch worktree:

- git plumbing's own output options: ``git fast-export --export-marks=../../README.md
  HEAD`` (also abbreviated, ``--export-mark=``) and ``git index-pack -o ../../README.md
  x.pack`` overwrote the lead's README (or, via ``.git/config``, broke the lead's git);
- ``killall5 -15`` signalled every process (the server died); ``loginctl terminate-user
  root``, ``fuser -k -n tcp PORT`` (the dashboard), ``systemctl --user stop``;
- ``socat -u SYSTEM:'echo PWNED' OPEN:../../README.md,trunc`` and ``socat -
  EXEC:'git -C /p update-ref ...'`` ran commands and wrote the lead's files;
- ``man -P 'touch /p/x' git`` ran its pager through the shell;
- ``zstd --output-dir-flat=../..``, ``openssl rand -writerand ../../README.md``,
  ``openssl s_client -msgfile``, ``gpg --homedir ../..``.

Each is now a write of the path it names (escalated), Unknown, or (killall5 and the
like, which signal every process) denied; ordinary uses stay allowed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import git

NOT_ALLOWED = [
    # git plumbing's output options
    "git fast-export --export-marks=../../README.md HEAD",
    "git fast-export --all --export-marks=/p/.git/config",
    "git fast-export --export-mark=../../README.md HEAD",
    "git fast-export --export-marks ../../README.md HEAD",
    "git fast-export --exp=../../README.md HEAD",
    "git fast-export --import-marks=../../.exomonad/lead.token HEAD",
    "git index-pack -o ../../README.md x.pack",
    "git index-pack ../../x.pack",
    "git index-pack --stdin ../../y.pack",
    "git pack-objects ../../base",
    "git pack-objects --revs --depth 50 ../../base",
    "git read-tree --index-output=../../.git/index HEAD",
    "git read-tree --index-o=../../idx HEAD",
    "git apply --build-fake-ancestor=../../idx p.patch",
    "git commit-graph write --object-dir=../../objs",
    "git repack --expire-to=../../old",
    "git bugreport --o=../../x",
    "git archive --o=../../x HEAD",
    "git fast-import --export-marks=../../m",
    "git fast-import --import-marks=../../m",
    "git unpack-file HEAD:f",
    # signals of many processes
    "loginctl terminate-session 3",
    "loginctl kill-session 3",
    "loginctl lock-sessions",
    "fuser -k -n tcp 8080",
    "fuser -k 8080/tcp",
    "fuser -km .",
    "fuser --kill -n tcp 8080",
    "systemctl --user stop x",
    "systemctl --user kill x",
    "systemctl --user restart x",
    "systemctl stop exomonad",
    "start-stop-daemon --stop --name vite",
    # socat
    "socat -u SYSTEM:'echo PWNED' OPEN:../../README.md,trunc",
    "socat - EXEC:'git -C /p update-ref refs/heads/main HEAD'",
    "socat - exec:'touch ../../x'",
    "socat -d -d - System:'touch ../../x'",
    "socat STDIO EXEC:sh,pty",
    "socat -u - CREATE:../../x",
    "socat -u - CREAT:../../x",
    "socat -u - FILE:../../x",
    "socat -u - GOPEN:../../x",
    "socat -u - ../../x",
    "socat -u - /p/x,creat",
    "socat -u - PIPE:../../fifo",
    "socat UNIX-LISTEN:../../s -",
    "socat - UNIX-CONNECT:/p/.exomonad/server.sock",
    "socat - unix-client:/p/.exomonad/server.sock",
    "socat -lf ../../log - -",
    "socat -lf../../log - -",
    "socat -L ../../lock - -",
    "socat -r ../../dump - TCP:localhost:80",
    "socat - PTY,link=../../tty",
    "socat - READLINE,history=../../h",
    "socat - OPEN:x,lockfile=../../l",
    "socat - WEIRD-NEW-TYPE:x",
    "socat - TCP:localhost:8080",
    "socat TCP-LISTEN:8080,fork -",
    "socat $A $B",
    "socat -u - OPEN:'../../a b',creat",
    "socat - 'OPEN:\"../../x\"'",
    "socat -u - 'OPEN:x!!OPEN:../../y'",
    # man's pager and browser
    "man -P 'touch /p/x' git",
    "man --pager='touch /p/x' git",
    "man --pager 'touch /p/x' git",
    "man --pag='touch /p/x' git",
    "man -aP'touch /p/x' git",
    "man -Hfirefox git",
    "man --html=firefox git",
    "man -C ../../man.conf git",
    "man -X git",
    'man -P "$X" git',
    # other outputs
    "zstd -q own.txt --output-dir-flat=../..",
    "zstd -q own.txt --output-dir-mirror=../..",
    "zstd -q own.txt --output-dir-flat ../..",
    "zstd -d own.txt.zst --output-dir-flat=/p",
    "openssl rand -writerand ../../README.md 1",
    "openssl rand -writerand=../../README.md 1",
    "openssl rand --out=../../README.md 4",
    "openssl rand -out=../../README.md 4",
    "openssl s_client -msgfile ../../x",
    "openssl s_client -connect h:443 -keylogfile ../../k",
    "openssl s_client -connect h:443 -sess_out ../../s",
    "openssl ocsp -reqout ../../r",
    "openssl ocsp -respout ../../r",
    "openssl cms -verify -in m -signer ../../s",
    "openssl cms -verify -in m -certsout ../../c",
    "openssl ca -outdir ../../certs",
    "openssl cmp -certout ../../c",
    "openssl x509 -req -in r -CA ca.pem -CAkey k -CAserial ../../ser",
    "openssl x509 -req -in r -CA ../../ca.pem -CAkey k -CAcreateserial",
    "openssl srp -srpvfile ../../v -add u",
    "openssl genpkey -algorithm ed25519 -outpubkey ../../pub",
    "gpg --homedir ../..",
    "gpg --homedir=../.. --list-keys",
    "gpg --hom ../.. --list-keys",
    "gpg -o ../../x -c f",
    "gpg --output=../../x -c f",
    "gpg --out ../../x -c f",
    "gpg --keyring ../../k --import key.asc",
    "gpg --trustdb-name ../../t --list-keys",
    "gpg --status-file ../../s --list-keys",
    "gpg --logger-file ../../l --list-keys",
    "gpg --log-file ../../l --list-keys",
    "gpg -c ../../README.md",
    "gpg --detach-sign ../../README.md",
    "gpg --decrypt-files ../../x.gpg",
    "gpg --photo-viewer 'touch ../../x' --list-keys",
    "gpg --agent-program ../../a --list-keys",
]

ALLOWED = [
    "git fast-export HEAD > out.fi",
    "git fast-export --all --export-marks=marks HEAD",
    "git fast-export --import-marks=marks HEAD",
    "git index-pack x.pack",
    "git index-pack -o x.idx x.pack",
    "git pack-objects --stdout --revs",
    "git pack-objects base",
    "git read-tree HEAD",
    "git apply p.patch",
    "git log --oneline",
    "git -P log",
    "killall vite",
    "killall5 -0",
    "shutdown -c",
    "reboot --help",
    "./init 0",
    "telinit q",
    "systemctl status exomonad",
    "socat -b 8192 - -",
    "socat -t0.5 - -",
    "man -a git",
    "man --pager less git",
    "pkill -f vite",
    "loginctl list-sessions",
    "loginctl user-status",
    "fuser -n tcp 8080",
    "fuser -v .",
    "systemctl status x",
    "systemctl --user status x",
    "systemctl --user list-units",
    "systemctl is-active x",
    "socat -V",
    "socat -h",
    "socat - OPEN:out.txt,creat",
    "socat -u OPEN:in.txt OPEN:out.txt,creat,trunc",
    "socat -u STDIN STDOUT",
    "socat -u - ./x,creat",
    "socat - UNIX-CONNECT:sock",
    "man git",
    "man 1 ls",
    "man -P cat git",
    "man -P less git",
    "man --pager=cat git",
    "man -k fast-export",
    "zstd -q a.txt",
    "zstd -q a.txt -o a.zst",
    "zstd -q a.txt --output-dir-flat=out",
    "zstd -d a.txt.zst",
    "openssl rand -hex 8",
    "openssl rand -out r.bin 8",
    "openssl rand -writerand seed 8",
    "openssl dgst -sha256 f",
    "openssl req -new -x509 -nodes -keyout k.pem -out c.pem -subj /CN=x",
    "openssl x509 -in c.pem -noout -text",
    "gpg --list-keys",
    "gpg --list-keys",
    "gpg -o out.gpg -c f",
    "gpg -c f",
    "gpg --verify f.sig f",
    "gpg -d f.gpg",
    "gpg --import key.asc",
]

#: Signalling every process: denied outright, as ``kill -9 -1`` and ``pkill`` are.
DENIED = [
    "killall5 -15",
    "killall5 -9",
    "killall5",
    "/sbin/killall5 -9",
    "sudo killall5 -9",
    "exec killall5 -9",
    "timeout 5 killall5 -9",
    "env killall5 -9",
    "loginctl terminate-user root",
    "loginctl kill-user root",
    "loginctl --signal=9 kill-user root",
    "systemctl poweroff",
    "systemctl --user exit",
    "systemctl reboot",
    "reboot",
    "poweroff",
    "halt",
    "shutdown now",
    "shutdown -h now",
    "telinit 0",
    "init 6",
    "sudo reboot",
    "systemctl --user stop exomonad",
    "fuser -k -m /",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", ALLOWED)
def test_still_allowed(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize("command", DENIED)
def test_denied(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Deny), (command, decision)


def test_every_socat_file_address_is_the_path_it_names() -> None:
    """The reason a person sees names the lead's file, not just the command."""
    reason = str(getattr(bash("socat -u - OPEN:../../README.md,trunc"), "reason", ""))
    assert "/p/README.md" in reason


# --- the real effects (git and openssl only: both are on every CI machine) --------------


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    """The project ``tmp_path/p`` with the lead's ``README.md`` and a worktree
    ``.worktrees/w1`` holding a repository with one commit."""
    root, wt = scratch_worktree(tmp_path)
    (root / "README.md").write_text("lead\n")
    (wt / "f").write_text("a\n")
    for args in (["init", "-q"], ["add", "f"], ["commit", "-qm", "a"]):
        git(wt, *args)
    return root, wt


def _run(command: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True, timeout=60, env=env,
                   capture_output=True)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        "git fast-export --export-marks=../../README.md HEAD > /dev/null",
        "git fast-export --export-marks ../../README.md HEAD > /dev/null",
    ],
)
def test_the_real_effect_git_fast_export_marks(tmp_path: Path, command: str) -> None:
    """(The abbreviation ``--export-mark=`` did the same with the git the worker had;
    git 2.39's fast-export refuses abbreviations, so it is judged above, not run.)"""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = _layout(tmp_path)
    _run(command, wt)
    assert (root / "README.md").read_text() != "lead\n"  # the marks replaced it
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_git_index_pack_output(tmp_path: Path) -> None:
    assert shutil.which("git"), "git is needed for this test"
    root, wt = _layout(tmp_path)
    _run("git rev-parse HEAD | git pack-objects --revs pk > /dev/null", wt)
    pack = next(wt.glob("pk-*.pack")).name
    command = f"git index-pack -o ../../README.md {pack}"
    _run(command, wt)
    assert (root / "README.md").read_bytes().startswith(b"\377tOc")  # a pack index now
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_git_pack_objects_base_name(tmp_path: Path) -> None:
    assert shutil.which("git"), "git is needed for this test"
    root, wt = _layout(tmp_path)
    command = "git rev-parse HEAD | git pack-objects --revs ../../planted > /dev/null"
    _run(command, wt)
    assert list(root.glob("planted-*.pack"))
    assert not isinstance(bash(command, root=str(root)), Allow)


@pytest.mark.parametrize(
    "command",
    ["openssl rand -writerand ../../README.md 1 > /dev/null",
     "openssl rand -out=../../README.md 4",
     "openssl rand --out ../../README.md 4"],
)  # fmt: skip
def test_the_real_effect_openssl_writes(tmp_path: Path, command: str) -> None:
    assert shutil.which("openssl"), "openssl is needed for this test"
    root, wt = _layout(tmp_path)
    _run(command, wt)
    assert (root / "README.md").read_bytes() != b"lead\n"
    assert not isinstance(bash(command, root=str(root)), Allow)
