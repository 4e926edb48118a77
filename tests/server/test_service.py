"""The service registry: start in order, stop in reverse, report state and errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from exomonad.server.service import Passive, ServiceError, ServiceHost


class Recorder(Passive):
    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.name = name
        self.log = log

    async def run(self, ready: asyncio.Event) -> None:
        self.log.append(f"start {self.name}")
        await super().run(ready)

    def on_stop(self) -> None:
        self.log.append(f"stop {self.name}")

    def health(self) -> dict[str, Any]:
        return {"figure": len(self.log)}


class Crashes:
    """Fails ``after_ready`` or before it."""

    def __init__(self, name: str, *, after_ready: bool) -> None:
        self.name = name
        self.after_ready = after_ready
        self.go = asyncio.Event()

    async def run(self, ready: asyncio.Event) -> None:
        if self.after_ready:
            ready.set()
            await self.go.wait()
        raise OSError("inotify watch limit reached")

    def request_stop(self) -> None:
        self.go.set()

    def health(self) -> dict[str, Any]:
        raise KeyError("bug in health")


class Stubborn(Passive):
    name = "stubborn"

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        await asyncio.Event().wait()  # ignores request_stop


async def test_started_in_order_stopped_in_reverse_with_health() -> None:
    log: list[str] = []
    host = ServiceHost()
    a = host.register(Recorder("a", log))
    host.register(Recorder("b", log))
    assert a.name == "a"
    await host.start()
    assert log == ["start a", "start b"]
    health = host.health()
    assert [health[n]["state"] for n in ("a", "b")] == ["running", "running"]
    assert health["a"]["figure"] == 2
    await host.stop()
    await host.stop()  # twice is fine
    assert log == ["start a", "start b", "stop b", "stop a"]
    assert host.state("a") == "stopped"


async def test_a_service_that_fails_to_start_stops_the_start() -> None:
    log: list[str] = []
    host = ServiceHost()
    host.register(Recorder("a", log))
    host.register(Crashes("watcher", after_ready=False))
    host.register(Recorder("c", log))
    with pytest.raises(ServiceError, match=r"watcher.*inotify watch limit"):
        await host.start()
    assert log == ["start a", "stop a"]  # the one started is stopped again, c never ran
    assert host.state("watcher") == "failed"
    assert host.state("c") == "registered"


async def test_a_service_failing_later_is_reported_and_the_others_carry_on() -> None:
    log: list[str] = []
    host = ServiceHost()
    crashes = host.register(Crashes("poller", after_ready=True))
    host.register(Recorder("b", log))
    await host.start()
    crashes.go.set()
    while host.state("poller") != "failed":
        await asyncio.sleep(0.01)
    health = host.health()
    assert health["poller"]["error"] == "OSError: inotify watch limit reached"
    assert health["poller"]["health_error"] == "KeyError: 'bug in health'"
    assert health["b"]["state"] == "running"
    await host.stop()
    assert host.state("b") == "stopped"


async def test_a_service_that_ignores_stop_is_cancelled() -> None:
    host = ServiceHost(stop_timeout=0.05)
    host.register(Stubborn())
    await host.start()
    await host.stop()
    assert host.state("stubborn") == "stopped"
    assert "did not stop in time" in str(host.health()["stubborn"]["error"])


def test_registering_is_checked() -> None:
    host = ServiceHost()
    host.register(Recorder("a", []))
    with pytest.raises(ServiceError, match="already registered"):
        host.register(Recorder("a", []))
    with pytest.raises(ServiceError, match="not a service"):
        host.register(object())  # type: ignore[type-var]
