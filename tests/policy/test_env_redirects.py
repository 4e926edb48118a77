"""Variables and files that send an allowed command's work elsewhere (a round on the
environment, each run for real in a scratch project first, each allowed before):

- ``HOME=. git push origin exo/w1`` with a ``./.gitconfig`` saying ``url.B.insteadOf =
  <origin>`` pushed the worker's branch to B (another host in the probe: a connection
  to it), judged as a push to the configured remote;
- ``git init --template=tpl sub`` copied ``tpl/config`` into ``sub/.git/config``, whose
  remote then ``git -C sub fetch origin`` (allowed) reached;
- ``BZIP2='-f ../../a.txt' bzip2 x.txt`` replaced the lead's ``a.txt`` with
  ``a.txt.bz2``, ``ZIP='-r ../../o.zip' zip ...`` wrote ``o.zip`` in the lead's checkout:
  both programs take file operands from those variables;
- ``tar -cf HOST:FILE`` and ``TAPE=HOST:FILE tar -c`` look HOST up and reach it through
  rsh (judged as writing a local file).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import GIT_ENV, git


def _project(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """The lead's checkout with a bare ``origin``, worker w1's worktree, and another
    bare repository (the "other host")."""
    root, wt = scratch_worktree(tmp_path)
    origin, other = tmp_path / "origin.git", tmp_path / "other.git"
    for bare in (origin, other):
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("lead's file\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "lead")
    git(root, "remote", "add", "origin", str(origin))
    git(root, "push", "-q", "origin", "main")
    git(origin, "push", "-q", str(other), "main")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    return root, wt, origin, other


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash with a test identity and no system config; the global
    config is left to ``HOME`` (which the commands set)."""
    env = {k: v for k, v in {**os.environ, **GIT_ENV}.items() if k != "GIT_CONFIG_GLOBAL"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False, timeout=30)  # fmt: skip


def _not_allowed(command: str, root: Path) -> None:
    decision = bash(command, root=str(root))
    assert not isinstance(decision, Allow), (command, decision)


def test_a_gitconfig_the_line_points_git_at_reroutes_its_push(tmp_path: Path) -> None:
    root, wt, origin, other = _project(tmp_path)
    (wt / ".gitconfig").write_text(f'[url "{other}"]\n\tinsteadOf = {origin}\n')
    (wt / "git").mkdir()
    (wt / "git" / "config").write_text(f'[url "{other}"]\n\tinsteadOf = {origin}\n')
    done = _run("HOME=. git push -q origin exo/w1", wt)
    assert done.returncode == 0, done.stderr
    assert git(other, "branch", "--list", "exo/w1").strip()  # it went elsewhere
    assert not git(origin, "branch", "--list", "exo/w1").strip()  # not to origin
    for command in (
        "HOME=. git push origin exo/w1",
        "XDG_CONFIG_HOME=. git push origin exo/w1",
        "export HOME=$PWD; git push origin exo/w1",
        "HOME=.; git fetch origin",
        "env HOME=. git push origin exo/w1",
        "HOME=. sh -c 'git push origin exo/w1'",
    ):
        _not_allowed(command, root)
    for command in ("git push origin exo/w1", "git fetch origin", "git status"):
        assert isinstance(bash(command, root=str(root)), Allow), command


def test_a_templates_config_becomes_the_nested_repositorys(tmp_path: Path) -> None:
    root, wt, _, other = _project(tmp_path)
    (wt / "tpl").mkdir()
    (wt / "tpl" / "config").write_text(
        f'[remote "origin"]\n\turl = {other}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    )
    command = "git init -q --template=tpl sub"
    done = _run(f"{command} && git -C sub fetch -q origin", wt)
    assert done.returncode == 0, done.stderr
    assert git(wt / "sub", "rev-parse", "origin/main").strip()  # fetched from the template's
    shutil.rmtree(wt / "sub")  # judged as before it ran: no nested repository yet
    for spelled in (command, "git init -q --templ tpl sub", 'git init --template "$T" sub'):
        _not_allowed(spelled, root)
    # a template without a config (hooks only) still makes a repository of the worker's
    (wt / "tpl0" / "hooks").mkdir(parents=True)
    assert isinstance(bash("git init -q --template=tpl0 sub", root=str(root)), Allow)


@pytest.mark.parametrize(
    ("command", "program", "harm"),
    [
        ("BZIP2='-f ../../a.txt' bzip2 x.txt", "bzip2", "a.txt.bz2"),
        ("export BZIP='-k ../../a.txt'; bzip2 -k x.txt", "bzip2", "a.txt.bz2"),
        ("ZIP='-r ../../o.zip' zip -q x.zip x.txt", "zip", "o.zip"),
    ],
)
def test_a_variable_that_hands_a_program_files(
    tmp_path: Path, command: str, program: str, harm: str
) -> None:
    assert shutil.which(program), f"{program} is missing: `make setup` installs it"
    root, wt, _, _ = _project(tmp_path)
    (wt / "x.txt").write_text("x\n")
    done = _run(command, wt)
    assert done.returncode == 0, done.stderr
    assert (root / harm).exists()  # written in the lead's checkout
    _not_allowed(command, root)


def test_a_tar_archive_on_a_host_is_network_access(tmp_path: Path) -> None:
    root, wt, _, _ = _project(tmp_path)
    (wt / "x.txt").write_text("x\n")
    for command in ("tar -cf nohost.invalid:x x.txt", "TAPE=nohost.invalid:x tar -c x.txt"):
        done = _run(command, wt)  # GNU tar looks the host up to reach it through rsh
        assert "nohost.invalid" in done.stderr, (command, done.stderr)
        _not_allowed(command, root)
    assert (
        "network access to nohost.invalid"
        in bash("tar -xf nohost.invalid:x", root=str(root)).reason
    )
    local = "tar --force-local -cf a:b x.txt"
    assert _run(local, wt).returncode == 0
    assert (wt / "a:b").exists()
    for command in (local, "tar -cf ./a:b x.txt", "tar czf out.tgz x.txt"):
        assert isinstance(bash(command, root=str(root)), Allow), command


def test_an_ssh_command_for_git_changes_no_host_file_or_program(tmp_path: Path) -> None:
    """``GIT_SSH_COMMAND='ssh -E ../../log'`` wrote ssh's log in the lead's checkout,
    ``'ssh -J HOST'`` connected to HOST first (found probing, both allowed); a plain
    ``ssh`` with a key, port or user, or ``-v``, stays ordinary."""
    assert shutil.which("ssh"), "ssh is missing: `make setup` installs it"
    root, wt, _, _ = _project(tmp_path)
    git(root, "remote", "set-url", "origin", "ssh://git@127.0.0.1:1/x.git")  # refused at once
    command = "GIT_SSH_COMMAND='ssh -E ../../sshlog' git push origin exo/w1"
    _run(command, wt)
    assert "127.0.0.1" in (root / "sshlog").read_text()  # written in the lead's checkout
    for spelled in (
        command,
        "GIT_SSH_COMMAND='ssh -J evil.example' git fetch origin",
        "GIT_SSH_COMMAND='ssh -Jevil.example' git fetch origin",
        "GIT_SSH_COMMAND='ssh -R 9999:localhost:22' git push origin exo/w1",
        "GIT_SSH_COMMAND='ssh -S ../../ctl' git fetch origin",
        "GIT_SSH_COMMAND='sshx' git fetch origin",
        "GIT_SSH_COMMAND='ssh-agent cat' git fetch origin",
    ):
        _not_allowed(spelled, root)
    for ordinary in (
        "GIT_SSH_COMMAND=ssh git fetch origin",
        "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy_key -p 2222' git push origin exo/w1",
        "GIT_SSH_COMMAND='ssh -vT' git fetch origin",
    ):
        assert isinstance(bash(ordinary, root=str(root)), Allow), ordinary


class _AsksForAPassword(BaseHTTPRequestHandler):
    """A git host that wants Basic authentication (git then asks its credential helper)."""

    def do_GET(self) -> None:
        self.send_response(404 if self.headers.get("Authorization") else 401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def git_host() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _AsksForAPassword)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_git_traces_print_no_credential(tmp_path: Path, git_host: str) -> None:
    """``GIT_TRACE_REDACT=0 GIT_TRACE_CURL=1 git fetch origin`` printed the password the
    user's credential helper gave git (base64 in its ``Authorization`` header), as ``git
    credential fill`` (refused) would; with git's default redaction it does not."""
    root, wt, _, _ = _project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[credential]\n\thelper = store\n")
    (home / ".git-credentials").write_text(f"http://u:SECRET_31337@{git_host}\n")
    git(root, "remote", "set-url", "origin", f"http://{git_host}/x.git")
    secret = base64.b64encode(b"u:SECRET_31337").decode()
    env = {k: v for k, v in {**os.environ, **GIT_ENV}.items() if k != "GIT_CONFIG_GLOBAL"}
    env["HOME"] = str(home)

    def stderr(command: str) -> str:
        return subprocess.run(["bash", "-c", command], cwd=wt, env=env, capture_output=True,
                              text=True, check=False, timeout=30).stderr  # fmt: skip

    command = "GIT_TRACE_REDACT=0 GIT_TRACE_CURL=1 git fetch origin"
    assert secret in stderr(command)  # the credential, printed
    assert secret not in stderr("GIT_TRACE_CURL=1 git fetch origin")  # redacted
    for spelled in (
        command,
        "export GIT_TRACE_REDACT=false; GIT_CURL_VERBOSE=1 git fetch origin",
        "GIT_TRACE_REDACT= GIT_TRACE_CURL=1 git fetch origin",
    ):
        _not_allowed(spelled, root)
    assert isinstance(bash("GIT_TRACE_CURL=1 git fetch origin", root=str(root)), Allow)


@pytest.mark.parametrize(
    "command",
    [
        "NODE_OPTIONS='--cpu-prof --cpu-prof-dir=../..' node x.js",
        "GOFLAGS='-mod=mod -o=../../bin' go build .",
        "export SOME_TOOL_OPTS='-v --out ../../x'; some-tool",
    ],
)
def test_a_value_of_options_naming_a_path_outside_is_asked(command: str) -> None:
    """Found with ``BZIP2='-k ../../README.md'``: a variable of several words is read as
    options, each path among them judged as a single value's is."""
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize(
    "command",
    [
        "CFLAGS='-O2 -g' make",
        "LDFLAGS='-L/usr/lib -lm' make",
        "PYTEST_ADDOPTS='-x -q' pytest",
        "NODE_OPTIONS='--max-old-space-size=4096' npm test",
        "MAKEFLAGS='-j4 -k' make",
        "XZ_OPT='-9 -T0' tar -cJf a.tar.xz src",
    ],
)
def test_ordinary_option_variables_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
