"""Seeing the team: ``GET /events`` (server-sent events) and ``GET /status`` (JSON).

Both carry other agents' messages, so only the lead's role may read them: the lead's
token (``.exomonad/lead.token``) from the lead's own processes or a person's terminal
(``exomonad status``, a dashboard). A worker's token, no token, or the lead's token from
inside another agent's session (:meth:`Services.identify`) gets a 403.

``/events?since=SEQ&team=T``: first an ``event: hello`` with the sequence ids kept and
where the stream starts, then every event after ``since`` (replayed from the ring, then
live; ``Last-Event-ID`` on a reconnect wins over ``since``; no ``since``: only new
events), of team ``T`` only if given. Each event is ``id: <seq>``, ``event: <kind>``,
``data: <JSON>``; an ``event: gap`` (no id) says how many this client missed because
it read too slowly; a ``: ping`` comment every :data:`PING` seconds keeps idle
connections honest. The stream ends when the server stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from exomonad.server.events import BaseEvent, Gap
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.server.snapshot import status
from exomonad.server.teammates import caller
from exomonad.server.threads import in_thread

__all__ = ["PING", "events_response", "frame", "may_observe", "observe_routes", "status_response"]

#: Seconds between keep-alive comments on an idle event stream.
PING = 15.0

_REFUSED = ("the team's events and status are for the lead and people (the lead's token, "
            "from outside every agent's session): they carry other agents' messages")  # fmt: skip


def may_observe(svc: Services, who: Identity) -> bool:
    """Whether ``who`` may read ``/events`` and ``/status``."""
    return who.authenticated and who.role == svc.config.lead.role


def frame(item: BaseEvent | Gap) -> bytes:
    """One server-sent event for ``item``."""
    data = item.model_dump_json().encode()
    if isinstance(item, Gap):
        return b"event: gap\ndata: " + data + b"\n\n"
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (item.seq, item.kind.encode(), data)


def _since(request: Request) -> int | None:
    raw = request.headers.get("last-event-id") or request.query_params.get("since")
    if raw is None or raw == "":
        return None
    value = int(raw)  # ValueError: a 400
    if value < 0:
        raise ValueError("since must be 0 or more")
    return value


async def _stream(svc: Services, since: int | None, team: str | None) -> AsyncIterator[bytes]:
    sub = svc.bus.subscribe(since=since, team=team)  # here: closed by the finally below
    try:
        hello = {"last_seq": svc.bus.last_seq, "oldest_seq": svc.bus.oldest_seq,
                 "since": sub.last, "asked": since, "team": sub.team,
                 "started_at": svc.started_at}  # fmt: skip
        yield b"retry: 1000\nevent: hello\ndata: " + orjson.dumps(hello) + b"\n\n"
        while True:
            try:
                async with asyncio.timeout(PING):
                    item = await anext(sub)
            except TimeoutError:
                yield b": ping\n\n"
                continue
            except StopAsyncIteration:
                return
            yield frame(item)
    finally:
        sub.close()


def events_response(svc: Services, request: Request) -> Response:
    """The event stream ``request`` asks for (``since``, ``team``, ``Last-Event-ID``),
    or a 400; the caller has checked who asks (here, and the dashboard)."""
    try:
        since = _since(request)
    except ValueError as exc:
        return JSONResponse({"error": f"bad since / Last-Event-ID: {exc}"}, status_code=400)
    team = request.query_params.get("team") or None
    return StreamingResponse(_stream(svc, since, team), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})  # fmt: skip


async def status_response(svc: Services) -> Response:
    """The ``/status`` document; the caller has checked who asks."""
    doc = await in_thread(status, svc)
    return Response(orjson.dumps(doc), media_type="application/json")


def observe_routes(svc: Services) -> list[Route]:
    """``/events`` and ``/status``."""

    async def events(request: Request) -> Response:
        if not may_observe(svc, caller(svc, request)):
            return JSONResponse({"error": _REFUSED}, status_code=403)
        return events_response(svc, request)

    async def status_route(request: Request) -> Response:
        if not may_observe(svc, caller(svc, request)):
            return JSONResponse({"error": _REFUSED}, status_code=403)
        return await status_response(svc)

    return [
        Route("/events", events, methods=["GET"]),
        Route("/status", status_route, methods=["GET"]),
    ]
