"""No gate, no start, proven live: the gate probe.

A runtime may skip ExoMonad's hooks without a word (Codex runs only hooks it trusts,
none with ``features.hooks`` off, and lets a call through when a hook fails), so trust
recorded on disk proves nothing about the worker actually running. Before such a
runtime's worker (:attr:`exomonad.runtimes.Runtime.gate_probe`) gets its task, the
probe text, carrying a fresh nonce, is typed into its pane as a prompt. The runtime's
prompt hook (ours, run by the runtime itself, with the worker's environment) brings it
to the server under the worker's token; the server marks the gate live and answers the
hook with :meth:`~exomonad.runtimes.Runtime.discard_prompt`, so the model never reads
it. A worker whose probe has not arrived within the time-out is stopped and refused.

The nonce is never shown to the worker's model (its prompt is discarded), and only a
hook carrying that worker's token counts: another worker cannot prove a gate for it.

>>> probes = GateProbes()
>>> text = probes.start("t", "w1")
>>> probes.seen("t", "w2", text), probes.seen("t", "w1", "hello")
(False, False)
>>> probes.seen("t", "w1", text), probes.wait("t", "w1", 0)
(True, True)
>>> probes.seen("t", "w1", text)  # once
False
"""

from __future__ import annotations

import secrets
import threading

__all__ = ["PROBE_MARK", "GateProbes"]

#: What every probe prompt starts with.
PROBE_MARK = "ExoMonad gate check"
_TEXT = (
    PROBE_MARK + " {nonce}: ExoMonad's hooks stop this prompt before you read it. "
    "If you can read it, they are not running: do nothing, reply only NO GATE."
)

Key = tuple[str | None, str]


class GateProbes:
    """The probes in flight and the gates proven live, by (team, worker name)."""

    def __init__(self) -> None:
        self._pending: dict[Key, str] = {}
        self._live: set[Key] = set()
        self._changed = threading.Condition()

    def start(self, team: str | None, name: str) -> str:
        """A fresh probe for worker ``name`` (any earlier one is void): the text to type."""
        nonce = secrets.token_hex(12)
        with self._changed:
            self._pending[(team, name)] = nonce
            self._live.discard((team, name))
        return _TEXT.format(nonce=nonce)

    def seen(self, team: str | None, name: str, prompt: str) -> bool:
        """Whether ``prompt``, from worker ``name``'s own prompt hook, is its pending
        probe (which is then used up and its gate live)."""
        key = (team, name)
        with self._changed:
            nonce = self._pending.get(key)
            if nonce is None or f"{PROBE_MARK} {nonce}:" not in prompt:
                return False
            del self._pending[key]
            self._live.add(key)
            self._changed.notify_all()
        return True

    def wait(self, team: str | None, name: str, timeout: float) -> bool:
        """Whether worker ``name``'s gate is proven live within ``timeout`` seconds; the
        probe is void afterwards either way."""
        key = (team, name)
        with self._changed:
            live = self._changed.wait_for(lambda: key in self._live, timeout)
            self._pending.pop(key, None)
            self._live.discard(key)
        return live
