"""The server's background services: one small contract, one registry.

A service is anything with a ``name``, an ``async run(ready)`` that sets ``ready`` once
it serves and returns when asked to stop, ``request_stop()``, and ``health()`` (a
JSON-able dict of its own figures). The inbox watcher, the lead link and the event bus
are services; a new one is one line in :class:`~exomonad.server.services.Services`::

    self.poller = self.services.register(Poller(...))

A service whose ``start()`` and ``stop()`` are blocking calls and that runs its own
thread (the GitHub poller) registers wrapped in :class:`Threaded`.

:class:`ServiceHost` starts them in registration order (each waits for the previous
one's ``ready``), stops them in reverse, and keeps each one's state and last error for
``/health``. A service that fails to start stops the server's start; one that fails
later is logged and reported (``state: failed``), and the others carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from exomonad.errors import ExomonadError

__all__ = [
    "Blocking",
    "Passive",
    "Service",
    "ServiceError",
    "ServiceHost",
    "ServiceState",
    "Threaded",
]

log = logging.getLogger("exomonad.server")

ServiceState = Literal["registered", "starting", "running", "stopping", "stopped", "failed"]


class ServiceError(ExomonadError):
    """A service could not be registered or started."""


@runtime_checkable
class Service(Protocol):
    """What the server needs of a background service."""

    #: Unique among the server's services; the key in ``/health`` ``services``.
    name: str

    async def run(self, ready: asyncio.Event) -> None:
        """Serve until :meth:`request_stop`; set ``ready`` once serving."""
        ...

    def request_stop(self) -> None:
        """Ask :meth:`run` to return soon (called on the server's event loop)."""
        ...

    def health(self) -> dict[str, Any]:
        """This service's own figures (JSON-able)."""
        ...


class Passive:
    """A base for services with no loop of their own (they react to calls): ``run``
    waits until stopped, then calls :meth:`on_stop`."""

    name = "passive"

    def __init__(self) -> None:
        self._stopping: asyncio.Event | None = None
        self._stop_asked = False

    async def run(self, ready: asyncio.Event) -> None:
        """Ready at once; return (after :meth:`on_stop`) when asked to stop."""
        self._stopping = asyncio.Event()
        ready.set()
        try:
            if not self._stop_asked:
                await self._stopping.wait()
        finally:
            self.on_stop()

    def request_stop(self) -> None:
        """Let :meth:`run` return."""
        self._stop_asked = True
        if self._stopping is not None:
            self._stopping.set()

    def on_stop(self) -> None:
        """Release what the service holds (default: nothing)."""

    def health(self) -> dict[str, Any]:
        """No figures of its own (override)."""
        return {}


class Blocking(Protocol):
    """A service with blocking ``start`` and ``stop`` (it runs a thread of its own)."""

    name: str

    def start(self) -> None:
        """Start its work (returns once started)."""
        ...

    def stop(self) -> None:
        """Stop its work (returns once stopped)."""
        ...

    def health(self) -> dict[str, Any]:
        """Its own figures (JSON-able)."""
        ...


B = TypeVar("B", bound=Blocking)


class Threaded(Passive):
    """A :class:`Blocking` service as a :class:`Service`: ``start`` and ``stop`` run in a
    worker thread, so the event loop never waits on them."""

    def __init__(self, service: Blocking) -> None:
        super().__init__()
        self.service = service
        self.name = service.name

    async def run(self, ready: asyncio.Event) -> None:
        """Start it, serve until asked to stop, stop it."""
        await asyncio.to_thread(self.service.start)
        try:
            await super().run(ready)
        finally:
            await asyncio.to_thread(self.service.stop)

    def health(self) -> dict[str, Any]:
        """Its own figures."""
        return self.service.health()


S = TypeVar("S", bound=Service)


@dataclass
class _Slot:
    service: Service
    state: ServiceState = "registered"
    error: str | None = None
    since: float | None = None
    task: asyncio.Task[None] | None = None

    def set(self, state: ServiceState, error: str | None = None) -> None:
        self.state, self.since = state, time.time()
        if error is not None:
            self.error = error


class ServiceHost:
    """The registry: start, stop and report the server's services.

    Parameters
    ----------
    stop_timeout:
        Seconds each service gets to return after :meth:`Service.request_stop` before
        its task is cancelled.
    """

    def __init__(self, *, stop_timeout: float = 30.0) -> None:
        self.stop_timeout = stop_timeout
        self._slots: dict[str, _Slot] = {}

    def register(self, service: S) -> S:
        """Add ``service`` (started after those registered before it); returns it."""
        if not isinstance(service, Service):
            raise ServiceError(f"{service!r} is not a service (name, run, request_stop, health)")
        if service.name in self._slots:
            raise ServiceError(f"a service named {service.name!r} is already registered")
        self._slots[service.name] = _Slot(service)
        return service

    def register_blocking(self, service: B) -> B:
        """Add a :class:`Blocking` service (wrapped in :class:`Threaded`); returns it."""
        self.register(Threaded(service))
        return service

    def names(self) -> list[str]:
        """Registered services, in start order."""
        return list(self._slots)

    def state(self, name: str) -> ServiceState:
        """The state of service ``name``."""
        return self._slots[name].state

    async def start(self) -> None:
        """Start every service in order, each once the previous one is ready.

        Raises :class:`ServiceError` (after stopping those already started) when one
        ends or fails before it is ready.
        """
        for name, slot in self._slots.items():
            if slot.state not in ("registered", "stopped"):
                continue
            ready = asyncio.Event()
            slot.set("starting")
            slot.task = asyncio.create_task(self._run(slot, ready), name=f"service:{name}")
            waiter = asyncio.create_task(ready.wait())
            await asyncio.wait({slot.task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if not ready.is_set():
                error = slot.error or "it returned before it was ready"
                await self.stop()
                raise ServiceError(f"service {name!r} failed to start: {error}")
            if self.state(name) == "starting":  # not failed since it said it was ready
                slot.set("running")

    async def _run(self, slot: _Slot, ready: asyncio.Event) -> None:
        name = slot.service.name
        try:
            await slot.service.run(ready)
        except asyncio.CancelledError:
            slot.set("stopped", "cancelled: it did not stop in time")
            raise
        except Exception as exc:
            log.exception("service %s failed", name)
            slot.set("failed", f"{type(exc).__name__}: {exc}")
            return
        if slot.state == "stopping":
            slot.set("stopped")
        else:
            log.error("service %s stopped on its own", name)
            slot.set("failed", "it stopped on its own")

    async def stop(self) -> None:
        """Stop every started service, in reverse order (safe to call twice)."""
        for slot in reversed(self._slots.values()):
            task = slot.task
            if task is None:
                continue
            slot.task = None
            if not task.done():
                slot.set("stopping")
                slot.service.request_stop()
                done, _ = await asyncio.wait({task}, timeout=self.stop_timeout)
                if not done:
                    log.error("service %s did not stop in time: cancelled", slot.service.name)
                    task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def health(self) -> dict[str, dict[str, Any]]:
        """Each service: its state, last error, since when, and its own figures."""
        out: dict[str, dict[str, Any]] = {}
        for name, slot in self._slots.items():
            try:
                own = slot.service.health()
            except Exception as exc:  # a health bug must not break /health
                own = {"health_error": f"{type(exc).__name__}: {exc}"}
            out[name] = {"state": slot.state, "error": slot.error, "since": slot.since, **own}
        return out
