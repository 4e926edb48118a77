"""The project's state directory, ``.exomonad/``.

Found by walking up from the working directory to the nearest ``.exomonad/`` (one inside
a linked git worktree gives way to its project's); if there is none, it is placed at the
enclosing git repository's root, else in the working directory. ``$EXOMONAD_DIR``
overrides all of this. A hook or git's gate running for an agent uses
:func:`agent_state_dir`: never from a directory the agent chose.

It holds secrets (agent tokens, the lead's token) and the records of what agents did, so
it is private: the directory is 0700 and every file ExoMonad creates in it is 0600
(:func:`create_private`, :func:`write_private`; SQLite gives a database's ``-wal`` and
``-shm`` files its own mode). :func:`secure_state_dir`, run when the server starts,
takes group and other permissions off whatever is already there, so wider modes left by
an earlier version are tightened at the next start.

The hook client and ``exomonad mcp-stdio`` find the project with
:func:`nearest_state_dir` on every start, so importing this module costs nothing beyond
:mod:`os` (``pathlib`` and ``secrets`` are imported where they are used).
"""

from __future__ import annotations

import os

from exomonad.errors import StateDirError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = [
    "PROJECT_DIR_VARS",
    "STATE_DIR_NAME",
    "adopt_lock_journal",
    "agent_state_dir",
    "create_private",
    "ensure_state_dir",
    "find_state_dir",
    "lock_journal",
    "nearest_state_dir",
    "open_private_db",
    "secure_state_dir",
    "write_private",
]

STATE_DIR_NAME = ".exomonad"
#: Where a runtime started its session, set by it for its hooks (Claude Code; Gemini CLI
#: sets both): a ``cd`` in the agent's shell does not move it. Codex sets neither; its
#: hook runs in the session's directory.
PROJECT_DIR_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")
#: Permission bits for group and other: never set on anything in the state dir.
_SHARED_BITS = 0o077


def ensure_state_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) if needed and make it 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != 0o700:
        os.chmod(path, 0o700)
    return path


def secure_state_dir(path: Path) -> Path:
    """:func:`ensure_state_dir`, then take group/other permissions off everything in it
    (symlinks are neither followed nor changed)."""
    import contextlib
    from pathlib import Path

    ensure_state_dir(path)
    for top, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            entry = Path(top) / name
            with contextlib.suppress(OSError):  # gone meanwhile, or not ours to change
                st = entry.lstat()
                if not entry.is_symlink() and st.st_mode & _SHARED_BITS:
                    os.chmod(entry, st.st_mode & 0o7700)
    return path


def create_private(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 unless it exists (e.g. before SQLite opens
    it, which would otherwise create it with the process umask's mode)."""
    try:  # noqa: SIM105  (contextlib's imports would cost the hook client)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        pass
    return path


def open_private_db(path: Path, schema: str) -> sqlite3.Connection:
    """Open the SQLite database ``path`` (made 0600 first, its directory too if missing)
    for use from several threads under the caller's lock: autocommit, WAL,
    ``synchronous=NORMAL``, waiting up to 5 s for another writer; ``schema`` run."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    create_private(path)  # its -wal and -shm files get its 0600 too
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=5.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    db.executescript(schema)
    return db


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically by a 0600 file holding ``data`` (temp file + rename)."""
    import secrets

    tmp = path.with_name(f"{path.name}.tmp.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def nearest_state_dir(start: str | None = None) -> str | None:
    """``$EXOMONAD_DIR``, else the nearest existing ``.exomonad/`` at or above ``start``
    (default: the working directory; symlinks resolved), else None.

    One found inside a linked git worktree (a directory below a ``.git`` *file*: where
    ExoMonad puts its workers, and what they can write) gives way to one further up that
    belongs to the project the worktree is of; with none up there, it is kept (a
    person's own worktree).
    """
    env = os.environ.get("EXOMONAD_DIR")
    if env:
        return os.path.expanduser(env)
    here = os.path.realpath(start or os.getcwd())
    found: str | None = None
    linked = False  # found lies at or below a linked worktree's root
    while True:
        state = os.path.join(here, STATE_DIR_NAME)
        if os.path.isdir(state):
            if found is None:
                found = state
            elif linked:
                return state
        if found is not None:
            git = os.path.join(here, ".git")
            if os.path.isdir(git):
                return found  # a main checkout's root: nothing above is its project's
            linked = linked or os.path.isfile(git)
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent


def agent_state_dir() -> str | None:
    """The state dir a hook (or git's gate) may trust, whatever the agent did to its
    working directory or to directories it can write; None: no project.

    ``$EXOMONAD_DIR``, which ExoMonad gives every agent it starts (with its token);
    else, for a worker (``$EXOMONAD_TOKEN`` without it), none: :class:`StateDirError`;
    else (the lead's own Claude Code, a person, a Claude teammate) the nearest one above
    where the runtime started the session (:data:`PROJECT_DIR_VARS`, else this process's
    working directory). Never from the hook input's ``cwd``: Claude Code's follows a
    ``cd``, Codex's is a tool call's ``workdir``.
    """
    env = os.environ.get("EXOMONAD_DIR")
    if env:
        return os.path.expanduser(env)
    if os.environ.get("EXOMONAD_TOKEN"):
        raise StateDirError(
            "a worker (EXOMONAD_TOKEN) without EXOMONAD_DIR: ExoMonad gives its workers "
            "both, and a state dir found from the agent's own directory is not trusted"
        )
    start = next((os.environ[v] for v in PROJECT_DIR_VARS if os.environ.get(v)), None)
    return nearest_state_dir(start)


def find_state_dir(start: Path | None = None, *, create: bool = False) -> Path:
    """Return the project's state dir: :func:`nearest_state_dir`, else one at the
    enclosing git repository's root, else in ``start``; make it if ``create``."""
    from pathlib import Path

    existing = nearest_state_dir(None if start is None else str(start))
    if existing is not None:
        found = Path(existing)
    else:
        here = (start or Path.cwd()).resolve()
        found = next((d / STATE_DIR_NAME for d in [here, *here.parents] if (d / ".git").exists()),
                     here / STATE_DIR_NAME)  # fmt: skip
    if create:
        ensure_state_dir(found)
    return found


def lock_journal(state_dir: Path) -> Path:
    """Where the inbox locks ExoMonad's processes hold are journalled (``locks-held``)."""
    return state_dir / "locks-held"


def adopt_lock_journal(state_dir: Path) -> list[Path]:
    """Journal the inbox locks this process holds under ``<state>/locks-held``, after
    removing the ones a killed ExoMonad process left behind (see
    :func:`exomonad.teams.lockjournal.recover_locks`). Returns the lock dirs removed."""
    from exomonad.teams.lockjournal import recover_locks, set_lock_journal

    journal = ensure_state_dir(lock_journal(state_dir))
    removed = recover_locks(journal)
    set_lock_journal(journal)
    return removed
