"""Agent runtimes: one module each, registered here (see :mod:`exomonad.runtimes.base`).

Adding a runtime is a module in this package plus its line in :data:`RUNTIMES`.

>>> get("gemini").title, [r.name for r in RUNTIMES.values()]
('Gemini CLI', ['claude', 'gemini', 'codex', 'terminal'])
>>> canonical("command"), get("command").name, canonical("nope")
('terminal', 'terminal', 'nope')
>>> sorted(gating_events())
['before-tool', 'permission-request', 'pre-tool-use']
"""

from __future__ import annotations

from exomonad.runtimes.base import EVENTS, Runtime
from exomonad.runtimes.claude import CLAUDE
from exomonad.runtimes.codex import CODEX
from exomonad.runtimes.gemini import GEMINI
from exomonad.runtimes.terminal import TERMINAL

__all__ = ["CLAUDE", "CODEX", "EVENTS", "GEMINI", "RUNTIMES", "TERMINAL", "Runtime", "canonical",
           "gating_events", "get", "names"]  # fmt: skip

#: Every runtime ExoMonad knows, by name.
RUNTIMES: dict[str, Runtime] = {r.name: r for r in (CLAUDE, GEMINI, CODEX, TERMINAL)}
_ALIASES = {alias: r.name for r in RUNTIMES.values() for alias in r.aliases}


def names() -> tuple[str, ...]:
    """The runtimes' names, in registration order."""
    return tuple(RUNTIMES)


def canonical(name: str) -> str:
    """``name``, or the runtime's own name if ``name`` is one of its aliases."""
    return _ALIASES.get(name, name)


def get(name: str) -> Runtime:
    """The runtime called ``name`` (or an alias of it);
    :class:`~exomonad.errors.UnknownRuntimeError` if none."""
    found = RUNTIMES.get(canonical(name))
    if found is None:
        from exomonad.errors import UnknownRuntimeError

        raise UnknownRuntimeError(f"unknown runtime {name!r} (one of {', '.join(RUNTIMES)})")
    return found


def gating_events() -> frozenset[str]:
    """Every runtime's hook event names that gate a tool call."""
    return frozenset(e for r in RUNTIMES.values() for e in (*r.events, *EVENTS) if r.gates(e))
