"""Run a worker's command under bubblewrap (``bwrap``): ``[workers] sandbox = "bwrap"``.

The worker sees the whole file system read-only, may write only its own git worktree,
what its own git needs of the repository's shared ``.git`` (objects, its branch's ref
directory, its private git dir: :mod:`exomonad.sandbox_git`) and the paths the caller
adds, and does not see the project's ``.exomonad/`` state (tokens,
databases, policy, config) except the server's socket and a server-info file that lets
the hook client and ``exomonad mcp-stdio`` reach the server. See ``docs/sandbox.md`` for
exactly what this stops and what it does not.

Bind order matters, because a later mount covers an earlier one; :func:`bwrap_argv`
emits, in this order:

1. ``--ro-bind / /``, a fresh ``/dev`` and ``/proc`` (in a new pid namespace), a private
   ``/tmp``;
2. the project root read-only (explicitly, so it stays read-only whatever comes before);
3. the writable places: the worktree (inside the read-only project root), ``extra_rw``;
   then ``mounts`` (a worker's private agent config homes, see
   :mod:`exomonad.sandbox_homes`);
4. the git common dir read-only, then the parts of it the worker's git writes
   (:func:`~exomonad.sandbox_git.git_binds`); ``extra_ro``;
5. a tmpfs over the state dir, then the server socket and the server-info file back in.

Bind sources are resolved in the host's file system, so 5 can bind files from the very
directory it has just hidden.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from exomonad.errors import SandboxError
from exomonad.sandbox_git import git_binds
from exomonad.sandbox_homes import Mount, private_homes
from exomonad.server.pidfile import read_server_info

__all__ = [
    "INSTALL_HINT",
    "SANDBOX_INFO_DIR",
    "SandboxSpec",
    "bwrap_argv",
    "git_common_dir",
    "require_bwrap",
    "sandbox_server_info",
    "worker_argv",
]

INSTALL_HINT = "apt-get install bubblewrap"
#: Under the state dir: the server-info file as a sandboxed process must see it.
SANDBOX_INFO_DIR = "sandbox"
#: The pid of bwrap's reaper inside the sandbox's pid namespace (always alive there).
_SANDBOX_PID = 1
#: Run inside the sandbox before the worker's command (``python -I -c ... cmd...``): a
#: seccomp filter that makes ``ioctl(TIOCSTI)`` / ``ioctl(TIOCLINUX)`` fail with EPERM,
#: then ``exec``. Without ``--new-session`` the worker keeps the pane's tty as its
#: controlling terminal, and TIOCSTI would push keystrokes into it, which the pane's
#: shell outside the sandbox runs once the worker exits. Foreign-ABI syscalls (i386,
#: x32), which would bypass the number check, are refused too. Fails closed (exit 126).
_NO_TIOCSTI = r"""
import ctypes, os, platform, struct, sys
ARCH, IOCTL = {"x86_64": (0xC000003E, 16), "aarch64": (0xC00000B7, 29)}[platform.machine()]
def op(code, jt, jf, k): return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    op(0x20, 0, 0, 4), op(0x15, 0, 7, ARCH),  # arch must be ours, else deny
    op(0x20, 0, 0, 0), op(0x35, 5, 0, 0x40000000), op(0x15, 0, 3, IOCTL),  # nr: x32 denied
    op(0x20, 0, 0, 24), op(0x15, 2, 0, 0x5412), op(0x15, 1, 0, 0x541C),  # TIOCSTI, TIOCLINUX
    op(0x06, 0, 0, 0x7FFF0000), op(0x06, 0, 0, 0x00050001),  # allow; EPERM
])
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
fprog = Prog(len(prog) // 8, prog)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):
    sys.stderr.write(f"exomonad sandbox: seccomp failed: {os.strerror(ctypes.get_errno())}\n")
    sys.exit(126)
os.execvp(sys.argv[1], sys.argv[1:])
"""
_SECCOMP_MACHINES = ("x86_64", "aarch64")


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed worker may see and write.

    Parameters
    ----------
    worktree:
        The worker's git worktree: read-write, and the working directory.
    project_root:
        The lead's checkout: read-only (the worktree inside it stays writable).
    state_dir:
        The project's ``.exomonad/``: hidden behind a tmpfs, except the server's socket
        and a server-info file (see :func:`sandbox_server_info`).
    git_common_dir:
        The repository's common ``.git`` (``git rev-parse --git-common-dir``, see
        :func:`git_common_dir`): read-only but for ``objects/``, the directory of the
        worker's branch ref and reflog, and its private git dir
        (:func:`~exomonad.sandbox_git.git_binds`). ``None`` binds nothing (the worker
        then cannot commit unless the common dir is inside the worktree).
    extra_ro, extra_rw:
        More paths to bind read-only / read-write at their own place, e.g. the spool
        dir for long messages (read-only). They must exist. ``extra_ro`` wins over
        ``extra_rw`` and ``mounts``; the hidden state dir wins over all.
    mounts:
        Binds from one place to another, in order (a later one covers an earlier one),
        after ``extra_rw``: a worker's private agent config homes over the real ones
        (:func:`exomonad.sandbox_homes.private_homes`). Sources must exist; destinations
        must be absolute.
    new_session:
        Pass ``--new-session`` (``setsid``): only for a worker without a terminal. It
        cuts a TUI from its controlling tty: no job control, no ``/dev/tty``, and no
        ``SIGWINCH`` when the pane is resized (tested in ``tests/test_sandbox.py``).
        Without it (the default) the command is started through a seccomp filter that
        refuses ``ioctl(TIOCSTI)``, so the worker cannot type into the pane's tty.
    private_tmp:
        A fresh tmpfs on ``/tmp`` (hides tmux's and ssh-agent's sockets and other
        agents' files there).

    The environment is not touched: bwrap passes its own environment to the command
    unchanged, so the spawner sets it on the ``bwrap`` process.
    """

    worktree: Path
    project_root: Path
    state_dir: Path
    git_common_dir: Path | None = None
    extra_ro: Sequence[Path] = field(default_factory=tuple)
    extra_rw: Sequence[Path] = field(default_factory=tuple)
    mounts: Sequence[Mount] = field(default_factory=tuple)
    new_session: bool = False
    private_tmp: bool = True
    branch: str | None = None

    def __post_init__(self) -> None:
        # Frozen means frozen: keep our own copies of the sequences.
        object.__setattr__(self, "extra_ro", tuple(Path(p) for p in self.extra_ro))
        object.__setattr__(self, "extra_rw", tuple(Path(p) for p in self.extra_rw))
        object.__setattr__(self, "mounts", tuple(self.mounts))


def _real(path: Path, what: str) -> str:
    """``path`` made absolute with symlinks resolved; it must exist."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        raise SandboxError(f"sandbox: {what} {path} does not exist")
    return real


def _absolute(path: Path) -> str:
    """``path`` as a mount destination: absolute, else refused."""
    if not path.is_absolute():
        raise SandboxError(f"sandbox: mount destination {path} is not absolute")
    return str(path)


def _programs_under_tmp(command: Sequence[str]) -> list[str]:
    """Directories under ``/tmp`` the sandboxed command needs to run (this Python's
    prefixes, for the seccomp wrapper; ExoMonad's own package, which the worker's hooks
    and MCP bridge import; the program's directory; ``PATH`` entries), bound back
    read-only over the private ``/tmp``. A program inside a ``node_modules`` (an npm
    install in a checkout under ``/tmp``) brings the whole of it: its ``.bin`` link, its
    package and the packages it runs (Codex's platform binary is a package of its own)."""
    found = shutil.which(command[0]) if command else None
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    programs = [os.path.abspath(found), os.path.realpath(found)] if found else []
    candidates = [sys.prefix, sys.base_prefix, os.path.dirname(sys.executable), package,
                  *(os.environ.get("PATH", "").split(os.pathsep)),
                  *(_install_dir(os.path.dirname(p)) for p in programs)]  # fmt: skip
    out: list[str] = []
    for path in candidates:
        real = os.path.realpath(path) if path else ""
        if real.startswith("/tmp/") and os.path.isdir(real) and real not in out:
            out.append(real)
    return out


def _install_dir(folder: str) -> str:
    """The nearest ``node_modules`` at or above ``folder``, else ``folder``."""
    parts = folder.split(os.sep)
    if "node_modules" not in parts:
        return folder
    return os.sep.join(parts[: len(parts) - parts[::-1].index("node_modules")])


def sandbox_server_info(state_dir: Path) -> tuple[Path, str] | None:
    """Write the server-info file a sandboxed process must see; return it and the socket.

    The server's own ``server.pid`` names its pid in the host's pid namespace, which the
    sandbox cannot see (it has its own, see ``docs/sandbox.md``), so a liveness check
    with ``kill(pid, 0)`` there would call a live server dead. This writes a copy at
    ``<state_dir>/sandbox/server.pid`` naming pid 1, bwrap's reaper, alive exactly as
    long as the sandbox. Returns ``None`` (and writes nothing) when no live server with
    a socket runs for ``state_dir``.
    """
    info = read_server_info(state_dir)
    if info is None or not info.alive or not os.path.exists(info.socket):
        return None
    folder = state_dir / SANDBOX_INFO_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / "server.pid"
    data = orjson.dumps({**info.__dict__, "pid": _SANDBOX_PID})
    with contextlib.suppress(OSError):
        if path.read_bytes() == data:
            return path, info.socket
    tmp = folder / f".server.pid.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path, info.socket


def bwrap_argv(command: Sequence[str], spec: SandboxSpec) -> list[str]:
    """The full ``bwrap`` command line that runs ``command`` in ``spec``'s sandbox.

    Parameters
    ----------
    command:
        The worker's command (program and arguments), run with the worktree as cwd.
    spec:
        What the sandbox binds; every path in it must exist.

    Returns
    -------
    list[str]
        ``[bwrap, options..., "--", *command]``; ``bwrap`` is the one on ``PATH`` (call
        :func:`require_bwrap` first for a clear error when it is missing or unusable).

    Raises
    ------
    SandboxError
        ``command`` is empty, a path of ``spec`` does not exist, or the worktree's
        link to the git common dir or its branch cannot be confined
        (:func:`~exomonad.sandbox_git.git_binds`).

    Notes
    -----
    Side effects: refreshes ``<state_dir>/sandbox/server.pid`` when a server is running
    (:func:`sandbox_server_info`); makes the worker's branch ref directory and reflog
    in the git common dir if missing (:func:`~exomonad.sandbox_git.git_binds`). The
    network namespace is shared: the model's API must stay reachable.
    """
    if not command:
        raise SandboxError("sandbox: empty command")
    worktree = _real(spec.worktree, "worktree")
    project = _real(spec.project_root, "project root")
    state = _real(spec.state_dir, "state dir")
    common = None if spec.git_common_dir is None else _real(spec.git_common_dir, "git dir")
    extra_rw = [_real(p, "extra_rw path") for p in spec.extra_rw]
    extra_ro = [_real(p, "extra_ro path") for p in spec.extra_ro]
    mounts = [(_real(m.source, "mount source"), _absolute(m.dest), m.writable)
              for m in spec.mounts]  # fmt: skip

    argv = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--unshare-pid"]
    if spec.new_session:
        argv.append("--new-session")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if spec.private_tmp:
        argv += ["--tmpfs", "/tmp"]
        for path in _programs_under_tmp(command):  # e.g. a virtualenv made under /tmp
            argv += ["--ro-bind", path, path]
    argv += ["--ro-bind", project, project]
    for path in (worktree, *extra_rw):
        argv += ["--bind", path, path]
    for source, dest, writable in mounts:
        argv += ["--bind" if writable else "--ro-bind", source, dest]
    if common is not None:
        argv += git_binds(worktree, common, spec.branch)
    for path in extra_ro:
        argv += ["--ro-bind", path, path]
    argv += ["--perms", "0700", "--tmpfs", state]
    served = sandbox_server_info(Path(state))
    if served is not None:
        info, sock = served[0], os.path.realpath(served[1])
        # connect(2) needs no write access to the socket's mount: read-only suffices.
        argv += ["--ro-bind", sock, sock]
        argv += ["--ro-bind", str(info), os.path.join(state, "server.pid")]
    argv += ["--chdir", worktree, "--"]
    if not spec.new_session and platform.machine() in _SECCOMP_MACHINES:
        argv += [sys.executable or "python3", "-I", "-c", _NO_TIOCSTI]
    return [*argv, *command]


def git_common_dir(worktree: Path) -> Path | None:
    """The common ``.git`` of the repository ``worktree`` belongs to, or None."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(worktree), "rev-parse", "--path-format=absolute",
             "--git-common-dir"],
            capture_output=True, text=True, check=False, timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip()
    return Path(out) if proc.returncode == 0 and out else None


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot make our kind of sandbox here, or None; run once per path."""
    try:
        proc = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc",
             "/proc", "true"],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def require_bwrap() -> str:
    """The path of a ``bwrap`` that works here.

    Raises
    ------
    SandboxError
        ``bwrap`` is not on ``PATH`` (the message says how to install it), or it cannot
        create namespaces here (probed once with ``bwrap --ro-bind / / ... true``).
    """
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError(
            f'sandbox = "bwrap" needs bubblewrap, which is not installed: {INSTALL_HINT}'
        )
    why = _probe(path)
    if why is not None:
        raise SandboxError(
            f"{path} cannot create a sandbox here ({why}): it needs root or unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 "
            "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for "
            "bwrap); in a container, run it with --privileged or a seccomp profile that "
            "allows unshare/mount"
        )
    return path


def worker_argv(command: Sequence[str], *, sandbox: str, worktree: str | None,
                state_dir: Path, name: str, branch: str | None = None,
                team: str | None = None) -> list[str]:  # fmt: skip
    """A worker's command as ExoMonad runs it: unchanged, or under bwrap (``[workers]
    sandbox = "bwrap"``) with its worktree writable, its own spool directory (worker
    ``name`` of ``team``: :func:`~exomonad.panes.spool.recipient_dir`; without a team,
    the whole spool dir) readable and private copies of the agents' config homes
    (``~/.gemini``, ``~/.codex``) in place of the user's, made afresh for worker
    ``name`` (:mod:`exomonad.sandbox_homes`); ``branch``, the one ExoMonad gave it, is
    the only branch its git may write. Found probing: with the whole spool dir bound, a
    worker's code read the lead's long messages to every other worker.

    Raises
    ------
    SandboxError
        bwrap is missing or unusable, the worker has no worktree to confine it to, or
        its private homes could not be made.
    InvalidNameError
        ``name`` could escape its directory.
    """
    if sandbox == "none":
        return list(command)
    if worktree is None:
        raise SandboxError('sandbox = "bwrap" needs [workers] worktree = true')
    require_bwrap()
    from exomonad.panes.spool import default_spool_dir, recipient_dir

    spool = default_spool_dir()
    if team is not None:
        spool = recipient_dir(spool, team, name)
    spool.mkdir(mode=0o700, parents=True, exist_ok=True)
    state = state_dir.resolve()
    homes = private_homes(state / SANDBOX_INFO_DIR, name)
    wt = Path(worktree)
    spec = SandboxSpec(worktree=wt, project_root=state.parent, state_dir=state,
                       git_common_dir=git_common_dir(wt), extra_ro=(spool,),
                       mounts=tuple(homes), branch=branch)  # fmt: skip
    return bwrap_argv(command, spec)
