"""The server's thread pool: results, errors, and a cancelled caller's call running on."""

from __future__ import annotations

import threading

import anyio
import pytest

from exomonad.server.threads import in_thread
from exomonad.util.waiting import retry_until


def test_a_call_runs_off_the_loop_and_returns_its_result() -> None:
    async def main() -> tuple[str, str]:
        name = await in_thread(lambda: threading.current_thread().name)
        return name, threading.current_thread().name

    pooled, loop = anyio.run(main, backend="asyncio")
    assert pooled.startswith("exomonad")
    assert pooled != loop


def test_an_exception_reaches_the_caller() -> None:
    def fails(x: int) -> None:
        raise ValueError(f"bad {x}")

    async def main() -> None:
        await in_thread(fails, 3)

    with pytest.raises(ValueError, match="bad 3"):
        anyio.run(main, backend="asyncio")


def test_a_cancelled_caller_stops_waiting_and_the_call_still_lands() -> None:
    """An anyio cancel scope (the SDK ends a session's requests this way) cancels the
    wait, not the call: its effect lands after the caller has gone."""
    release, landed = threading.Event(), threading.Event()

    def slow_append() -> str:
        release.wait(30)
        landed.set()
        return "appended"

    async def main() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await in_thread(slow_append)
        return scope.cancelled_caught

    assert anyio.run(main, backend="asyncio") is True
    assert not landed.is_set()
    release.set()
    retry_until(landed.is_set, timeout=10, message="the abandoned call to finish")
