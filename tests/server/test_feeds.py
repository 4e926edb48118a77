"""The watcher's passes as events, in-process (real inotify, an in-memory pane)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from exomonad.bridge.delivery import PassResult
from exomonad.panes import FakePaneBackend
from exomonad.server.events import BaseEvent, Delivery, DeliveryFailed, MessageIn
from exomonad.server.services import Services
from exomonad.teams import register_synthetic


def _kinds(svc: Services, *types: type[BaseEvent]) -> list[BaseEvent]:
    return [e for e in svc.bus.recent() if isinstance(e, types)]


async def _until(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def test_a_delivered_message_is_message_in_then_delivery(
    svc: Services, fake: FakePaneBackend
) -> None:
    fake.add_pane("%4")
    register_synthetic(svc.paths("proj"), "w1", pane="%4")
    ready = asyncio.Event()
    task = asyncio.create_task(svc.watcher.run(ready))
    await ready.wait()
    try:
        mid = svc.mailbox("proj").send("w1", sender="team-lead", text="build it")
        await _until(lambda: _kinds(svc, Delivery), "no delivery event")
    finally:
        svc.watcher.request_stop()
        await task
    kinds = [e.kind for e in svc.bus.recent()]
    assert kinds == ["message_out", "presence", "message_in", "delivery"]
    [into] = _kinds(svc, MessageIn)
    assert isinstance(into, MessageIn)
    assert (into.sender, into.to, into.text, into.pane, into.message_id) == (
        "team-lead", "w1", "build it", "%4", mid)  # fmt: skip
    [done] = _kinds(svc, Delivery)
    assert isinstance(done, Delivery)
    assert (done.member, done.message_ids, done.pane) == ("w1", [mid], "%4")


def test_a_failing_member_is_reported_once_per_reason(svc: Services) -> None:
    stuck = PassResult(pending=2, error="member 'w1' has no pane bound")
    for _ in range(3):  # the retry loop fails the same way every few seconds
        svc.feeds.on_pass("proj", "w1", None, stuck)
    svc.feeds.on_pass("proj", "w1", None, PassResult(pending=3, error=stuck.error))
    svc.feeds.on_pass("proj", "w1", "%4", PassResult(delivered=["a", "b", "c"]))
    svc.feeds.on_pass("proj", "w1", None, stuck)  # failing again after a success: said
    failed = [e for e in _kinds(svc, DeliveryFailed) if isinstance(e, DeliveryFailed)]
    assert [(e.pending, e.reason) for e in failed] == [(2, stuck.error), (3, stuck.error),
                                                        (2, stuck.error)]  # fmt: skip
    [delivered] = _kinds(svc, Delivery)
    assert isinstance(delivered, Delivery)
    assert delivered.message_ids == ["a", "b", "c"]
