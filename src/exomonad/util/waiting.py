"""Wait on a condition instead of sleeping blindly (the libtmux ``retry_until`` habit)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["WaitTimeout", "retry_until"]


class WaitTimeout(AssertionError):
    """The condition did not become true within the timeout."""


def retry_until(
    predicate: Callable[[], bool],
    timeout: float = 5.0,
    interval: float = 0.01,
    message: str = "",
) -> None:
    """Call ``predicate`` until it returns true, or raise :class:`WaitTimeout`.

    >>> retry_until(lambda: True)
    """
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() >= deadline:
            raise WaitTimeout(message or f"condition not met within {timeout:.1f}s")
        time.sleep(interval)
