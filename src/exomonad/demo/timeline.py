"""The demo's timeline: every hop, when it happened, and the latency from the one before.

A hop belongs to a chain (``codex-1``, ``codex-1 push``, ...); its latency is measured
from the previous hop of the same chain. :meth:`Timeline.wait` runs the check that finds
a hop: one that does not happen within its time-out is recorded as missing and raises
:class:`MissingHop`, which names it; the demo then stops and exits non-zero.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table

from exomonad.errors import ExomonadError
from exomonad.util.waiting import WaitTimeout

__all__ = ["Hop", "MissingHop", "Timeline"]


class MissingHop(ExomonadError):
    """A hop of the demo did not happen in time (the message names it)."""


@dataclass
class Hop:
    """One step of a chain: when it happened (``time.monotonic()``), or None if missing."""

    chain: str
    label: str
    at: float | None
    latency: float | None  # from the previous hop of the chain
    note: str = ""


class Timeline:
    """The hops in the order they were established."""

    def __init__(
        self, started: float | None = None, echo: Callable[[Timeline, Hop], None] | None = None
    ) -> None:
        self.started = time.monotonic() if started is None else started
        self.hops: list[Hop] = []
        self.echo = echo  # told of each hop as it is established

    def _add(self, hop: Hop) -> None:
        self.hops.append(hop)
        if self.echo is not None:
            self.echo(self, hop)

    def _last(self, chain: str) -> float | None:
        times = [h.at for h in self.hops if h.chain == chain and h.at is not None]
        return times[-1] if times else None

    def record(self, chain: str, label: str, at: float, note: str = "") -> float:
        """Add a hop that happened at ``at``; returns ``at``."""
        before = self._last(chain)
        self._add(Hop(chain, label, at, None if before is None else at - before, note))
        return at

    def wait(self, chain: str, label: str, find: Callable[[float], float], timeout: float) -> float:
        """``find(timeout)`` returns when the hop happened; a time-out (``TimeoutError``
        or ``WaitTimeout``) records it as missing and raises :class:`MissingHop`."""
        try:
            at = find(timeout)
        except (TimeoutError, WaitTimeout) as exc:
            self._add(Hop(chain, label, None, None, str(exc).splitlines()[0][:160]))
            raise MissingHop(f"missing hop: {chain}: {label} (not within {timeout:.0f}s)") from exc
        return self.record(chain, label, at)

    @property
    def missing(self) -> list[Hop]:
        """The hops that did not happen."""
        return [h for h in self.hops if h.at is None]

    def table(self) -> Table:
        """The timeline for a terminal: offset from the start, hop, latency."""
        table = Table(title="hops", title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("t", justify="right")
        table.add_column("chain")
        table.add_column("hop")
        table.add_column("latency", justify="right")
        for h in self.hops:
            table.add_row(*self.row(h))
        return table

    def row(self, h: Hop) -> tuple[str, str, str, str]:
        """One hop's cells (rich markup): offset, chain, hop, latency (or why missing)."""
        if h.at is None:
            return "—", escape(h.chain), f"[red]MISSING: {escape(h.label)}[/red]", escape(h.note)
        latency = "" if h.latency is None else f"{h.latency * 1000:.0f} ms"
        return f"{h.at - self.started:6.2f}s", escape(h.chain), escape(h.label), latency

    def to_json(self) -> list[dict[str, object]]:
        """The hops as JSON-ready dicts (offsets and latencies in seconds)."""
        return [
            {
                "chain": h.chain,
                "hop": h.label,
                "t": None if h.at is None else round(h.at - self.started, 3),
                "latency": None if h.latency is None else round(h.latency, 3),
                "missing": h.at is None,
                "note": h.note,
            }
            for h in self.hops
        ]
