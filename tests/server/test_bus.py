"""The event bus: ordering, replay from a sequence id, gaps for slow readers, teams."""

from __future__ import annotations

import asyncio
import threading

import pytest

from exomonad.server.bus import EventBus, Subscription
from exomonad.server.events import (
    BaseEvent,
    Gap,
    MessageOut,
    PresenceChanged,
    message_fields,
    parse_event,
)
from exomonad.server.service import ServiceHost


def _event(i: int, team: str | None = "t") -> PresenceChanged:
    return PresenceChanged(team=team, member=f"w{i}", state="active", source="test")


async def _read(sub: Subscription, n: int) -> list[BaseEvent | Gap]:
    return [await anext(sub) for _ in range(n)]


def _seqs(items: list[BaseEvent | Gap]) -> list[int]:
    return [i.seq for i in items if not isinstance(i, Gap)]


async def test_events_are_numbered_in_publish_order_across_threads() -> None:
    bus = EventBus()
    sub = bus.subscribe(queue=10_000)
    per_thread, threads = 500, 4

    def publish(k: int) -> None:
        for i in range(per_thread):
            bus.publish(_event(k * per_thread + i))

    workers = [threading.Thread(target=publish, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    got = await _read(sub, per_thread * threads)
    for w in workers:
        w.join()
    assert _seqs(got) == list(range(1, per_thread * threads + 1))
    # Each thread's own events keep their order.
    for k in range(threads):
        mine = [e for e in got if isinstance(e, PresenceChanged)
                and k * per_thread <= int(e.member[1:]) < (k + 1) * per_thread]  # fmt: skip
        assert [e.member for e in mine] == [f"w{k * per_thread + i}" for i in range(per_thread)]
    sub.close()


async def test_stamps_time_and_default_team() -> None:
    bus = EventBus(default_team=lambda: "current", clock=lambda: 42.0)
    stamped = bus.publish(_event(1, team=None))
    assert (stamped.seq, stamped.ts, stamped.team) == (1, 42.0, "current")
    assert bus.publish(_event(2, team="other")).team == "other"


async def test_replay_from_a_sequence_id_then_live_without_loss_or_repeat() -> None:
    bus = EventBus()
    for i in range(10):
        bus.publish(_event(i))
    sub = bus.subscribe(since=6)
    bus.publish(_event(10))
    assert _seqs(await _read(sub, 5)) == [7, 8, 9, 10, 11]
    live = bus.subscribe()  # None: only what comes next
    bus.publish(_event(11))
    assert _seqs(await _read(live, 1)) == [12]
    assert _seqs(await _read(sub, 1)) == [12]


async def test_replay_from_before_the_ring_starts_with_a_gap() -> None:
    bus = EventBus(ring=5)
    for i in range(12):
        bus.publish(_event(i))
    assert (bus.oldest_seq, bus.last_seq) == (8, 12)
    sub = bus.subscribe(since=2)
    first, *rest = await _read(sub, 6)
    assert first == Gap(missed=5, after=2)  # 3..7 are no longer kept
    assert _seqs(rest) == [8, 9, 10, 11, 12]


async def test_an_id_from_an_earlier_server_run_replays_everything_kept() -> None:
    bus = EventBus()
    for i in range(3):
        bus.publish(_event(i))
    sub = bus.subscribe(since=900)  # ids restart at 1 when the server restarts
    assert _seqs(await _read(sub, 3)) == [1, 2, 3]


async def test_a_slow_subscriber_loses_the_oldest_and_is_told_how_many() -> None:
    bus = EventBus(queue=4)
    slow, fast = bus.subscribe(), bus.subscribe(queue=100)
    for i in range(10):
        bus.publish(_event(i))  # nobody reads: publishing never waits
    got = await _read(slow, 5)
    assert got[0] == Gap(missed=6, after=0)
    assert _seqs(got[1:]) == [7, 8, 9, 10]
    assert _seqs(await _read(fast, 10)) == list(range(1, 11))  # the other lost nothing
    health = bus.health()
    assert health["dropped"] == 6
    assert health["gaps"] == 1
    assert sorted(s["dropped"] for s in health["subscribers"]) == [0, 6]
    # Later drops are reported after what was read, as a second gap.
    for i in range(6):
        bus.publish(_event(i))
    got = await _read(slow, 5)
    assert got[0] == Gap(missed=2, after=10)
    assert _seqs(got[1:]) == [13, 14, 15, 16]


async def test_publishing_with_a_stuck_subscriber_keeps_its_queue_bounded() -> None:
    bus = EventBus(queue=16)
    stuck = bus.subscribe()
    for i in range(20_000):
        bus.publish(_event(i))
    assert stuck.queued == 16
    assert stuck.dropped == 20_000 - 16


async def test_a_team_filter_sees_only_its_team() -> None:
    bus = EventBus()
    sub = bus.subscribe(team="a", since=0)
    bus.publish(_event(1, "b"))
    bus.publish(_event(2, "a"))
    bus.publish(_event(3, "b"))
    bus.publish(_event(4, "a"))
    got = await _read(sub, 2)
    assert [(e.seq, e.team) for e in got if not isinstance(e, Gap)] == [(2, "a"), (4, "a")]
    assert [e.seq for e in bus.recent(0, "b")] == [1, 3]


async def test_a_waiting_reader_wakes_for_an_event_from_another_thread() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    reader = asyncio.create_task(anext(sub))
    await asyncio.sleep(0)  # the reader is waiting now
    thread = threading.Thread(target=bus.publish, args=(_event(1),))
    thread.start()
    got = await reader
    thread.join()
    assert isinstance(got, PresenceChanged)
    assert got.seq == 1


async def test_stopping_the_bus_ends_every_subscription_after_what_is_queued() -> None:
    host = ServiceHost()
    bus = host.register(EventBus())
    await host.start()
    sub = bus.subscribe()
    bus.publish(_event(1))
    reading = asyncio.create_task(_drain(sub))
    await host.stop()
    assert _seqs(await reading) == [1]
    assert host.state("events") == "stopped"
    late = bus.subscribe()
    assert [e async for e in late] == []  # a subscription after the stop ends at once


async def _drain(sub: Subscription) -> list[BaseEvent | Gap]:
    return [e async for e in sub]


def test_events_round_trip_through_json() -> None:
    entry = {"from": "w1", "text": '{"type":"idle_notification","from":"w1","timestamp":"t"}',
             "timestamp": "t", "msg_id": "m-1", "summary": "idle"}  # fmt: skip
    event = MessageOut(team="t", to="team-lead", seq=3, ts=1.5, **message_fields(entry))
    assert event.protocol == "idle_notification"
    back = parse_event(event.model_dump_json())
    assert back == event
    long = message_fields({"from": "a", "text": "x" * 10_000, "timestamp": "t"})
    assert (len(long["text"]), long["truncated"]) == (8192, True)
    with pytest.raises(ValueError, match="kind"):
        parse_event('{"kind": "nonsense"}')
