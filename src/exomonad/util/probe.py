"""Record when conditions that no process reports first hold (a file appearing, an inbox
entry that is pruned a second later): a thread polls each named check every 20 ms."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from exomonad.util.waiting import retry_until

__all__ = ["Probe"]


class Probe:
    """Polls named conditions every 20 ms in a thread; records when each first held.

    >>> with Probe() as probe:
    ...     probe.watch("always", lambda: True)
    ...     probe.at("always", timeout=5) <= time.monotonic()
    True
    """

    def __init__(self) -> None:
        self.checks: dict[str, Callable[[], bool]] = {}
        self.seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="probe", daemon=True)
        self._thread.start()

    def watch(self, name: str, check: Callable[[], bool]) -> None:
        """Start polling ``check`` (an exception counts as not yet)."""
        with self._lock:
            self.checks[name] = check

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            with self._lock:
                pending = [(n, c) for n, c in self.checks.items() if n not in self.seen]
            for name, check in pending:
                with contextlib.suppress(Exception):
                    if check():
                        self.seen[name] = time.monotonic()

    def at(self, name: str, timeout: float = 60.0) -> float:
        """When ``name`` first held (``time.monotonic()``), waiting up to ``timeout`` s
        (:class:`~exomonad.util.waiting.WaitTimeout` after)."""
        retry_until(
            lambda: name in self.seen,
            timeout=timeout,
            interval=0.02,
            message=f"probe {name!r} never held",
        )
        return self.seen[name]

    def close(self) -> None:
        """Stop polling."""
        self._stop.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
