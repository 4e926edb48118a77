"""The one delivery contract: whatever receives an agent's messages is a :class:`TextSink`.

Every receiver of text is a real backend of this contract, addressed by a real id:

====================================  =======================  ==========================
receiver                              backend                  target id
====================================  =======================  ==========================
a tmux pane                           ``TmuxBackend``          ``%3`` (tmux's pane id)
a Zellij pane                         ``ZellijBackend``        ``terminal_3``
the pty ``exomonad teammate`` owns    ``PtyBackend``           ``/dev/pts/7`` (its device)
a headless lead's stdin (the relay)   ``StdinBackend``         ``4242`` (the child's pid)
an in-memory test pane                ``FakePaneBackend``      ``fake:1``
====================================  =======================  ==========================

The delivery layer (:mod:`exomonad.bridge`) needs only :class:`TextSink`: deliver a
message, submit what a crash may have left half-delivered, tell whether a target lives.
Terminals extend it to :class:`PaneBackend` (type without submitting, capture, spawn,
kill); the keystroke backends share one typing algorithm,
:class:`~exomonad.panes.base.KeystrokeBackend`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["Command", "DeliveryReceipt", "PaneBackend", "TextSink"]

Command = str | Sequence[str]
"""A command to spawn: a shell command line, or an argv list run without a shell."""


@dataclass(frozen=True, slots=True)
class DeliveryReceipt:
    """What :meth:`TextSink.deliver` did. Times are ``time.time()`` epoch seconds.

    Attributes:
        pane: the resolved id of the target the text went to.
        typed: the exact line typed (sanitised message, or the spool pointer); for a
            stream that takes no keys, the text sent.
        spool_path: file holding the full message, if it was spooled.
        submitted: whether the submission is confirmed (a change in the pane after
            Enter; a stream's write accepted whole).
        enter_attempts: how many times Enter was pressed (0 where no key is pressed).
        started_at: when ``deliver`` was called.
        typed_at: when the target accepted the text.
        submitted_at: when the submission was confirmed (``None`` if it was not).
    """

    pane: str
    typed: str
    spool_path: Path | None
    submitted: bool
    enter_attempts: int
    started_at: float
    typed_at: float
    submitted_at: float | None

    @property
    def duration(self) -> float:
        """Seconds from the call to confirmation (or to typing, if unconfirmed)."""
        return (self.submitted_at or self.typed_at) - self.started_at


@runtime_checkable
class TextSink(Protocol):
    """Delivers messages to targets named by ids of the backend's own kind.

    Every operation on a target that is missing, dead or refuses input raises
    :class:`~exomonad.errors.PaneError`.
    """

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        """Deliver ``text`` to ``pane`` and submit it, once; say what was done. ``to``:
        the recipient's team and name, when the pane is a member's (a message too long
        to type is parked in its own spool directory: :func:`~exomonad.panes.spool.
        recipient_dir`)."""
        ...

    def submit(self, pane: str) -> None:
        """Submit whatever input an interrupted delivery may have left pending in ``pane``
        (press Enter); a no-op where deliveries are written whole."""
        ...

    def exists(self, pane: str) -> bool:
        """Whether ``pane`` exists and is alive (can take input)."""
        ...


@runtime_checkable
class PaneBackend(TextSink, Protocol):
    """A :class:`TextSink` over terminal panes, which it can also type into, read,
    start and close."""

    def send_text(self, pane: str, text: str) -> str:
        """Type sanitised ``text`` as one line without submitting; return what was typed."""
        ...

    def capture(self, pane: str) -> str:
        """The pane's visible text, without escape sequences."""
        ...

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
    ) -> str:
        """Start ``command`` in a new pane (in ``target``, backend-specific); return its id."""
        ...

    def kill(self, pane: str) -> None:
        """Close the pane and end its process (``PaneError`` if it does not exist)."""
        ...
