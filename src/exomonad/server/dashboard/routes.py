"""The dashboard's page and API (the same app behind both gates, see ``access``).

=========================  =====================================================
``GET  /``                 the page (``static/index.html``)
``GET  /static/<file>``    its script and style (shipped in the package)
``GET  /api/status``       the server's ``/status`` snapshot (teams, members and
                           presence, tasks, the ``user`` inbox, approvals, ``seq``)
``GET  /api/events``       the event stream (``since``, ``team``,
                           ``Last-Event-ID``), as ``/events``
``POST /api/approvals/ID`` ``{"approve": bool, "reason": str}``: a person's
                           answer (:func:`exomonad.policy.person.answer_as_person`,
                           as ``exomonad approve`` / ``deny``)
``POST /api/reply``        ``{"team", "to", "text"}``: a message from ``user`` into
                           ``to``'s inbox (the locked, verified ``Mailbox.append``)
``POST /api/open``         Unix socket only: open the TCP listener, ``{"port"}``;
                           answers ``{"url"}`` with a new token
=========================  =====================================================

Errors are JSON ``{"error": ...}``: 400 bad input, 404 unknown approval / team, 409 an
approval no longer pending.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from exomonad.errors import ExomonadError
from exomonad.policy.errors import ApprovalClosedError, ApprovalNotFoundError
from exomonad.policy.person import answer_as_person
from exomonad.server.dashboard.listener import DashboardListener, until_closed
from exomonad.server.observe import events_response, status_response
from exomonad.server.services import Services
from exomonad.server.threads import in_thread

__all__ = ["MAX_REPLY", "STATIC", "dashboard_app"]

#: The page, its script and its style.
STATIC = Path(__file__).parent / "static"
#: Longest reply text accepted (bytes of the request body).
MAX_REPLY = 64 * 1024


class _BadRequest(ExomonadError):
    """The request body is not what the route takes."""


async def _body(request: Request, fields: dict[str, type]) -> dict[str, Any]:
    """The JSON object body, with ``fields`` of their types (all required)."""
    raw = await request.body()
    if len(raw) > MAX_REPLY:
        raise _BadRequest(f"the request is over {MAX_REPLY} bytes")
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as exc:
        raise _BadRequest(f"not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise _BadRequest("the body must be a JSON object")
    for name, kind in fields.items():
        if not isinstance(body.get(name), kind):
            raise _BadRequest(f"{name!r} must be a {kind.__name__}")
    return body


def _error(status_code: int, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=status_code)


def dashboard_app(svc: Services, listener: DashboardListener | None = None, *,
                  closing: asyncio.Event | None = None) -> Starlette:  # fmt: skip
    """The dashboard app; with ``listener`` (the Unix socket's) also ``/api/open``; its
    event streams end when ``closing`` is set (the TCP listener's). The caller puts it
    behind its channel's gate."""

    async def index(_: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    async def status_route(_: Request) -> Response:
        return await status_response(svc)

    async def events(request: Request) -> Response:
        response = events_response(svc, request)
        if closing is not None and isinstance(response, StreamingResponse):
            response.body_iterator = until_closed(response.body_iterator, closing)
        return response

    async def answer(request: Request) -> Response:
        try:
            body = await _body(request, {"approve": bool})
            reason = body.get("reason", "")
            if not isinstance(reason, str):
                raise _BadRequest("'reason' must be a string")
            approval_id = request.path_params["approval_id"]
            done = await in_thread(
                lambda: answer_as_person(
                    svc.approvals, approval_id, body["approve"], reason, via="dashboard"
                )
            )
        except _BadRequest as exc:
            return _error(400, exc)
        except ApprovalNotFoundError as exc:
            return _error(404, exc)
        except ApprovalClosedError as exc:
            return _error(409, exc)
        return JSONResponse(done.to_dict())

    async def reply(request: Request) -> Response:
        try:
            body = await _body(request, {"team": str, "to": str, "text": str})
            if not body["text"].strip():
                raise _BadRequest("the reply is empty")
            if body["to"] == "user":
                raise _BadRequest("a reply goes to a member, not to the user inbox")
            if body["team"] not in svc.teams():
                return _error(404, ExomonadError(f"no team {body['team']!r} on this server"))
            mailbox = svc.mailbox(body["team"])
            message_id = await in_thread(
                lambda: mailbox.send(body["to"], sender="user", text=body["text"])
            )
        except _BadRequest as exc:
            return _error(400, exc)
        except ExomonadError as exc:  # not a member, a corrupt inbox: nothing written
            return _error(400, exc)
        return JSONResponse({"message_id": message_id, "team": body["team"], "to": body["to"]})

    async def open_route(request: Request) -> Response:
        assert listener is not None
        try:
            body = await _body(request, {})
            port = body.get("port")
            if port is not None and (not isinstance(port, int) or not 0 <= port < 65536):
                raise _BadRequest("'port' must be a port number")
            url = await listener.open(port)
        except ExomonadError as exc:
            return _error(400, exc)
        return JSONResponse({"url": url, "port": listener.port})

    routes: list[BaseRoute] = [
        Route("/", index, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/status", status_route, methods=["GET"]),
        Route("/api/events", events, methods=["GET"]),
        Route("/api/approvals/{approval_id}", answer, methods=["POST"]),
        Route("/api/reply", reply, methods=["POST"]),
    ]
    if listener is not None:
        routes.append(Route("/api/open", open_route, methods=["POST"]))
    return Starlette(routes=routes)
