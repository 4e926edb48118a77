"""Helpers for the watcher benchmarks: run an :class:`InboxWatcher` on a thread, record
what its sink was asked to deliver."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from exomonad.bridge.watcher import InboxWatcher
from exomonad.panes import DeliveryReceipt, PaneBackend

__all__ = ["RecordingSink", "watching"]


class RecordingSink:
    """A pane backend wrapper that keeps every :class:`DeliveryReceipt` (thread-safe)."""

    def __init__(self, backend: PaneBackend) -> None:
        self.backend = backend
        self.receipts: list[DeliveryReceipt] = []
        self._cond = threading.Condition()

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        """Deliver through the real backend, then record the receipt."""
        receipt = self.backend.deliver(pane, text, sender=sender, to=to)
        with self._cond:
            self.receipts.append(receipt)
            self._cond.notify_all()
        return receipt

    def submit(self, pane: str) -> None:
        """Submit through the real backend."""
        self.backend.submit(pane)

    def exists(self, pane: str) -> bool:
        """Ask the real backend."""
        return self.backend.exists(pane)

    def count(self) -> int:
        """Receipts so far."""
        with self._cond:
            return len(self.receipts)

    def wait_count(self, n: int, timeout: float) -> bool:
        """Block until at least ``n`` receipts exist (False on timeout)."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.receipts) >= n, timeout)


@contextmanager
def watching(watcher: InboxWatcher, timeout: float = 10.0) -> Iterator[None]:
    """Run ``watcher`` on its own event loop thread until the block ends."""
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        box["loop"] = asyncio.get_running_loop()
        started = asyncio.Event()
        task = asyncio.create_task(watcher.run(started))
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        ready.set()
        waiter.cancel()
        await task

    def thread_main() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced to the caller below
            box["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=thread_main, name="bench-watcher", daemon=True)
    thread.start()
    if not ready.wait(timeout):
        raise RuntimeError("the watcher did not start")
    if "error" in box or not thread.is_alive():
        raise RuntimeError(f"the watcher failed to start: {box.get('error')!r}")
    try:
        yield
    finally:
        loop: asyncio.AbstractEventLoop = box["loop"]
        loop.call_soon_threadsafe(watcher.request_stop)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError("the watcher did not stop")
