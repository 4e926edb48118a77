"""The ExoMonad exception tree.

Every error ExoMonad raises on purpose derives from :class:`ExomonadError`, so a caller
can catch one type. The tree::

    ExomonadError
    ├── InvalidNameError        a team/member name that is empty or could escape its dir
    ├── TeamNotFoundError       no team directory / config.json for that team
    ├── UnknownRecipientError   a message to someone who is not a member of the team
    ├── CorruptFileError        a JSON file we must not overwrite (bad JSON, wrong shape)
    │   └── SymlinkRefusedError   a team file that is a symlink or not a regular file
    │       └── SymlinkedDirectoryError  a directory at or below teams/ or tasks/ is a symlink
    ├── LockError               a proper-lockfile lock we could not take in time
    │   └── LockCompromisedError  our lock's mtime changed under us
    ├── DeliveryError           a message that could not be verified in its inbox
    ├── TaskError               task rule violated (not found, bad dependency, ...)
    │   └── ClaimRefusedError     (exomonad.teams.tasks) claim refused: owned, resolved, blocked
    ├── PaneError               a terminal pane that is missing, dead or refuses input
    ├── SandboxError            bubblewrap missing, unusable here, or a sandbox path missing
    ├── UnknownRuntimeError     an agent runtime ExoMonad does not know (``runtimes``)
    ├── GateError               a worker whose runtime would not run ExoMonad's hooks
    ├── StateDirError           no state dir a worker's hook may trust (``state``)
    ├── ServerNotRunningError   no ExoMonad server listens for the project (``uds``)
    ├── ServerError             the server answered with an error, or not in HTTP
    └── GitHubError             (exomonad.github.errors) what GitHub answered is unusable
        ├── GitHubUnavailableError  unreachable or a 5xx: retried with back-off
        ├── RateLimitedError        a rate limit, with the time to wait until
        └── ShapeError              an answer without a field the poller needs

Standard library only, and nothing costly: the hook client imports this module.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "CorruptFileError",
    "DeliveryError",
    "ExomonadError",
    "GateError",
    "InvalidNameError",
    "LockCompromisedError",
    "LockError",
    "PaneError",
    "SandboxError",
    "ServerError",
    "ServerNotRunningError",
    "StateDirError",
    "SymlinkRefusedError",
    "SymlinkedDirectoryError",
    "TaskError",
    "TeamNotFoundError",
    "UnknownRecipientError",
    "UnknownRuntimeError",
]


class ExomonadError(Exception):
    """Root of every error ExoMonad raises on purpose."""


class InvalidNameError(ExomonadError, ValueError):
    """A team or member name is empty, reserved where not allowed, or could escape its dir."""


class TeamNotFoundError(ExomonadError):
    """The team's directory or ``config.json`` does not exist."""


class UnknownRecipientError(ExomonadError):
    """A message was addressed to someone who is not a member of the team."""


class CorruptFileError(ExomonadError):
    """A JSON file is unreadable or has the wrong shape; it is left untouched."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason} (file left untouched)")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[CorruptFileError], tuple[object, ...]]:
        """Rebuilt from ``path`` and ``reason`` (copies and pickles)."""
        return (type(self), (self.path, self.reason))


class SymlinkRefusedError(CorruptFileError):
    """A team file (inbox, ``config.json``, task) is a symlink or not a regular file: it
    is neither read nor written through (someone could point it at any file we can
    reach)."""

    def __init__(self, path: Path, reason: str = "is a symlink; refusing to follow it") -> None:
        super().__init__(path, reason)


class SymlinkedDirectoryError(SymlinkRefusedError):
    """A directory at or below the config root's ``teams/`` or ``tasks/`` is a symlink:
    nothing is read, written, locked or watched through it.

    ``path`` is the link, ``target`` the file or directory that was to be reached through
    it. The config root itself (and anything above it) may be a symlink.
    """

    def __init__(self, path: Path, target: Path) -> None:
        what = "to follow it" if target == path else f"to reach {target} through it"
        reason = (
            f"is a symlink; refusing {what} (no directory at or below the config root's "
            "teams/ and tasks/ is followed; nothing was read or written)"
        )
        ExomonadError.__init__(self, f"{path}: {reason}")  # no "file left untouched": a dir
        self.path = path
        self.reason = reason
        self.target = target

    def __reduce__(self) -> tuple[type[CorruptFileError], tuple[object, ...]]:
        """Rebuilt from ``path`` and ``target``."""
        return (type(self), (self.path, self.target))


class LockError(ExomonadError):
    """A proper-lockfile compatible lock could not be acquired within the retry budget."""


class LockCompromisedError(LockError):
    """The lock directory was changed or removed by someone else while we held it."""


class DeliveryError(ExomonadError):
    """A message could not be written and verified in its inbox."""


class TaskError(ExomonadError):
    """A task operation broke a rule (missing task, refused claim, bad dependency)."""


class PaneError(ExomonadError):
    """A terminal pane is missing, dead, or did not accept the text."""


class SandboxError(ExomonadError):
    """A worker cannot be sandboxed: ``bwrap`` is missing or cannot create namespaces
    here, or a path the sandbox must bind does not exist."""


class UnknownRuntimeError(ExomonadError, ValueError):
    """An agent runtime name that no module of :mod:`exomonad.runtimes` registers."""


class GateError(ExomonadError):
    """No gate, no start: a worker's runtime would not run ExoMonad's hooks in its
    checkout (e.g. Codex hooks the user never trusted); the message says how to fix it."""


class StateDirError(ExomonadError):
    """A worker (it holds ``EXOMONAD_TOKEN``) without the ``EXOMONAD_DIR`` ExoMonad gave
    it: no state dir found from its own directories is trusted."""


class ServerNotRunningError(ExomonadError):
    """No ExoMonad server runs for this project (no live pid file, or nobody listens on
    its socket)."""


class ServerError(ExomonadError):
    """The server answered with an error (its message included), or not in HTTP."""
