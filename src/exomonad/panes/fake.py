"""An in-memory :class:`~exomonad.panes.base.PaneBackend` for fast tests of upper layers.

:class:`FakePaneBackend` runs the *same* delivery algorithm as the real backends
(sanitising, spooling, Enter confirmation and retries), over panes that are Python
objects. Each fake pane is a line editor: typed text collects in :attr:`FakePane.input`,
Enter moves it to :attr:`FakePane.submitted`. Panes can be made missing, dead, deaf to
input, or deaf to Enter, to exercise failure paths. Locks are per-pane thread locks
(the fake is not shared between processes). Its real twins are tested against tmux.

>>> fake = FakePaneBackend()
>>> pane = fake.add_pane()
>>> fake.deliver(pane, "hello \\x1b[31mworld").submitted
True
>>> fake.submitted(pane)
['hello world']
"""

from __future__ import annotations

import itertools
import os
import tempfile
import threading
from collections.abc import Hashable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from exomonad.errors import PaneError
from exomonad.panes.base import Command, DeliveryReceipt, KeystrokeBackend, check_command

__all__ = ["FakePane", "FakePaneBackend"]


@dataclass
class FakePane:
    """State of one fake pane (inspect it in tests via :meth:`FakePaneBackend.pane`).

    Attributes:
        id: the pane id.
        alive: false once the pane's "process" has exited.
        accepts_input: false simulates a pane whose input is disabled.
        ignores_enter: true simulates an app that drops Enter (submission unconfirmed).
        newline_enters: how many Enters, from now, the app takes as a newline in its
            input instead of a submission (Gemini CLI's, processed within 40 ms of a
            paste).
        input: text typed but not yet submitted.
        submitted: lines submitted with Enter, oldest first.
        deliveries: receipts of :meth:`FakePaneBackend.deliver` calls to this pane.
        command, cwd, env, name, target: what :meth:`FakePaneBackend.spawn` was given.
    """

    id: str
    alive: bool = True
    accepts_input: bool = True
    ignores_enter: bool = False
    newline_enters: int = 0
    input: str = ""
    submitted: list[str] = field(default_factory=list)
    deliveries: list[DeliveryReceipt] = field(default_factory=list)
    command: Command | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    target: str | None = None


class FakePaneBackend(KeystrokeBackend):
    """In-memory panes with the real delivery algorithm. Thread-safe.

    Args:
        enter_delay: defaults to 0 here (nothing to wait for).
        submit_timeout: how long an ignored Enter is waited on (default 0.05 s).
        max_enter_attempts: Enter presses per delivery.
        spool_dir: where long messages go (default: a per-user temp directory).
        spool_threshold: longest line typed directly.
    """

    def __init__(
        self,
        *,
        enter_delay: float = 0.0,
        submit_timeout: float = 0.05,
        echo_timeout: float = 0.05,
        max_enter_attempts: int = 3,
        spool_dir: str | os.PathLike[str] | None = None,
        spool_threshold: int | None = None,
    ) -> None:
        if spool_dir is None:
            spool_dir = Path(tempfile.gettempdir()) / f"exomonad-fake-spool-{os.getuid()}"
        super().__init__(
            enter_delay=enter_delay,
            submit_timeout=submit_timeout,
            echo_timeout=echo_timeout,
            max_enter_attempts=max_enter_attempts,
            spool_dir=spool_dir,
            spool_threshold=spool_threshold,
        )
        self._panes: dict[str, FakePane] = {}
        self._ids = itertools.count(1)
        self._state = threading.Lock()
        self._pane_locks: dict[str, threading.Lock] = {}

    # -- test controls -------------------------------------------------------------------

    def add_pane(
        self,
        pane: str | None = None,
        *,
        alive: bool = True,
        accepts_input: bool = True,
        ignores_enter: bool = False,
    ) -> str:
        """Create a pane (``fake:N`` unless ``pane`` names it) and return its id."""
        with self._state:
            pane_id = pane or f"fake:{next(self._ids)}"
            if pane_id in self._panes:
                raise ValueError(f"fake pane {pane_id!r} already exists")
            self._panes[pane_id] = FakePane(
                id=pane_id, alive=alive, accepts_input=accepts_input, ignores_enter=ignores_enter
            )
            return pane_id

    def pane(self, pane: str) -> FakePane:
        """The state object of ``pane`` (``PaneError`` if it does not exist)."""
        with self._state:
            try:
                return self._panes[pane]
            except KeyError:
                raise PaneError(f"pane {pane!r} does not exist (fake backend)") from None

    def set_dead(self, pane: str, dead: bool = True) -> None:
        """Mark ``pane``'s process as exited (or alive again)."""
        self.pane(pane).alive = not dead

    def submitted(self, pane: str) -> list[str]:
        """Lines submitted to ``pane`` so far (a copy)."""
        return list(self.pane(pane).submitted)

    def deliveries(self, pane: str) -> list[DeliveryReceipt]:
        """Receipts of deliveries to ``pane`` so far (a copy)."""
        return list(self.pane(pane).deliveries)

    # -- primitives ----------------------------------------------------------------------

    def _locate(self, pane: str) -> tuple[str, str | None]:
        state = self.pane(pane)
        if not state.alive:
            return pane, "is dead: its command has exited"
        if not state.accepts_input:
            return pane, "has input disabled"
        return pane, None

    def _lock_key(self, pane: str) -> str:
        return pane

    def _lock(self, pane: str) -> AbstractContextManager[float]:
        with self._state:
            lock = self._pane_locks.setdefault(pane, threading.Lock())

        @contextmanager
        def held() -> Iterator[float]:
            with lock:
                yield 0.0

        return held()

    def _type(self, pane: str, line: str) -> None:
        state = self.pane(pane)
        with self._state:
            state.input += line

    def _enter(self, pane: str) -> None:
        state = self.pane(pane)
        with self._state:
            if state.newline_enters > 0:
                state.newline_enters -= 1
                state.input += "\n"
            elif not state.ignores_enter:
                state.submitted.append(state.input)
                state.input = ""

    def _snapshot(self, pane: str) -> Hashable:
        state = self.pane(pane)
        with self._state:
            return (len(state.submitted), state.input)

    def _still_typed(self, snapshot: Hashable, line: str) -> bool:
        return isinstance(snapshot, tuple) and line in str(snapshot[1])

    # -- the rest of the contract --------------------------------------------------------

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        """As :meth:`KeystrokeBackend.deliver`, also recording the receipt on the pane."""
        receipt = super().deliver(pane, text, sender=sender, to=to)
        state = self.pane(receipt.pane)
        with self._state:
            state.deliveries.append(receipt)
        return receipt

    def capture(self, pane: str) -> str:
        """Submitted lines, then the pending input line (if any)."""
        state = self.pane(pane)
        with self._state:
            lines = [*state.submitted, state.input] if state.input else list(state.submitted)
        return "\n".join(lines)

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
    ) -> str:
        """Create a live pane recording what it was spawned with; return its id."""
        checked = check_command(command)
        pane_id = self.add_pane()
        state = self.pane(pane_id)
        state.command = checked
        state.cwd = os.fspath(cwd) if cwd is not None else None
        state.env = dict(env or {})
        state.name = name
        state.target = target
        return pane_id

    def kill(self, pane: str) -> None:
        """Remove ``pane``. ``PaneError`` if it does not exist."""
        with self._state:
            if self._panes.pop(pane, None) is None:
                raise PaneError(f"pane {pane!r} does not exist (fake backend)")
