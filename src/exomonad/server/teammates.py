"""The routes a teammate process uses: its token and worktree in, its MCP readiness, and
everything back out (see :mod:`exomonad.server.workers`)."""

from __future__ import annotations

import functools
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from exomonad import runtimes
from exomonad.ancestry import token_requester
from exomonad.errors import ExomonadError, GateError
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.peer import peer_pid
from exomonad.server.services import Services
from exomonad.server.threads import in_thread
from exomonad.server.workers import await_gate, await_mcp, provision, release

__all__ = ["caller", "teammate_routes"]


def caller(svc: Services, request: Request) -> Identity:
    """Who sent ``request``: its token, checked against the connecting process."""
    return svc.identify(request.headers.get(TOKEN_HEADER), peer_pid(request.scope))


def _worker(svc: Services, request: Request) -> Identity | None:
    """The worker behind ``request``'s token (None: no worker's token)."""
    who = caller(svc, request)
    return who if who.authenticated and who.team is not None else None


#: Why a gate probe is refused to anyone but the worker's own ``exomonad teammate``.
_NOT_TEAMMATE = ("only the `exomonad teammate` process that holds this worker's token may "
                 "check its gate: the agent itself could otherwise vouch for hooks that "
                 "never ran")  # fmt: skip


#: Why a release is refused to anyone but the worker's own ``exomonad teammate``.
_NOT_TEAMMATE_RELEASE = ("only the `exomonad teammate` process that holds this worker's token "
                         "may release it, once its agent has stopped")  # fmt: skip


#: Why the MCP wait is refused to anyone but the worker's own ``exomonad teammate``.
_NOT_TEAMMATE_WAIT = ("only the `exomonad teammate` process that holds this worker's token may "
                      "wait for its MCP client")  # fmt: skip


def _from_teammate(who: Identity, request: Request) -> bool:
    """Whether ``request`` comes from the teammate process ``who``'s token was issued to
    (the kernel's ``SO_PEERCRED``), not from the agent it runs."""
    return who.pid is not None and peer_pid(request.scope) == who.pid


async def _waiting(request: Request) -> tuple[dict[str, Any], float]:
    """A waiting route's body and its ``timeout`` (seconds, at most 600)."""
    body = orjson.loads(await request.body() or b"{}")
    return body, min(float(body.get("timeout", 60)), 600.0)


def _may_not_provision(svc: Services, request: Request, body: dict[str, Any]) -> str | None:
    """Why ``request`` may not have a worker token, or None. The lead (its token) may ask
    for any worker; anyone else only for a plain ``worker`` reporting to the lead, and
    only from a process in no other agent's session (:func:`~exomonad.ancestry.
    token_requester`): an ``exomonad teammate`` Claude Code started, or a person."""
    who = caller(svc, request)
    if who.authenticated and who.role == svc.config.lead.role:
        return None
    if body.get("role", "worker") != "worker" or \
            body.get("parent", svc.config.lead.name) != svc.config.lead.name:  # fmt: skip
        return "only the lead may ask for a worker of another role or parent"
    pid = peer_pid(request.scope)
    if pid is None:
        return "the connecting process is not known (no peer credentials)"
    lead = svc.tokens.lead_path.read_text().strip() if svc.tokens.lead_path.exists() else None
    why = token_requester(pid, lead)
    return None if why is None else f"a worker token is not issued to an agent's process ({why})"


def teammate_routes(svc: Services) -> list[Route]:
    """``/teammate/token``, ``/teammate/release``, ``/teammate/mcp-ready`` and the gate
    probe's ``/teammate/gate-probe`` and ``/teammate/gate-live``."""

    async def teammate_token(request: Request) -> Response:
        """A worker token (and worktree) for a teammate Claude Code spawned.

        The socket is 0600: whoever can connect is the project's user. Only names and
        roles below the lead are issued (see :func:`exomonad.server.workers.provision`).
        """
        try:
            body = orjson.loads(await request.body())
            if not isinstance(body, dict):
                raise TypeError("not an object")
            refused = await in_thread(_may_not_provision, svc, request, body)
            if refused is not None:
                svc.counters["teammate_token_refused"] += 1
                return JSONResponse({"error": refused}, status_code=403)
            parent = body.get("parent", svc.config.lead.name)
            worker = await in_thread(
                lambda: provision(
                    svc,
                    body.get("name"),
                    body.get("team"),
                    role=body.get("role", "worker"),
                    parent=parent if isinstance(parent, str) else svc.config.lead.name,
                    pid=body.get("pid"),
                    runtime=body.get("runtime"),
                )
            )
        except (orjson.JSONDecodeError, TypeError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        except ExomonadError as exc:
            return JSONResponse({"error": str(exc)}, status_code=403)
        return JSONResponse(worker.to_json())

    async def teammate_release(request: Request) -> Response:
        """A teammate that is shutting down gives back its token and worktree. Only the
        teammate process (found probing: the agent's own code released itself, and the
        server's git then ran on a worktree that code was still changing)."""
        who = _worker(svc, request)
        if who is None or who.team is None:
            return JSONResponse({"error": "a worker token is required"}, status_code=403)
        if not _from_teammate(who, request):
            return JSONResponse({"error": _NOT_TEAMMATE_RELEASE}, status_code=403)
        removal = await in_thread(functools.partial(release, caller=peer_pid(request.scope)),
                                  svc, who.name, who.team)  # fmt: skip
        return JSONResponse({"worktree": removal.to_json() if removal is not None else None})

    async def teammate_mcp_ready(request: Request) -> Response:
        """A teammate waits (``timeout`` seconds, at most 600) until its agent's MCP
        client has reached this server, before the agent reads its task. Only the
        teammate process may (found probing: a worker's code held the server's threads
        with 70 such waits)."""
        who = _worker(svc, request)
        if who is None or who.team is None:
            return JSONResponse({"error": "a worker token is required"}, status_code=403)
        if not _from_teammate(who, request):
            return JSONResponse({"error": _NOT_TEAMMATE_WAIT}, status_code=403)
        try:
            _, timeout = await _waiting(request)
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        ready = await in_thread(await_mcp, svc, who.team, who.name, timeout)
        return JSONResponse({"ready": ready})

    async def teammate_gate_probe(request: Request) -> Response:
        """A teammate whose runtime proves its gate live gets its probe text to type."""
        who = _worker(svc, request)
        if who is None or who.team is None:
            return JSONResponse({"error": "a worker token is required"}, status_code=403)
        if not _from_teammate(who, request):
            return JSONResponse({"error": _NOT_TEAMMATE}, status_code=403)
        return JSONResponse({"text": svc.gate_probes.start(who.team, who.name)})

    async def teammate_gate_live(request: Request) -> Response:
        """...then waits (``timeout`` seconds, at most 600) for it to come back through
        its agent's own prompt hook; the answer says why not, and how to fix it."""
        who = _worker(svc, request)
        if who is None or who.team is None:
            return JSONResponse({"error": "a worker token is required"}, status_code=403)
        if not _from_teammate(who, request):
            return JSONResponse({"error": _NOT_TEAMMATE}, status_code=403)
        try:
            body, timeout = await _waiting(request)
            runner = runtimes.get(str(body.get("runtime")))
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        except ExomonadError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        try:
            await in_thread(await_gate, svc, who.team, who.name, runner, timeout)
        except GateError as exc:
            return JSONResponse({"live": False, "error": str(exc)})
        return JSONResponse({"live": True})

    return [
        Route("/teammate/token", teammate_token, methods=["POST"]),
        Route("/teammate/gate-probe", teammate_gate_probe, methods=["POST"]),
        Route("/teammate/gate-live", teammate_gate_live, methods=["POST"]),
        Route("/teammate/release", teammate_release, methods=["POST"]),
        Route("/teammate/mcp-ready", teammate_mcp_ready, methods=["POST"]),
    ]
