"""Who may use the dashboard: a person, proved one way per channel.

The dashboard shows other agents' messages and answers approvals meant for a person, so
each request must come from the person running ExoMonad:

* over the Unix socket (``/dashboard/...``), :class:`PersonGate`: the connecting process,
  read off the socket by the kernel (``SO_PEERCRED``, :mod:`exomonad.server.peer`), must
  be in no agent's session, the lead's included, and readable
  (:func:`exomonad.policy.person.require_person`, the rule ``exomonad approve`` applies
  to itself). A token proves nothing here: an agent may have read one.
* over loopback TCP, :class:`TokenGate`: the first path segment is a dashboard token
  (:class:`DashboardTokens`: random, kept in the server's memory only, printed once to
  the person's terminal by ``exomonad serve --dashboard-port`` or ``exomonad
  dashboard``), and the ``Host`` header names the loopback address and port (so a web
  page that rebinds its own name to 127.0.0.1 gets nothing). Every path, the page and
  its scripts included, needs it; an agent's ``EXOMONAD_TOKEN`` or the lead's token is
  not one.

Both answer a refused request with a JSON error (403 and 401) and never reach the app.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import deque
from collections.abc import Callable

from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from exomonad.policy.person import NotAPersonError, require_person
from exomonad.server.peer import peer_pid
from exomonad.server.threads import in_thread

__all__ = ["MAX_TOKENS", "DashboardTokens", "PersonGate", "TokenGate", "security_headers"]

#: Dashboard tokens kept at once (``exomonad dashboard`` issues one each time; the
#: oldest beyond this many stops working).
MAX_TOKENS = 16

#: Sent with every dashboard answer: no script, style or connection but its own, no
#: framing, no referrer (the token is in the URL), nothing cached.
_HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
     b"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]  # fmt: skip


def security_headers(app: ASGIApp) -> ASGIApp:
    """``app`` with :data:`_HEADERS` added to every HTTP answer."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        await app(scope, receive, send_with)

    return wrapped


class DashboardTokens:
    """The dashboard tokens issued by this server run (memory only, thread-safe).

    >>> tokens = DashboardTokens()
    >>> t = tokens.issue()
    >>> tokens.valid(t), tokens.valid(t[:-1] + "x"), tokens.valid("")
    (True, False, False)
    """

    def __init__(self, keep: int = MAX_TOKENS) -> None:
        self._tokens: deque[str] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def issue(self) -> str:
        """A new random token (256 bits, URL-safe)."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._tokens.append(token)
        return token

    def valid(self, candidate: str) -> bool:
        """Whether ``candidate`` is one of the tokens (compared in constant time)."""
        with self._lock:
            tokens = list(self._tokens)
        given = candidate.encode()
        return bool(candidate) and any(hmac.compare_digest(given, t.encode()) for t in tokens)


_PERSONS = "the dashboard is a person's"


async def _not_http(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> bool:
    """Handle what is not an HTTP request: lifespan goes to ``app``, a websocket is
    refused (the dashboard has none). False for an HTTP request."""
    if scope["type"] == "http":
        return False
    if scope["type"] == "lifespan":
        await app(scope, receive, send)
    else:
        await send({"type": "websocket.close", "code": 1008})
    return True


def _refuse(status: int, error: str) -> Response:
    return JSONResponse({"error": error}, status_code=status)


class TokenGate:
    """The TCP listener's gate: ``/<token>/...`` on the right ``Host`` (module doc).

    The token segment becomes the request's ``root_path``, so the app behind routes
    what follows it, and the page's relative links carry the token along.
    """

    def __init__(self, app: ASGIApp, tokens: DashboardTokens, port: Callable[[], int | None]):
        self.app = app
        self.tokens = tokens
        self.port = port

    def _host_ok(self, scope: Scope) -> bool:
        hosts = [v for k, v in scope.get("headers", []) if k == b"host"]
        port = self.port()
        allowed = {f"{name}:{port}".encode() for name in ("127.0.0.1", "localhost")}
        return len(hosts) == 1 and hosts[0].lower() in allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await _not_http(self.app, scope, receive, send):
            return
        token, slash, _ = scope["path"].removeprefix("/").partition("/")
        if not self.tokens.valid(token):
            answer = _refuse(401, "the dashboard needs its token: run `exomonad dashboard`")
        elif not self._host_ok(scope):
            answer = _refuse(403, "the dashboard answers only at 127.0.0.1 / localhost")
        elif not slash:  # /<token>: the page's relative links need the slash
            answer = RedirectResponse(f"/{token}/", status_code=307)
        else:
            await self.app({**scope, "root_path": f"/{token}"}, receive, send)
            return
        await answer(scope, receive, send)


class PersonGate:
    """The Unix socket's gate: the connecting process must be a person's (module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await _not_http(self.app, scope, receive, send):
            return
        pid = peer_pid(scope)
        try:
            if pid is None:
                raise NotAPersonError(f"{_PERSONS}, and the connecting process is not known")
            await in_thread(require_person, pid, _PERSONS)
        except NotAPersonError as exc:
            await _refuse(403, str(exc))(scope, receive, send)
            return
        await self.app(scope, receive, send)
