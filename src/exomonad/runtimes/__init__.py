"""Agent runtimes: one module each, registered here (see :mod:`exomonad.runtimes.base`).

Adding a runtime is a module in this package plus its line in :data:`RUNTIMES`.

>>> get("gemini").title, [r.name for r in RUNTIMES.values()]
('Gemini CLI', ['claude', 'gemini', 'codex'])
>>> sorted(gating_events())
['before-tool', 'permission-request', 'pre-tool-use']
"""

from __future__ import annotations

from exomonad.runtimes.base import EVENTS, Runtime
from exomonad.runtimes.claude import CLAUDE
from exomonad.runtimes.codex import CODEX
from exomonad.runtimes.gemini import GEMINI

__all__ = ["CLAUDE", "CODEX", "EVENTS", "GEMINI", "RUNTIMES", "Runtime", "gating_events", "get",
           "names"]  # fmt: skip

#: Every runtime ExoMonad knows, by name.
RUNTIMES: dict[str, Runtime] = {r.name: r for r in (CLAUDE, GEMINI, CODEX)}


def names() -> tuple[str, ...]:
    """The runtimes' names, in registration order."""
    return tuple(RUNTIMES)


def get(name: str) -> Runtime:
    """The runtime called ``name``; :class:`~exomonad.errors.UnknownRuntimeError` if none."""
    found = RUNTIMES.get(name)
    if found is None:
        from exomonad.errors import UnknownRuntimeError

        raise UnknownRuntimeError(f"unknown runtime {name!r} (one of {', '.join(RUNTIMES)})")
    return found


def gating_events() -> frozenset[str]:
    """Every runtime's hook event names that gate a tool call."""
    return frozenset(e for r in RUNTIMES.values() for e in (*r.events, *EVENTS) if r.gates(e))
