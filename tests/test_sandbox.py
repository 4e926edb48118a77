"""The bubblewrap sandbox: argv order (unit) and real effects under a real ``bwrap``.

The integration tests build a real repository (a commit, a bare remote, a worktree on
``exo/w1`` in ``.worktrees/w1``), a state dir with tokens and a live Unix socket served
by a thread, and run ``bash -c`` in the sandbox. bwrap missing is a failure, never a
skip: ``make setup`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import orjson
import pytest

from exomonad import __version__
from exomonad.errors import SandboxError
from exomonad.sandbox import SandboxSpec, _probe, bwrap_argv, git_common_dir, require_bwrap
from exomonad.util.waiting import retry_until
from tests.support.tmux import TmuxServer
from tests.support.uds_server import http_answer

SRC = Path(__file__).resolve().parents[1] / "src"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "w",
    "GIT_AUTHOR_EMAIL": "w@example.invalid",
    "GIT_COMMITTER_NAME": "w",
    "GIT_COMMITTER_EMAIL": "w@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True, timeout=30)  # fmt: skip
    return proc.stdout.strip()


@dataclass
class Project:
    """A repository with a worker's worktree, a bare remote and a served state dir."""

    repo: Path
    worktree: Path
    remote: Path
    state: Path
    sock: Path
    spec: SandboxSpec
    received: list[bytes]

    def run(self, script: str, spec: SandboxSpec | None = None) -> subprocess.CompletedProcess[str]:
        """``bash -c script`` in the sandbox, output captured."""
        return self.run_argv(["bash", "-c", script], spec)

    def run_argv(
        self, command: list[str], spec: SandboxSpec | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``command`` in the sandbox, output captured."""
        argv = bwrap_argv(command, spec or self.spec)
        env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(SRC)}
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip


def _serve(server: socket.socket, received: list[bytes], stop: threading.Event) -> None:
    server.settimeout(0.1)
    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        with conn:
            data = conn.recv(1024)
            received.append(data)
            if data.startswith(b"POST /hook/"):  # the hook front: an answer it takes
                conn.sendall(http_answer(200, b'exomonad-hook 0\n\n{"decision": "allow"}\nend'))
            else:
                conn.sendall(b"server got: " + data)


@pytest.fixture
def bwrap() -> str:
    """The working bwrap; fails (never skips) when it is missing or unusable."""
    try:
        return require_bwrap()
    except SandboxError as exc:
        pytest.fail(f"{exc} (`make setup` installs it)")


@pytest.fixture
def project(tmp_path: Path, bwrap: str) -> Iterator[Project]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README.md").write_text("hello\n")
    _git("add", "README.md", cwd=repo)
    _git("commit", "-q", "-m", "first", cwd=repo)
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    _git("push", "-q", str(remote), "main", cwd=repo)
    worktree = repo / ".worktrees" / "w1"
    _git("worktree", "add", "-q", "-b", "exo/w1", str(worktree), cwd=repo)
    state = repo / ".exomonad"
    state.mkdir()
    (state / "lead.token").write_text("lead-secret\n")
    (state / "tokens.json").write_text('{"lead-secret": {"role": "lead", "name": "lead"}}')
    sock = state / "server.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock))
    server.listen()
    info = {"pid": os.getpid(), "socket": str(sock), "started_at": time.time(),
            "version": __version__}  # fmt: skip
    (state / "server.pid").write_bytes(orjson.dumps(info))
    received: list[bytes] = []
    stop = threading.Event()
    thread = threading.Thread(target=_serve, args=(server, received, stop), daemon=True)
    thread.start()
    common = git_common_dir(worktree)
    assert common == repo / ".git"
    spec = SandboxSpec(worktree=worktree, project_root=repo, state_dir=state,
                       git_common_dir=common)  # fmt: skip
    try:
        yield Project(repo, worktree, remote, state, sock, spec, received)
    finally:
        stop.set()
        thread.join(5)
        server.close()


# --- argv order (unit) ---------------------------------------------------------------


def _pairs(argv: list[str], flag: str) -> list[tuple[int, str]]:
    return [(i, argv[i + 1]) for i, a in enumerate(argv) if a == flag]


def _index(argv: list[str], *seq: str) -> int:
    for i in range(len(argv) - len(seq) + 1):
        if tuple(argv[i : i + len(seq)]) == seq:
            return i
    raise AssertionError(f"{seq} not in {argv}")


def _layout(tmp_path: Path) -> SandboxSpec:
    project = tmp_path / "p"
    dirs = ("p/.worktrees/w", "p/.git/hooks", "p/.git/objects", "p/.git/worktrees/w",
            "p/.exomonad", "ro", "rw", "rw/inner")  # fmt: skip
    for d in dirs:
        (tmp_path / d).mkdir(parents=True)
    git, private = project / ".git", project / ".git/worktrees/w"
    (git / "config").write_text("[core]\n")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (project / ".worktrees/w/.git").write_text(f"gitdir: {private}\n")
    (private / "commondir").write_text("../..\n")
    (private / "gitdir").write_text(f"{project}/.worktrees/w/.git\n")
    (private / "HEAD").write_text("ref: refs/heads/exo/w\n")
    return SandboxSpec(project / ".worktrees/w", project, project / ".exomonad",
                       project / ".git", extra_ro=[tmp_path / "rw/inner"],
                       extra_rw=[tmp_path / "rw", tmp_path / "ro"])  # fmt: skip


def test_argv_binds_in_covering_order(tmp_path: Path) -> None:
    spec = _layout(tmp_path)
    argv = bwrap_argv(["gemini", "--yolo"], spec)
    p, git = str(tmp_path / "p"), str(tmp_path / "p/.git")
    root = _index(argv, "--ro-bind", "/", "/")
    tmp = _index(argv, "--tmpfs", "/tmp")
    project = _index(argv, "--ro-bind", p, p)
    worktree = _index(argv, "--bind", f"{p}/.worktrees/w", f"{p}/.worktrees/w")
    rw = _index(argv, "--bind", str(tmp_path / "rw"), str(tmp_path / "rw"))
    common = _index(argv, "--ro-bind", git, git)
    # The common dir read-only, then only what the worker's git writes (sandbox_git).
    subs = ("objects", "refs/heads/exo", "logs/refs/heads/exo/w", "worktrees/w")
    writable = [_index(argv, "--bind", f"{git}/{sub}", f"{git}/{sub}") for sub in subs]
    assert [a for i, a in _pairs(argv, "--bind") if a.startswith(git)] == [
        f"{git}/{sub}" for sub in subs
    ]
    ro = _index(argv, "--ro-bind", str(tmp_path / "rw/inner"), str(tmp_path / "rw/inner"))
    state = _index(argv, "--tmpfs", f"{p}/.exomonad")
    assert root < tmp < project < worktree < rw < common < min(writable)
    assert max(writable) < ro < state
    assert argv[state - 2 : state] == ["--perms", "0700"]
    end = argv.index("--")
    assert argv[end - 2 : end] == ["--chdir", f"{p}/.worktrees/w"]
    # The TIOCSTI guard execs the command: python -I -c <filter> gemini --yolo.
    assert argv[end + 1 : end + 3] == [sys.executable, "-I"]
    assert argv[end + 3] == "-c"
    assert "0x5412" in argv[end + 4]
    assert argv[end + 5 :] == ["gemini", "--yolo"]
    assert {"--die-with-parent", "--unshare-pid"} <= set(argv[:3])
    assert not {"--new-session", "--unshare-net", "--unshare-all"} & set(argv)
    assert os.path.basename(argv[0]) == "bwrap"


def test_argv_binds_the_server_socket_after_hiding_the_state_dir(tmp_path: Path) -> None:
    spec = _layout(tmp_path)
    state = spec.state_dir
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with sock:
        sock.bind(str(state / "server.sock"))
        info = {"pid": os.getpid(), "socket": str(state / "server.sock"),
                "started_at": 1.0, "version": "x"}  # fmt: skip
        (state / "server.pid").write_bytes(orjson.dumps(info))
        argv = bwrap_argv(["true"], replace(spec, new_session=True, private_tmp=False))
    hidden = _index(argv, "--tmpfs", str(state))
    sock_bind = _index(argv, "--ro-bind", str(state / "server.sock"), str(state / "server.sock"))
    shown = state / "sandbox" / "server.pid"
    info_bind = _index(argv, "--ro-bind", str(shown), str(state / "server.pid"))
    assert hidden < sock_bind
    assert hidden < info_bind
    # The copy names pid 1 (bwrap's reaper in the sandbox's pid namespace), not ours.
    assert orjson.loads(shown.read_bytes()) == {**info, "pid": 1}
    assert "--new-session" in argv
    assert argv[argv.index("--") + 1 :] == ["true"]  # no tty to guard: no TIOCSTI filter
    assert "/tmp" not in [a for _, a in _pairs(argv, "--tmpfs")]


def test_argv_without_a_live_server_binds_nothing_from_the_state_dir(tmp_path: Path) -> None:
    spec = _layout(tmp_path)
    info = {"pid": 2**22 + 1, "socket": "/nonexistent.sock", "started_at": 1.0, "version": "x"}
    (spec.state_dir / "server.pid").write_bytes(orjson.dumps(info))
    argv = bwrap_argv(["true"], spec)
    assert not [s for _, s in _pairs(argv, "--ro-bind") if s.startswith(str(spec.state_dir))]


def test_argv_refuses_missing_paths_and_empty_commands(tmp_path: Path) -> None:
    spec = _layout(tmp_path)
    with pytest.raises(SandboxError, match=r"extra_rw path .*nope does not exist"):
        bwrap_argv(["true"], replace(spec, extra_rw=[tmp_path / "nope"]))
    with pytest.raises(SandboxError, match="worktree"):
        bwrap_argv(["true"], replace(spec, worktree=tmp_path / "gone"))
    with pytest.raises(SandboxError, match="empty command"):
        bwrap_argv([], spec)


def test_require_bwrap_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:  # fmt: skip
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError) as err:
        require_bwrap()
    assert "apt-get install bubblewrap" in str(err.value)
    assert "\n" not in str(err.value)


def test_require_bwrap_reports_a_bwrap_that_cannot_make_namespaces(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                    "exit 1\n")  # fmt: skip
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    _probe.cache_clear()
    with pytest.raises(SandboxError, match=r"cannot create a sandbox here .*No permissions"):
        require_bwrap()
    _probe.cache_clear()


# --- real bwrap ------------------------------------------------------------------------


@pytest.mark.integration
def test_tokens_and_state_are_invisible(project: Project) -> None:
    out = project.run(f"cat {project.state}/lead.token")
    assert out.returncode != 0
    assert "lead-secret" not in out.stdout
    listing = project.run(f"ls -A {project.state}")
    assert listing.returncode == 0
    assert sorted(listing.stdout.split()) == ["server.pid", "server.sock"]
    assert project.run(f"cat {project.state}/tokens.json").returncode != 0
    assert (project.state / "lead.token").read_text() == "lead-secret\n"  # host untouched


@pytest.mark.integration
def test_host_processes_are_invisible(project: Project) -> None:
    """Without a pid namespace, /proc/<pid>/root of any same-user process outside is the
    host's file system, tokens included: the sandbox must not see those processes."""
    outside = subprocess.Popen(["sleep", "60"])
    try:
        token = f"/proc/{outside.pid}/root{project.state}/lead.token"
        out = project.run(f"cat {token}; test -e /proc/{outside.pid}; echo gone=$?; ls /proc")
        assert "lead-secret" not in out.stdout
        assert "gone=1" in out.stdout
        pids = {int(n) for n in out.stdout.split() if n.isdigit()}
        assert pids
        assert max(pids) < 100
    finally:
        outside.kill()
        outside.wait()


@pytest.mark.integration
def test_project_root_is_read_only(project: Project) -> None:
    out = project.run(f"touch {project.repo}/evil; echo x >> {project.repo}/README.md")
    assert out.returncode != 0
    assert "Read-only file system" in out.stderr
    assert not (project.repo / "evil").exists()
    assert (project.repo / "README.md").read_text() == "hello\n"


@pytest.mark.integration
def test_etc_and_home_are_read_only_unless_extra_rw(project: Project, tmp_path: Path) -> None:
    assert project.run("touch /etc/exomonad-sandbox-x").returncode != 0
    assert not Path("/etc/exomonad-sandbox-x").exists()
    home = Path.home()
    assert project.run("touch $HOME/exomonad-sandbox-x").returncode != 0
    assert not (home / "exomonad-sandbox-x").exists()
    agent_home = tmp_path / "agent-home"
    agent_home.mkdir()
    out = project.run(f"echo ok > {agent_home}/settings.json",
                      replace(project.spec, extra_rw=[agent_home]))  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (agent_home / "settings.json").read_text() == "ok\n"


@pytest.mark.integration
def test_worktree_is_writable_and_the_cwd(project: Project) -> None:
    out = project.run("pwd; echo made-inside > new.txt")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(project.worktree)
    assert (project.worktree / "new.txt").read_text() == "made-inside\n"


@pytest.mark.integration
def test_private_tmp(project: Project) -> None:
    marker = Path("/tmp") / f"exomonad-sandbox-{os.getpid()}"
    out = project.run(f"echo x > {marker} && cat {marker}")
    assert out.returncode == 0
    assert out.stdout == "x\n"
    assert not marker.exists()


@pytest.mark.integration
def test_git_commit_in_the_worktree(project: Project) -> None:
    out = project.run("echo work > work.txt && git add work.txt && git commit -q -m 'by w1'")
    assert out.returncode == 0, out.stderr
    assert _git("log", "-1", "--format=%s", "exo/w1", cwd=project.repo) == "by w1"
    assert _git("log", "-1", "--format=%s", "main", cwd=project.repo) == "first"


@pytest.mark.integration
def test_git_push_to_a_writable_bare_remote(project: Project) -> None:
    main_before = _git("rev-parse", "main", cwd=project.remote)
    spec = replace(project.spec, extra_rw=[project.remote])
    script = f"git commit -q --allow-empty -m pushed && git push -q {project.remote} exo/w1"
    out = project.run(script, spec)
    assert out.returncode == 0, out.stderr
    head = _git("rev-parse", "HEAD", cwd=project.worktree)
    assert _git("rev-parse", "exo/w1", cwd=project.remote) == head
    assert _git("rev-parse", "main", cwd=project.remote) == main_before
    # Without extra_rw the remote is read-only like everything else.
    assert project.run(f"git push -q {project.remote} exo/w1:other").returncode != 0


@pytest.mark.integration
def test_git_hooks_and_config_are_read_only(project: Project) -> None:
    git = project.repo / ".git"
    config_before = (git / "config").read_text()
    hook = project.run(f"echo 'touch /pwned' > {git}/hooks/pre-commit")
    assert hook.returncode != 0
    assert not (git / "hooks" / "pre-commit").exists()
    alias = project.run("git config --local alias.x '!touch /pwned'")
    assert alias.returncode != 0
    assert project.run("git config --local core.hooksPath /tmp").returncode != 0
    assert project.run(f"echo x >> {git}/info/exclude").returncode != 0
    assert (git / "config").read_text() == config_before
    assert not (git / "config.lock").exists()
    lead_head = (git / "HEAD").read_text()
    assert project.run(f"echo 'ref: refs/heads/exo/w1' > {git}/HEAD").returncode != 0
    assert (git / "HEAD").read_text() == lead_head


@pytest.mark.integration
def test_a_missing_hooks_dir_cannot_be_created(project: Project) -> None:
    hooks = project.repo / ".git" / "hooks"
    for item in hooks.iterdir():
        item.unlink()
    hooks.rmdir()
    out = project.run(f"mkdir -p {hooks} && echo x > {hooks}/pre-commit")
    assert out.returncode != 0
    assert not (hooks / "pre-commit").exists()


@pytest.mark.integration
def test_the_server_socket_answers_from_inside(project: Project) -> None:
    client = (
        "import socket, sys\n"
        "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        f"c.connect({str(project.sock)!r})\n"
        "c.sendall(b'hello from the sandbox')\n"
        "sys.stdout.write(c.recv(1024).decode())\n"
    )
    out = project.run_argv([sys.executable, "-c", client])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "server got: hello from the sandbox"
    assert project.received == [b"hello from the sandbox"]
    # The clients' own lookup (pid file + liveness + socket) finds the server.
    finder = "import sys; from exomonad.uds import live_server as s; print(s(sys.argv[1])[1])"
    found = project.run_argv([sys.executable, "-c", finder, str(project.state)])
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == str(project.sock)


def test_the_hook_front_reaches_the_server_from_inside(project: Project) -> None:
    """``exomonad-hook`` (sh and netcat-openbsd) in the sandbox: the state dir is hidden
    but its socket is there, so a worker's hook is answered without the Python client
    (``false`` stands for it: had the front handed over, there would be no answer). The
    installed front: the sandbox binds this install back even when it lives under the
    private ``/tmp``."""
    front = Path(sys.executable).parent / "exomonad-hook"  # as installed, beside exomonad
    env = ["env", f"EXOMONAD_DIR={project.state}", "EXOMONAD_TOKEN=exo_w1"]
    hook = ["false", "hook", "before-tool", "--runtime", "gemini"]
    out = project.run_argv([*env, str(front), *hook])
    assert (out.returncode, out.stdout) == (0, '{"decision": "allow"}\n'), out.stderr
    assert project.received[-1].startswith(b"POST /hook/before-tool?runtime=gemini&reply=text ")


# --- a TUI in a tmux pane: why no --new-session -----------------------------------------

WINCH = """
import os, signal, sys
out = sys.argv[1]
def note(*_):
    with open(out, "a") as fh:
        fh.write("winch %d\\n" % os.get_terminal_size(0).columns)
signal.signal(signal.SIGWINCH, note)
with open(out, "a") as fh:
    fh.write("ready\\n")
while True:
    signal.pause()
"""


def _in_pane(server: TmuxServer, project: Project, spec: SandboxSpec, script: str) -> str:
    argv = bwrap_argv(["bash", "-ic", script], spec)
    return server.new_pane("env", f"PYTHONPATH={SRC}", *argv)


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


@pytest.mark.integration
@pytest.mark.parametrize("new_session", [False, True])
def test_tui_keeps_its_terminal_only_without_new_session(
    tmux_server: TmuxServer, project: Project, tmp_path: Path, new_session: bool
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    spec = replace(project.spec, extra_rw=[box], new_session=new_session)
    probe = (f"{{ tty; test -t 0 && echo isatty; (exec 3</dev/tty) && echo devtty; "
             f"stty size; }} > {box}/tty.txt 2>&1; "
             f"exec {sys.executable} -c '{WINCH}' {box}/winch.txt")  # fmt: skip
    pane = _in_pane(tmux_server, project, spec, probe)
    retry_until(lambda: "ready" in _read(box / "winch.txt"), timeout=15,
                message=f"pane did not start: {tmux_server.fmt(pane, '#{pane_dead}')}")  # fmt: skip
    tty = (box / "tty.txt").read_text()
    assert "isatty" in tty
    assert "not a tty" not in tty
    assert tty.splitlines()[0] == "/dev/console"  # bwrap's --dev shows it as the console
    window = tmux_server.fmt(pane, "#{window_id}")
    tmux_server.tmux("resize-window", "-t", window, "-x", "97", "-y", "30")
    if new_session:
        # setsid cut the controlling terminal: no /dev/tty, and the resize is never
        # signalled (the pane's foreground group is bwrap's, outside the session).
        assert "devtty" not in tty
        assert "No such device or address" in tty
        with contextlib.suppress(AssertionError):
            retry_until(lambda: "winch" in _read(box / "winch.txt"), timeout=2)
        assert "winch" not in _read(box / "winch.txt")
    else:
        assert "devtty" in tty
        retry_until(lambda: "winch 97" in _read(box / "winch.txt"), timeout=10,
                    message=_read(box / "winch.txt"))  # fmt: skip


@pytest.mark.integration
def test_tiocsti_cannot_type_into_the_panes_shell(
    tmux_server: TmuxServer, project: Project, tmp_path: Path
) -> None:
    """Without --new-session the worker keeps the pane's tty; TIOCSTI would queue input
    that the pane's shell (outside the sandbox) runs after the worker exits."""
    box = tmp_path / "box"
    box.mkdir()
    pwned, done = tmp_path / "pwned", tmp_path / "done"
    inject = (
        "import fcntl, termios, sys\n"
        "try:\n"
        f"    for c in b'touch {pwned}\\n':\n"
        "        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n"
        "    print('injected')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    spec = replace(project.spec, extra_rw=[box])
    argv = bwrap_argv(["sh", "-c", f'"$0" -c "$1" > {box}/out', sys.executable, inject], spec)
    pane = tmux_server.new_pane("bash", "--norc", "--noprofile")
    tmux_server.tmux("send-keys", "-t", pane, "-l", shlex.join(argv))
    tmux_server.tmux("send-keys", "-t", pane, "Enter")
    retry_until(lambda: _read(box / "out") != "", timeout=15, message="sandbox did not run")
    assert _read(box / "out") == "refused 1\n"  # EPERM from the seccomp filter
    # Anything injected would be queued before this, so the shell would have run it.
    tmux_server.tmux("send-keys", "-t", pane, "-l", f"touch {done}")
    tmux_server.tmux("send-keys", "-t", pane, "Enter")
    retry_until(done.exists, timeout=10, message="the pane's shell did not run our command")
    assert not pwned.exists()


def test_a_program_installed_by_npm_under_tmp_brings_its_node_modules(tmp_path: Path) -> None:
    """A checkout under ``/tmp`` (CI's fresh clone) runs the pinned CLIs from its
    ``node_modules``: ``.bin/codex`` links into ``@openai/codex``, which runs a binary from
    another package; the private ``/tmp`` hid all of it from the sandboxed command."""
    modules = tmp_path / "checkout" / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    (modules / "@openai/codex/bin").mkdir(parents=True)
    (modules / "@openai/codex-linux-x64/vendor").mkdir(parents=True)
    tool = modules / "@openai/codex/bin/codex.js"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (modules / ".bin/codex").symlink_to("../@openai/codex/bin/codex.js")
    assert str(tmp_path).startswith("/tmp/")
    argv = bwrap_argv([str(modules / ".bin/codex"), "exec"], _layout(tmp_path))
    assert (str(modules), str(modules)) in [
        (argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind"
    ]
    assert _index(argv, "--tmpfs", "/tmp") < _index(argv, "--ro-bind", str(modules))
