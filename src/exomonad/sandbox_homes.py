"""Private agent config homes for sandboxed workers (``~/.gemini``, ``~/.codex``).

An agent CLI runs what its config home tells it to: Gemini CLI the hooks, MCP server
commands and ``tools.discoveryCommand`` of ``~/.gemini/settings.json`` (and the
variables of ``~/.gemini/.env``, its extensions, trusted folders and hooks), Codex the
``notify`` program, MCP servers and hooks of ``$CODEX_HOME/config.toml``. A sandboxed
worker that could write the user's real homes could therefore run code *outside* the
sandbox, the next time the user's own CLI, or an unsandboxed worker, starts.

So each sandboxed worker gets a private home per agent, made afresh at every spawn under
``<state_dir>/sandbox/homes/<worker>/<agent>`` (the state dir is hidden inside the
sandbox; bind sources are resolved on the host) and bound at the real home's path, so
the CLI finds it where it looks, with ``HOME`` and ``CODEX_HOME`` unchanged. What goes
in, per agent (:data:`GEMINI`, :data:`CODEX`):

* ``copied``: files the CLI needs to start and authenticate (settings, credentials,
  installation id, trust lists), copied with mode 0600. The worker may change its copy;
  the change dies with the home at its next spawn.
* ``trees``: small directories the CLI writes into at start (Codex installs its system
  skills under ``skills/.system``), copied (modes kept, symlinks copied as links).
* ``read_only``: directories of the user's own extensions, commands, policies...,
  bound read-only from the real home: seen, never copied, never written.

Everything else (``~/.gemini/tmp``, ``history``, ``~/.codex/sessions``, ``log``, ...)
stays out: the worker starts with none of it and what it writes there is discarded. The
old home is removed without following a symlink and without recursion (``_Sweep``);
removing it never stops a spawn.

Credentials are copies too, and a refresh inside stays inside. For Gemini that is
harmless: Google's OAuth refresh token does not rotate, so the user's file keeps working
and the worker's next copy starts from it. Codex's ChatGPT refresh token is single-use
(rotated at each refresh), and Codex 0.169 saves ``auth.json`` by writing ``.auth-XXXX``
and renaming it over ``auth.json`` (measured with strace on ``codex login
--with-api-key``, the same auth storage; the inode changes), which no
bind of the one file survives (``EBUSY``) and only write access to the real directory
(``config.toml`` included) would allow. So a worker that refreshes (Codex does when the
token is eight days old or refused) leaves the user's ``auth.json`` holding a used
refresh token: the user's Codex must log in again. API-key auth is not affected.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from exomonad.errors import SandboxError
from exomonad.teams.paths import sanitize_path_name

__all__ = ["AGENT_HOMES", "CODEX", "GEMINI", "HOMES_DIR", "AgentHome", "Mount", "private_homes"]

#: Under the sandbox dir (``<state_dir>/sandbox``): one directory per worker.
HOMES_DIR = "homes"
#: Under :data:`HOMES_DIR`: homes of earlier spawns, moved aside, then removed.
_TRASH = ".trash"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mount:
    """One bind of :class:`~exomonad.sandbox.SandboxSpec`: ``source`` (on the host) at
    ``dest`` (inside the sandbox), read-write when ``writable``."""

    source: Path
    dest: Path
    writable: bool = False


@dataclass(frozen=True)
class AgentHome:
    """What one agent CLI needs from its config home (names relative to that home).

    Parameters
    ----------
    key:
        The private home's directory name, e.g. ``"gemini"``.
    copied, trees, read_only:
        Files copied (0600), directories copied, directories bound read-only; see the
        module doc. A name missing from the real home is skipped.
    """

    key: str
    copied: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()

    def real_home(self, env: Mapping[str, str]) -> Path:
        """Where the CLI looks for its home in ``env``: ``$GEMINI_CLI_HOME/.gemini``
        (else ``~/.gemini``); ``$CODEX_HOME`` (else ``~/.codex``)."""
        if self.key == "codex":
            from exomonad.runtimes.codex_trust import codex_home

            return codex_home(env)
        base = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
        return Path(base) / ".gemini"


#: Gemini CLI 0.61 (``Storage`` in its core package): settings, its ``.env``, OAuth
#: credentials (file, or the encrypted file store), accounts, installation id, folder and
#: hook trust, memory, key bindings; the user's extensions, commands, skills, policies
#: and agents read-only. Not ``tmp/``, ``history/``, ``projects.json``.
GEMINI = AgentHome(
    key="gemini",
    copied=("settings.json", ".env", "oauth_creds.json", "gemini-credentials.json",
            "google_accounts.json", "installation_id", "user_id", "trustedFolders.json",
            "trusted_hooks.json", "policy_integrity.json", "mcp-oauth-tokens.json",
            "a2a-oauth-tokens.json", "GEMINI.md", "keybindings.json"),
    read_only=("extensions", "commands", "skills", "policies", "agents", "acknowledgments"),
)  # fmt: skip

#: Codex 0.169: its config (hook trust included: ExoMonad records it there before the
#: spawn), credentials, global instructions, MCP OAuth fallback file, ids; its skills
#: copied (it writes ``skills/.system``); the user's prompts and rules read-only. Not
#: ``sessions/``, ``log/``, ``history.jsonl``, its state databases.
CODEX = AgentHome(
    key="codex",
    copied=("config.toml", "auth.json", "AGENTS.md", "AGENTS.override.md",
            ".credentials.json", "installation_id", "version.json"),
    trees=("skills",),
    read_only=("prompts", "rules"),
)  # fmt: skip

AGENT_HOMES = (GEMINI, CODEX)


def private_homes(sandbox_dir: Path, name: str, env: Mapping[str, str] | None = None,
                  agents: tuple[AgentHome, ...] = AGENT_HOMES) -> list[Mount]:  # fmt: skip
    """Make worker ``name``'s private homes afresh; the mounts that put them in place.

    Parameters
    ----------
    sandbox_dir:
        ``<state_dir>/sandbox`` (made 0700 if missing); the homes go to
        ``homes/<name>/<agent>`` under it, ``name`` sanitised as for the worker's
        worktree and branch.
    name:
        The worker's name.
    env:
        Where the real homes are looked up (``HOME``, ``CODEX_HOME``,
        ``GEMINI_CLI_HOME``); ``os.environ`` by default: the spawner's, which the worker
        inherits.
    agents:
        The homes to privatise; one whose real home is not a directory is skipped (as
        the sandbox's read-only ``$HOME`` would leave it: absent).

    Returns
    -------
    list[Mount]
        For each agent, in covering order: the private home read-write at the real home's
        path (symlinks resolved), then its ``read_only`` dirs.

    Raises
    ------
    InvalidNameError
        ``name`` could escape its directory.
    SandboxError
        A home could not be made or seeded (the worker must not start).
    """
    env = os.environ if env is None else env
    safe = sanitize_path_name(name)
    homes = sandbox_dir / HOMES_DIR
    mine = homes / safe
    try:
        sandbox_dir.mkdir(mode=0o700, exist_ok=True)
        homes.mkdir(mode=0o700, exist_ok=True)
        _discard(homes, mine)
        mine.mkdir(mode=0o700)
    except OSError as exc:
        raise SandboxError(f"sandbox: cannot make {name!r}'s private homes in {mine}: "
                           f"{exc}") from exc  # fmt: skip
    mounts: list[Mount] = []
    for agent in agents:
        real = Path(os.path.realpath(agent.real_home(env)))
        if not real.is_dir():
            continue
        private = mine / agent.key
        try:
            mounts += _seed(agent, real, private)
        except (OSError, shutil.Error) as exc:
            raise SandboxError(f"sandbox: cannot seed {name!r}'s private {agent.key} home "
                               f"{private} from {real}: {exc}") from exc  # fmt: skip
    return mounts


def _seed(agent: AgentHome, real: Path, private: Path) -> list[Mount]:
    """Fill ``private`` from ``real``; its mounts (destinations under ``real``)."""
    private.mkdir(mode=0o700)
    mounts = [Mount(Path(os.path.realpath(private)), real, writable=True)]
    for name in agent.copied:
        data = _regular_bytes(real / name)
        if data is not None:
            _write_private(private / name, data)
    for name in agent.trees:
        if (real / name).is_dir():
            shutil.copytree(real / name, private / name, symlinks=True, ignore=_specials)
    for name in agent.read_only:
        source = os.path.realpath(real / name)
        if os.path.isdir(source):
            (private / name).mkdir(mode=0o700)  # the mount point
            mounts.append(Mount(Path(source), real / name))
    return mounts


def _regular_bytes(path: Path) -> bytes | None:
    """The content of ``path`` (symlinks followed) if it is a regular file, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block us
    except (FileNotFoundError, NotADirectoryError):
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return fh.read()


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _specials(folder: str, names: list[str]) -> set[str]:
    """For ``copytree``: leave out FIFOs, sockets and devices (symlinks stay links)."""
    out = set()
    for name in names:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            out.add(name)
    return out


def _discard(homes: Path, mine: Path) -> None:
    """Move an earlier spawn's ``mine`` aside (so the new home is fresh even if it cannot
    be removed), then remove everything aside, as far as it goes (:class:`_Sweep`)."""
    trash = homes / _TRASH
    trash.mkdir(mode=0o700, exist_ok=True)
    if os.path.lexists(mine):
        os.rename(mine, trash / secrets.token_hex(8))
    try:
        fd = os.open(trash, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        log.warning("sandbox: cannot empty %s: %s", trash, exc)
        return
    try:
        _Sweep(fd, str(trash)).run()
    finally:
        os.close(fd)


#: Directories held open at once while removing (one descriptor each); a directory
#: deeper is moved to the top of the trash, a new entry, rather than entered.
_DEPTH = 128
#: Names removed (or tried) per spawn at most; the rest waits for the next spawn.
_BUDGET = 200_000


@dataclass
class _Dir:
    """A directory being emptied: ``name`` in ``parent`` (a descriptor), open as ``fd``,
    with the ``names`` it held still to remove."""

    parent: int
    name: str
    fd: int
    names: list[str]


class _Sweep:
    """Removes the trash's entries; runs as the server, outside the sandbox, on trees a
    worker wrote and, while its old sandbox still runs, may be changing.

    So no symbolic link is ever followed: every name is reached by descriptor from its
    parent's (``*at`` calls), a directory opened ``O_PATH | O_NOFOLLOW | O_DIRECTORY``
    and, when the worker took its permissions away, chmodded through that descriptor:
    a symlink swapped in for it after it was listed fails the open, and one swapped in
    after the open is not what the descriptor names. The walk is iterative, holds at
    most :data:`_DEPTH` directories open and does at most :data:`_BUDGET` names. What
    resists is left (and logged); nothing here raises, since a trash that cannot be
    emptied must not stop a spawn (the new home is made fresh anyway).
    """

    def __init__(self, trash: int, where: str) -> None:
        self.trash, self.where = trash, where
        self.budget = _BUDGET
        self.queue: list[str] = []

    def run(self) -> None:
        try:
            self.queue = os.listdir(self.trash)
        except OSError as exc:
            log.warning("sandbox: cannot list %s: %s", self.where, exc)
            return
        while self.queue and self.budget > 0:
            name = self.queue.pop()
            try:
                left = self.entry(name)
            except Exception as exc:  # a trash entry never stops a spawn
                log.warning("sandbox: left %s in %s: %r", name, self.where, exc)
            else:
                if left:
                    log.warning("sandbox: left %s in %s: %s", name, self.where, left)
        if self.queue or self.budget <= 0:
            log.warning("sandbox: %s not emptied: %d names removed at most per spawn",
                        self.where, _BUDGET)  # fmt: skip

    def entry(self, name: str) -> str:
        """Remove trash entry ``name`` and all under it; why not all went (or "")."""
        errors: list[str] = []
        stack: list[_Dir] = []
        try:
            top = self.enter(self.trash, name, errors)
            if top is not None:
                stack.append(top)
            while stack and self.budget > 0:
                here = stack[-1]
                if not here.names:
                    stack.pop()
                    os.close(here.fd)
                    self.remove(here.parent, here.name, errors, directory=True)
                    continue
                child = here.names.pop()
                self.budget -= 1
                if len(stack) >= _DEPTH:
                    self.move_up(here.fd, child, errors)
                    continue
                sub = self.enter(here.fd, child, errors)
                if sub is not None:
                    stack.append(sub)
        finally:
            for left in stack:
                os.close(left.fd)
        return f"{len(errors)} failed, first {errors[0]}" if errors else ""

    def enter(self, parent: int, name: str, errors: list[str]) -> _Dir | None:
        """Open directory ``name`` of ``parent`` to empty it (writable first); anything
        else at ``name`` is removed, and None returned."""
        try:
            fd = self.open_writable(parent, name)
        except NotADirectoryError:  # a file, a symlink (never followed), a FIFO...
            self.remove(parent, name, errors, directory=False)
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            return None
        try:
            return _Dir(parent, name, fd, os.listdir(fd))
        except OSError as exc:
            os.close(fd)
            errors.append(f"{name}: {exc}")
            return None

    @staticmethod
    def open_writable(parent: int, name: str) -> int:
        """Directory ``name`` of ``parent`` opened for reading, ``chmod 700`` first if
        the worker took permissions away; ``NotADirectoryError`` if it is not one (a
        symlink included: never followed)."""
        path = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=parent)
        try:
            if stat.S_IMODE(os.fstat(path).st_mode) & 0o700 != 0o700:
                # fchmod refuses O_PATH descriptors; its /proc link is the directory
                # itself, whatever its name now leads to.
                os.chmod(f"/proc/self/fd/{path}", 0o700)
            return os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=path)
        finally:
            os.close(path)

    def remove(self, parent: int, name: str, errors: list[str], *, directory: bool) -> None:
        """``rmdir`` or ``unlink`` ``name`` of ``parent`` (either if it changed kind)."""
        try:
            try:
                (os.rmdir if directory else os.unlink)(name, dir_fd=parent)
            except (NotADirectoryError, IsADirectoryError):
                (os.unlink if directory else os.rmdir)(name, dir_fd=parent)
        except FileNotFoundError:
            pass
        except OSError as exc:
            errors.append(f"{name}: {exc}")

    def move_up(self, parent: int, name: str, errors: list[str]) -> None:
        """Too deep to enter: move ``name`` to the top of the trash (removed later in
        this sweep), writable first (moving a directory updates its ``..``)."""
        try:
            os.close(self.open_writable(parent, name))
        except NotADirectoryError:
            self.remove(parent, name, errors, directory=False)
            return
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            return
        new = secrets.token_hex(8)
        try:
            os.rename(name, new, src_dir_fd=parent, dst_dir_fd=self.trash)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
        else:
            self.queue.append(new)
