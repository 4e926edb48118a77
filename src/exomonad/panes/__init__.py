"""Delivering messages to coding agents: one contract, one algorithm, five backends.

The contract is :class:`TextSink` (deliver, submit what an interrupted delivery left,
exists); terminals extend it to :class:`PaneBackend` (type, capture, spawn, kill). Every
receiver of text is a real backend of it, addressed by a real id
(:mod:`exomonad.panes.contract`):

* :class:`TmuxBackend`: a tmux server, via plain ``tmux`` commands (``%3``);
* :class:`ZellijBackend`: the Zellij CLI, tested through a recording stand-in only
  (``terminal_3``);
* :class:`PtyBackend`: ptys this process owns, as ``exomonad teammate`` runs its agent
  (``/dev/pts/7``);
* :class:`StdinBackend`: a headless agent's stdin, one stream-json user turn per
  message, as ``exomonad relay`` feeds a headless lead (the child's pid);
* :class:`FakePaneBackend`: in-memory panes for fast tests of the layers above.

The terminal backends share :class:`KeystrokeBackend`'s algorithm: every message is
sanitised (:func:`sanitize`) so it can never act as keystrokes; multi-line or long
messages are written to a spool file and a one-line pointer is typed instead; the text's
echo is awaited, then ``EXOMONAD_ENTER_DELAY``, then Enter, confirmed and retried.
Deliveries to one pane are serialised by a lock (across processes where several can
type into it).

>>> backend = get_backend("fake")
>>> pane = backend.add_pane()
>>> receipt = backend.deliver(pane, "run `make test` please")
>>> receipt.typed, receipt.submitted
('run `make test` please', True)

Environment overrides (each documented where its default is defined):
``EXOMONAD_ENTER_DELAY`` (:data:`DEFAULT_ENTER_DELAY`), ``EXOMONAD_SPOOL_DIR``,
``EXOMONAD_LOCK_DIR``, ``EXOMONAD_ZELLIJ``.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from exomonad.panes.base import DEFAULT_ENTER_DELAY, ENTER_DELAY_ENV, KeystrokeBackend
from exomonad.panes.contract import Command, DeliveryReceipt, PaneBackend, TextSink
from exomonad.panes.fake import FakePane, FakePaneBackend
from exomonad.panes.pty import PtyBackend
from exomonad.panes.sanitize import is_safe, sanitize
from exomonad.panes.spool import DEFAULT_SPOOL_THRESHOLD, Outgoing, Spool
from exomonad.panes.stdin import StdinBackend
from exomonad.panes.tmux import TmuxBackend
from exomonad.panes.zellij import ZellijBackend

__all__ = [
    "BACKENDS",
    "DEFAULT_ENTER_DELAY",
    "DEFAULT_SPOOL_THRESHOLD",
    "ENTER_DELAY_ENV",
    "Command",
    "DeliveryReceipt",
    "FakePane",
    "FakePaneBackend",
    "KeystrokeBackend",
    "Outgoing",
    "PaneBackend",
    "PtyBackend",
    "Spool",
    "StdinBackend",
    "TextSink",
    "TmuxBackend",
    "ZellijBackend",
    "get_backend",
    "is_safe",
    "sanitize",
]

BACKENDS: dict[str, type[KeystrokeBackend]] = {
    "tmux": TmuxBackend,
    "zellij": ZellijBackend,
    "fake": FakePaneBackend,
}
"""Backend classes by the name :func:`get_backend` accepts."""


@overload
def get_backend(kind: Literal["tmux"], **kw: Any) -> TmuxBackend: ...
@overload
def get_backend(kind: Literal["zellij"], **kw: Any) -> ZellijBackend: ...
@overload
def get_backend(kind: Literal["fake"], **kw: Any) -> FakePaneBackend: ...
@overload
def get_backend(kind: str, **kw: Any) -> KeystrokeBackend: ...
def get_backend(kind: str, **kw: Any) -> KeystrokeBackend:
    """Build the backend named ``kind`` (``"tmux"``, ``"zellij"`` or ``"fake"``).

    Keyword arguments go to the backend's constructor, e.g.
    ``get_backend("tmux", socket_name="work", enter_delay=0.2)``.

    Raises:
        ValueError: unknown ``kind``.
    """
    try:
        cls = BACKENDS[kind]
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown pane backend {kind!r} (known: {known})") from None
    return cls(**kw)
