"""The delivery algorithm every keystroke backend shares (tmux, Zellij, the teammate's pty,
the in-memory fake), over the contract in :mod:`exomonad.panes.contract`.

A *pane* is named by a backend-specific string: ``%3`` for tmux, ``terminal_3`` for
Zellij, ``/dev/pts/7`` for a pty ExoMonad owns. Every operation on a pane that is
missing, dead or refuses input raises :class:`~exomonad.errors.PaneError`.

:meth:`KeystrokeBackend.deliver` is the one place the typing protocol lives:

1. resolve the pane (missing/dead/input-disabled -> ``PaneError``), take its lock,
   leave any mode (copy mode) that would swallow keys;
2. :class:`~exomonad.panes.spool.Spool` turns the text into one sanitised line, or a
   pointer to a spool file for multi-line / long text;
3. type the line; wait until the pane shows a change (the program has read the input:
   a busy TUI may not read it for a second or more, and would then read text and Enter
   in one chunk), at most ``echo_timeout``; then wait ``enter_delay`` (TUIs such as
   Claude Code and Gemini CLI treat an Enter arriving within ~30 ms of typed text as a
   newline, not a submit), snapshot the pane, press Enter;
4. confirm the submission: the pane's content or cursor must change within
   ``submit_timeout``, and the text must not still sit in the input (a backend that
   knows the cursor asks :func:`~exomonad.panes.screen.typed_line_pending`: a redraw of
   its own, or an Enter taken as a newline, is not a submission); otherwise press Enter
   again, ``max_enter_attempts`` in all.

Confirmation is best effort: a program that neither echoes nor shows its cursor, and
redraws on its own, looks submitted.
"""

from __future__ import annotations

import os
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import TypedDict

from exomonad.errors import PaneError
from exomonad.panes.contract import Command, DeliveryReceipt, PaneBackend, TextSink
from exomonad.panes.locking import DEFAULT_LOCK_TIMEOUT, default_lock_dir, pane_lock
from exomonad.panes.sanitize import sanitize
from exomonad.panes.screen import squash
from exomonad.panes.spool import Spool
from exomonad.util.waiting import WaitTimeout, retry_until

__all__ = [
    "DEFAULT_ECHO_TIMEOUT",
    "DEFAULT_ENTER_DELAY",
    "DEFAULT_MAX_ENTER_ATTEMPTS",
    "DEFAULT_SUBMIT_TIMEOUT",
    "ENTER_DELAY_ENV",
    "Command",
    "DeliveryOptions",
    "DeliveryReceipt",
    "KeystrokeBackend",
    "PaneBackend",
    "TextSink",
    "resolve_enter_delay",
    "run_cli",
]

ENTER_DELAY_ENV = "EXOMONAD_ENTER_DELAY"
"""Environment variable (seconds, float) overriding :data:`DEFAULT_ENTER_DELAY`."""

DEFAULT_ENTER_DELAY = 0.12
"""Seconds between typing a message and pressing Enter, unless ``$EXOMONAD_ENTER_DELAY``
or the ``enter_delay`` argument says otherwise."""

DEFAULT_ECHO_TIMEOUT = 3.0
"""Seconds to wait, after typing, for the pane to show that the program read the text."""

DEFAULT_SUBMIT_TIMEOUT = 1.0
"""Seconds to wait, after each Enter, for the pane to show the submission."""

DEFAULT_MAX_ENTER_ATTEMPTS = 3
"""Enter presses per delivery before reporting ``submitted=False``."""


def resolve_enter_delay(value: float | None) -> float:
    """``value`` if given, else ``$EXOMONAD_ENTER_DELAY``, else :data:`DEFAULT_ENTER_DELAY`."""
    if value is None:
        env = os.environ.get(ENTER_DELAY_ENV)
        try:
            value = float(env) if env else DEFAULT_ENTER_DELAY
        except ValueError:
            raise ValueError(f"${ENTER_DELAY_ENV} must be a number of seconds: {env!r}") from None
    if value < 0:
        raise ValueError(f"enter_delay must be >= 0, got {value}")
    return value


def run_cli(argv: list[str], *, what: str, timeout: float, input: str | None = None) -> str:
    """Run a multiplexer command (tmux, zellij) and return its stdout.

    ``what`` names the command in errors. Raises :class:`PaneError` when the executable
    is missing, does not answer within ``timeout`` seconds, or exits non-zero.
    """
    try:
        proc = subprocess.run(
            argv, input=input, capture_output=True, text=True, encoding="utf-8",
            errors="replace", timeout=timeout, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise PaneError(f"{what}: executable not found: {argv[0]!r}") from None
    except subprocess.TimeoutExpired:
        raise PaneError(f"{what} did not answer within {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise PaneError(f"{what} failed: {proc.stderr.strip()}")
    return proc.stdout


class DeliveryOptions(TypedDict, total=False):
    """The delivery options every keystroke backend takes (see :class:`KeystrokeBackend`)."""

    enter_delay: float | None
    submit_timeout: float
    max_enter_attempts: int
    spool_dir: str | os.PathLike[str] | None
    spool_threshold: int | None
    lock_dir: str | os.PathLike[str] | None
    lock_timeout: float
    echo_timeout: float


class KeystrokeBackend(ABC):
    """Base of the keystroke backends (each a :class:`PaneBackend`): the shared delivery
    algorithm over a few primitives.

    Subclasses implement the underscored primitives plus ``capture``, ``spawn`` and
    ``kill``. Primitives other than :meth:`_locate` get the canonical pane id, and
    :meth:`_type`/:meth:`_enter`/:meth:`_snapshot` run under the pane lock. Hooks with a
    default a backend may refine: :meth:`_prepare_input`, :meth:`_await_echo` (how the
    program shows it read the text), :meth:`_snapshot_then_enter`, :meth:`_lock_target`
    and :meth:`_lock` (a cross-process file lock per pane).
    """

    def __init__(
        self,
        *,
        enter_delay: float | None = None,
        submit_timeout: float = DEFAULT_SUBMIT_TIMEOUT,
        max_enter_attempts: int = DEFAULT_MAX_ENTER_ATTEMPTS,
        spool_dir: str | os.PathLike[str] | None = None,
        spool_threshold: int | None = None,
        lock_dir: str | os.PathLike[str] | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        echo_timeout: float = DEFAULT_ECHO_TIMEOUT,
    ) -> None:
        if max_enter_attempts < 1:
            raise ValueError("max_enter_attempts must be at least 1")
        self.echo_timeout = echo_timeout
        self.enter_delay = resolve_enter_delay(enter_delay)
        self.submit_timeout = submit_timeout
        self.max_enter_attempts = max_enter_attempts
        self.spool = Spool(spool_dir, threshold=spool_threshold)
        self.lock_dir = Path(lock_dir) if lock_dir is not None else default_lock_dir()
        self.lock_timeout = lock_timeout

    # -- primitives --------------------------------------------------------------------

    @abstractmethod
    def _locate(self, pane: str) -> tuple[str, str | None]:
        """``(canonical id, why it cannot take input or None)``; ``PaneError`` if missing."""

    @abstractmethod
    def _lock_key(self, pane: str) -> str:
        """A key naming the pane uniquely on this machine (e.g. server socket + id)."""

    def _prepare_input(self, pane: str) -> None:
        """Under the lock: re-check the pane (it may have died while we waited for the
        lock) and make it ready for keys, e.g. leave copy mode."""
        self._resolve(pane)

    @abstractmethod
    def _type(self, pane: str, line: str) -> None:
        """Type ``line`` (already sanitised, single line) literally."""

    @abstractmethod
    def _enter(self, pane: str) -> None:
        """Press Enter once."""

    @abstractmethod
    def _snapshot(self, pane: str) -> Hashable:
        """Something that changes when the pane's content or cursor changes."""

    def _await_echo(self, pane: str, before: Hashable, line: str) -> None:
        """Wait until the program shows the end of ``line`` (it read the input).

        Any change is not enough: a busy TUI redraws (a spinner) before it reads what was
        typed, and an Enter arriving with the text becomes a newline. White space and box
        drawing are ignored (wrapping, input-box borders). A program that never echoes
        costs ``echo_timeout`` once per message; it is then submitted as usual.
        """
        tail = squash(line)[-12:]

        def shown() -> bool:
            return self._snapshot(pane) != before and tail in squash(self.capture(pane))

        with suppress(WaitTimeout, PaneError):
            retry_until(shown, timeout=self.echo_timeout, interval=0.01)

    def _still_typed(self, snapshot: Hashable, line: str) -> bool:
        """Whether ``snapshot`` shows ``line`` still in the program's input (not taken by
        Enter). By default unknown, so False: any change counts as the submission."""
        return False

    def _snapshot_then_enter(self, pane: str) -> Hashable:
        """Snapshot, then press Enter; backends may do both in one round trip."""
        before = self._snapshot(pane)
        self._enter(pane)
        return before

    def _lock_target(self, pane: str) -> str:
        """The canonical id to lock for ``pane`` (resolving it; backends may shortcut)."""
        return self._resolve(pane)

    @abstractmethod
    def capture(self, pane: str) -> str:
        """The pane's visible text, without escape sequences (dead panes too)."""

    @abstractmethod
    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
    ) -> str:
        """Start ``command`` in a new pane and return the pane id."""

    @abstractmethod
    def kill(self, pane: str) -> None:
        """Close the pane (``PaneError`` if it does not exist)."""

    # -- the contract ------------------------------------------------------------------

    def _resolve(self, pane: str) -> str:
        """Canonical id of a live pane that accepts input, else ``PaneError``."""
        canonical, problem = self._locate(pane)
        if problem:
            raise PaneError(f"pane {pane!r} {problem}")
        return canonical

    def _lock(self, pane: str) -> AbstractContextManager[float]:
        return pane_lock(self.lock_dir, self._lock_key(pane), self.lock_timeout)

    @contextmanager
    def _ready(self, pane: str) -> Iterator[str]:
        """Resolve, lock, re-check and prepare the pane for input."""
        canonical = self._lock_target(pane)
        with self._lock(canonical):
            self._prepare_input(canonical)
            yield canonical

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        """Deliver one message: type it (or a spool pointer), press Enter, confirm.

        Args:
            pane: the pane id (``%3``, ``terminal_3``, ...).
            text: the message; it is sanitised, never interpreted as keys.
            sender: who the message is from, named in the spool pointer line.
            to: the recipient's team and name, whose spool directory a long message
                goes to (:func:`~exomonad.panes.spool.recipient_dir`).

        Raises:
            PaneError: the pane is missing, dead, refuses input, or stays locked.
            ValueError: nothing printable is left in ``text``.
        """
        started_at = time.time()
        with self._ready(pane) as canonical:
            outgoing = self.spool.prepare(text, sender=sender, to=to)
            unread = self._snapshot(canonical) if self.echo_timeout > 0 else None
            head, mark, rest = outgoing.line.partition("?")
            if mark and head and unread is not None:
                # Gemini CLI takes a "?" for its shortcuts help when its input looks empty
                # to a key handler still a render behind (the text typed just before it
                # not drawn yet), and drops it: what comes before the first "?" is typed
                # and seen on screen first.
                self._type(canonical, head)
                self._await_echo(canonical, unread, head)
                self._type(canonical, mark + rest)
            else:
                self._type(canonical, outgoing.line)
            typed_at = time.time()
            if unread is not None:
                self._await_echo(canonical, unread, outgoing.line)
            if self.enter_delay:
                time.sleep(self.enter_delay)  # deliberate pacing, not a wait on a condition
            before = self._snapshot_then_enter(canonical)
            attempts = 1
            submitted_at = self._submitted_since(canonical, before, outgoing.line)
            while submitted_at is None and attempts < self.max_enter_attempts:
                attempts += 1
                self._enter(canonical)
                submitted_at = self._submitted_since(canonical, before, outgoing.line)
        return DeliveryReceipt(
            pane=canonical,
            typed=outgoing.line,
            spool_path=outgoing.spool_path,
            submitted=submitted_at is not None,
            enter_attempts=attempts,
            started_at=started_at,
            typed_at=typed_at,
            submitted_at=submitted_at,
        )

    def _submitted_since(self, pane: str, before: Hashable, line: str) -> float | None:
        """When the pane showed ``line`` taken (changed since ``before``, ``line`` not
        still in the input), waiting at most ``submit_timeout``; None if it did not."""

        def taken() -> bool:
            now = self._snapshot(pane)
            return now != before and not self._still_typed(now, line)

        try:
            retry_until(taken, timeout=self.submit_timeout, interval=0.01)
        except WaitTimeout:
            return None
        return time.time()

    def send_text(self, pane: str, text: str) -> str:
        """Type ``text`` sanitised to one line (newlines become spaces), without Enter.

        Returns:
            The exact text typed (may be empty, in which case nothing is typed).
        """
        line = sanitize(text, keep_newlines=False)
        with self._ready(pane) as canonical:
            if line:
                self._type(canonical, line)
        return line

    def submit(self, pane: str) -> None:
        """Press Enter in ``pane`` once, without confirmation."""
        with self._ready(pane) as canonical:
            self._enter(canonical)

    def exists(self, pane: str) -> bool:
        """Whether ``pane`` exists, is alive and accepts input."""
        try:
            self._resolve(pane)
        except PaneError:
            return False
        return True


def check_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """Validate environment overrides for :meth:`PaneBackend.spawn`."""
    out: dict[str, str] = {}
    for key, value in (env or {}).items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"invalid environment variable {key!r}")
        out[key] = value
    return out


def check_command(command: Command) -> list[str] | str:
    """Validate a spawn command: a non-empty shell string or a non-empty argv list."""
    if isinstance(command, str):
        if not command.strip():
            raise ValueError("empty command")
        return command
    argv = list(command)
    if not argv or not argv[0]:
        raise ValueError("empty command")
    return argv
