"""The fast path: an established MCP session's ``tools/call``, ``tools/list`` and ``ping``
answered without the SDK's per-request session machinery.

The SDK's streamable-HTTP transport hands every request through memory streams to the
session's dispatcher task, with an OpenTelemetry span and pydantic models on the way in
and out: about 40 % of a cheap tool call's server CPU (docs/performance.md, issue 14).
:class:`FastPath` answers the three requests agents make all day itself, with the wire
answer the SDK gives (the same JSON-RPC result, ``content-type: application/json`` and
``mcp-session-id``), and only when the SDK would have accepted the request: a single
JSON-RPC request in a POST with exactly the headers the SDK accepts, on a session the
SDK holds and has already served a tool request on (so past its initialization gate).
Everything else (``initialize``, notifications, batches, GET, DELETE, an unknown,
missing or ended session, a refused Host, Origin, Accept, Content-Type or protocol
version header, a body too large, params the protocol version's schema refuses,
anything odd) goes to the SDK untouched, which stays the one authority on the
protocol's edges. The caller's identity, the tool lists and the tool results come from
the same functions the SDK's handlers use (:mod:`exomonad.server.mcp_app`).

The SDK keeps no public registry of its sessions: :meth:`FastPath._transport` reads the
session manager's (``mcp`` is pinned), and a fast request holds the session's idle
countdown exactly as the transport's own ``handle_request`` does. Should one of the
private attributes read here be missing (another SDK), every request goes to the SDK.
A session ended (``DELETE``) while a fast request was served gets the SDK's answer for
that case (HTTP 500, "Session terminated before the request completed").
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import anyio
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError, methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from exomonad.server.identity import TOKEN_HEADER
from exomonad.server.mcp_app import ToolCatalog, answer_call, caller_of
from exomonad.server.services import Services
from exomonad.util.digits import is_number

__all__ = ["Established", "FastPath"]

log = logging.getLogger("exomonad.server")

#: The requests the fast path answers.
METHODS = frozenset({"tools/call", "tools/list", "ping"})
_MISSING: Any = object()
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
_PLAIN_CALL = frozenset({"name", "arguments"})
_TEXT_ITEM = {"type", "text"}
_CALL_KEYS = {"content", "isError", "structuredContent"}
_CALL_KEYS_BARE = {"content", "isError"}
#: The request headers the fast path looks at (a repeated one sends the request on).
_HEADERS = frozenset({b"host", b"origin", b"content-type", b"accept", b"content-length",
                      MCP_SESSION_ID_HEADER.encode(), MCP_PROTOCOL_VERSION_HEADER.encode(),
                      TOKEN_HEADER.lower().encode()})  # fmt: skip


class Established:
    """The sessions the SDK has handed a tool request to (its initialization gate is
    behind them), each with its SDK session object, whose protocol version is live."""

    def __init__(self) -> None:
        self._sessions: dict[str, ServerSession] = {}

    def note(self, ctx: ServerRequestContext[Any]) -> None:
        """Record the session of a request the SDK is serving (a handler's context)."""
        headers = getattr(ctx.request, "headers", None)
        sid = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
        if isinstance(sid, str) and sid not in self._sessions:
            self._sessions[sid] = ctx.session

    def get(self, sid: str) -> ServerSession | None:
        """The session ``sid``, if the SDK has served a tool request on it."""
        return self._sessions.get(sid)

    def keep(self, live: set[str] | dict[str, Any]) -> None:
        """Forget every session not in ``live`` (the SDK's)."""
        for sid in [s for s in self._sessions if s not in live]:
            del self._sessions[sid]


class FastPath:
    """ASGI for ``POST /mcp``: the fast answer when it applies, else the SDK (``sdk``).

    Parameters
    ----------
    svc:
        The server's services (the caller's identity, the tools).
    sdk:
        The SDK's streamable-HTTP endpoint; every request not answered here goes to it.
    manager:
        The SDK's session manager behind ``sdk``.
    security:
        The transport security settings the SDK was given.
    catalog, established:
        The tool lists and the sessions record shared with the SDK's handlers.
    """

    def __init__(self, svc: Services, sdk: ASGIApp, manager: StreamableHTTPSessionManager,
                 security: TransportSecuritySettings, catalog: ToolCatalog,
                 established: Established) -> None:  # fmt: skip
        if not manager.json_response or manager.stateless:
            raise ValueError("the fast path answers JSON responses of stateful sessions only")
        self.svc, self.sdk, self.manager, self.security = svc, sdk, manager, security
        self.catalog, self.established = catalog, established
        self._ping: dict[str, dict[str, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = self._headers(scope)
        sid = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
        transport = self._transport(sid, scope) if sid is not None else None
        if headers is None or sid is None or transport is None:
            return await self.sdk(scope, receive, send)
        session = self.established.get(sid)
        if session is None:
            self.established.keep(self.manager._server_instances)
            return await self.sdk(scope, receive, send)
        body, replay = await self._body(receive, headers)
        request = _request(body) if body is not None else None
        version = session.protocol_version
        if request is None or not _valid(request[1], version, request[2]):
            return await self.sdk(scope, replay, send)
        with _in_flight(transport) as held:
            if not held:  # its idle time ran out (or another SDK): the SDK answers
                return await self.sdk(scope, replay, send)
            rid, method, params = request
            answer = await self._answer(rid, method, params, version, headers, scope)
        if transport.is_terminated:  # ended while it was served: what the SDK answers
            return await _terminated(sid)(scope, replay, send)
        self.svc.counters["mcp_fast"] += 1
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"mcp-session-id", sid.encode()),
            (b"content-length", str(len(answer)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": answer})

    def _headers(self, scope: Scope) -> dict[str, str] | None:
        """The headers the fast path checks, if they are ones the SDK accepts (else None)."""
        if scope["method"] != "POST" or "user" in scope:
            return None
        found: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            if raw_name in _HEADERS:
                name = raw_name.decode("latin-1")
                if name in found:
                    return None
                found[name] = raw_value.decode("latin-1")
        return found if self._accepted(found) else None

    def _accepted(self, h: dict[str, str]) -> bool:
        """A subset of what the SDK accepts (transport_security, streamable_http)."""
        ctype = h.get("content-type", "")
        accept = [t.strip().split(";")[0].strip().lower() for t in h.get("accept", "").split(",")]
        version = h.get(MCP_PROTOCOL_VERSION_HEADER)
        length = h.get("content-length")
        return (
            ctype.split(";")[0] == "application/json"
            and ("*/*" in accept or "application/json" in accept or "application/*" in accept)
            and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)
            and (length is None or (is_number(length)
                                    and int(length) <= self.manager.max_request_body_size))
            and (not self.security.enable_dns_rebinding_protection
                 or (h.get("host") in self.security.allowed_hosts and not h.get("origin")))
        )  # fmt: skip

    def _transport(self, sid: str, scope: Scope) -> StreamableHTTPServerTransport | None:
        """The SDK's live transport of session ``sid``, if the SDK would hand it this
        request (no session owner: this server has no HTTP authentication). None also
        when the manager lacks the private registries read here (not the pinned SDK)."""
        instances = getattr(self.manager, "_server_instances", None)
        owners = getattr(self.manager, "_session_owners", None)
        if not isinstance(instances, dict) or not isinstance(owners, dict):
            return None
        transport: StreamableHTTPServerTransport | None = instances.get(sid)
        if transport is None or sid in owners or transport.is_terminated:
            return None
        return transport

    async def _body(
        self, receive: Receive, headers: dict[str, str]
    ) -> tuple[bytes | None, Receive]:
        """The whole body (None: too large, or the client left) and a ``receive`` that
        replays what was read, for the SDK."""
        read: list[Message] = []
        size = 0
        while True:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.manager.max_request_body_size or not message.get("more_body"):
                break
        complete = read[-1]["type"] == "http.request" and not read[-1].get("more_body")
        body = b"".join(m.get("body", b"") for m in read) if complete else None
        if body is not None and size > self.manager.max_request_body_size:
            body = None

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        return body, replay

    async def _answer(self, rid: int | str, method: str, params: dict[str, Any] | None,
                      version: str, headers: dict[str, str], scope: Scope) -> bytes:  # fmt: skip
        """The JSON-RPC response's bytes, as the SDK's dispatcher would write them."""
        try:
            if method == "ping":
                result = self._ping.get(version)
                if result is None:
                    result = self._ping[version] = _sieve("ping", version, {})
            else:
                who = caller_of(self.svc, headers.get(TOKEN_HEADER.lower()), scope)
                if method == "tools/list":
                    result = self.catalog.wire(who.role, version)
                else:
                    assert params is not None  # validated: tools/call has params
                    call = await answer_call(self.svc, who, params["name"],
                                             dict(params.get("arguments") or {}))  # fmt: skip
                    result = _sieve_call(version, call)
        except Exception as exc:  # the dispatcher's one exception-to-wire boundary
            error = handler_exception_to_error_data(exc)
            if error is None:
                log.exception("handler for %r raised", method)
                error = ErrorData(code=0, message=str(exc))
            return orjson.dumps({"jsonrpc": "2.0", "id": rid,
                                 "error": error.model_dump(by_alias=True, exclude_unset=True,
                                                           mode="json")})  # fmt: skip
        return orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result})


def _request(body: bytes) -> tuple[int | str, str, dict[str, Any] | None] | None:
    """``(id, method, params)`` of a single JSON-RPC request the fast path answers."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not {"jsonrpc", "id", "method"} <= doc.keys() <= _ENVELOPE:
        return None
    rid, method, params = doc["id"], doc["method"], doc.get("params")
    if doc["jsonrpc"] != "2.0" or type(rid) not in (int, str) or method not in METHODS:
        return None
    if "params" in doc and not isinstance(params, dict):
        return None
    return rid, method, params


def _valid(method: str, version: str, params: dict[str, Any] | None) -> bool:
    """Whether the SDK would pass ``params`` on to its handler at ``version``."""
    if method == "tools/call":
        if params is None:
            return False
        arguments = params.get("arguments")
        if not isinstance(params.get("name"), str) or not (
            arguments is None or isinstance(arguments, dict)
        ):
            return False
        if params.keys() <= _PLAIN_CALL and version in HANDSHAKE_PROTOCOL_VERSIONS:
            return True  # what agents send, valid in every version (a test checks)
    elif not params and version in HANDSHAKE_PROTOCOL_VERSIONS:
        return True  # tools/list, ping without params
    try:
        methods.validate_client_request(method, version, params)
    except (KeyError, ValueError):  # ValidationError is a ValueError
        return False
    return True


def _terminated(sid: str) -> Response:
    """The SDK's answer to a request whose session ended while it was served
    (``StreamableHTTPServerTransport._handle_post_request``, JSON responses)."""
    error = ErrorData(code=INTERNAL_ERROR,
                      message="Session terminated before the request completed")  # fmt: skip
    body = JSONRPCError(jsonrpc="2.0", id=None, error=error)
    headers = {"Content-Type": "application/json", MCP_SESSION_ID_HEADER: sid}
    return Response(body.model_dump_json(by_alias=True, exclude_unset=True), 500, headers)


def _sieve(method: str, version: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as the SDK's runner shapes it for ``version`` (its ``_serialize``)."""
    try:
        return methods.serialize_server_result(method, version, result)
    except ValidationError:
        log.exception("handler for %r returned an invalid result", method)
        raise MCPError(code=INTERNAL_ERROR, message="Handler returned an invalid result") from None


def _sieve_call(version: str, call: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result as :func:`_sieve` shapes it. The shape
    :func:`~exomonad.server.mcp_app.answer_call` gives (one text item, ``isError``,
    ``structuredContent`` or not) is sieved once per version with stand-in values
    and filled in: a text is any string, the structured content the plain JSON values
    the text holds, which the sieve's pydantic round trip would copy unchanged (a test
    compares both for every version). Any other shape goes through :func:`_sieve`."""
    content, structured = call.get("content"), call.get("structuredContent")
    item = content[0] if type(content) is list and len(content) == 1 else None
    plain = (
        type(item) is dict
        and item.keys() == _TEXT_ITEM
        and item["type"] == "text"
        and type(item["text"]) is str
        and type(call.get("isError")) is bool
        and (structured is None or type(structured) is dict)
        and call.keys() == (_CALL_KEYS if structured is not None else _CALL_KEYS_BARE)
    )
    if not plain:
        return _sieve("tools/call", version, call)
    assert item is not None
    shape = _call_shape(version, structured is not None)
    filled = {"content": [{k: item["text"] if k == "text" else v
                           for k, v in shape["content"][0].items()}],
              "isError": call["isError"], "structuredContent": structured}  # fmt: skip
    return {k: filled.get(k, v) for k, v in shape.items()}


@cache
def _call_shape(version: str, structured: bool) -> dict[str, Any]:
    """The sieve's answer for a stand-in ``tools/call`` result (see :func:`_sieve_call`)."""
    probe: dict[str, Any] = {"content": [{"type": "text", "text": ""}], "isError": False}
    if structured:
        probe["structuredContent"] = {"k": 0}
    return _sieve("tools/call", version, probe)


@contextmanager
def _in_flight(transport: StreamableHTTPServerTransport) -> Iterator[bool]:
    """Hold the session's idle countdown while a fast request is served, as the SDK's
    ``StreamableHTTPServerTransport.handle_request`` does; False if it already ran out,
    or if the transport lacks the private attributes read here (not the pinned SDK)."""
    if not hasattr(transport, "_requests_in_flight"):
        yield False
        return
    scope = getattr(transport, "idle_scope", _MISSING)
    timeout = getattr(transport, "_idle_timeout", _MISSING)
    if scope is _MISSING or timeout is _MISSING:
        yield False
        return
    if scope is None or timeout is None:
        yield True
        return
    if scope.cancel_called:
        yield False
        return
    transport._requests_in_flight += 1
    scope.deadline = math.inf
    try:
        yield True
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            scope.deadline = anyio.current_time() + timeout
