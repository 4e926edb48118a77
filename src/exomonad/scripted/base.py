"""The generic half of the scripted model APIs (`anthropic`, `gemini`, `openai`).

`ScriptedServer` is a threaded stdlib HTTP server on 127.0.0.1 (port chosen by the OS),
used as a context manager. It records every request (`RecordedRequestBase`, parsed JSON
body included; gzip / deflate bodies are decoded), lets waiters block on a
`threading.Condition` (`wait_for_request`) instead of sleeping, and holds the reply
script (a queue of replies for agent turns). Subclasses say what a request is
(`request_type`), how a reply spec is normalised (`normalize`) and how to answer
(`respond`, called in the handler thread with the recorded request).
"""

from __future__ import annotations

import gzip
import json
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Self, TypeVar, cast
from urllib.parse import urlsplit

from exomonad.scripted.relay import relay

JSON = dict[str, Any]


@dataclass(frozen=True)
class RecordedRequestBase:
    """One request as the client sent it."""

    index: int
    method: str
    path: str  # with the query string
    headers: dict[str, str]
    body: JSON  # parsed JSON body ({} when empty or not JSON)
    received_at: float  # time.monotonic()

    @property
    def route(self) -> str:
        """The path without the query string."""
        return urlsplit(self.path).path

    @property
    def is_agent_turn(self) -> bool:
        """A main-loop model call (subclasses say how to tell)."""
        raise NotImplementedError

    def last_user_texts(self) -> list[str]:
        raise NotImplementedError

    def mentions(self, needle: str) -> bool:
        raise NotImplementedError

    def body_text(self) -> str:
        """The whole parsed body as JSON text (to look for a string anywhere in it)."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass(frozen=True)
class Answer:
    """What the server sent back for request #`index` (its status and whole body, a
    stream's events included), and when the last byte went out."""

    index: int
    status: int
    body: str
    sent_at: float  # time.monotonic()


RequestT = TypeVar("RequestT", bound=RecordedRequestBase)
ReplyT = TypeVar("ReplyT")
SpecT = TypeVar("SpecT")


class ScriptedHandler(BaseHTTPRequestHandler):
    """Reads and records each request, then hands it to the owner's `respond`."""

    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60  # idle keep-alive connections close after this
    wire_body = b""  # the request body as received (still compressed, if it was)
    answering = -1  # the index of the request being answered

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.wire_body = self.rfile.read(n) if n > 0 else b""
        enc = (self.headers.get("Content-Encoding") or "").lower()
        if enc == "gzip":
            raw = gzip.decompress(raw)
        elif enc == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def extra_headers(self) -> dict[str, str]:
        return {}

    def send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers().items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.server.owner._answered(self.answering, status, data)

    def send_json(self, status: int, obj: Any) -> None:
        self.send(status, "application/json", json.dumps(obj).encode())

    def _handle(self) -> None:
        raw = self._read_body()
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"__unparsed__": raw.decode("utf-8", "replace")}
        body = parsed if isinstance(parsed, dict) else {"__json__": parsed}
        owner = self.server.owner
        req = owner._record(self.command, self.path, dict(self.headers.items()), body)
        self.answering = req.index
        if owner.upstream is not None:
            relay(self, req, owner.upstream)
        else:
            owner.respond(self, req)

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: ScriptedServer[Any, Any, Any]) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), owner.handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops a keep-alive connection (the CLI exiting) is normal here.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class ScriptedServer(Generic[RequestT, ReplyT, SpecT]):
    """A scripted model API on 127.0.0.1; use as a context manager.

    `RequestT` is what a recorded request is, `ReplyT` a normalised reply (what the
    script holds) and `SpecT` what `add_reply` takes.
    """

    request_type: ClassVar[type[RecordedRequestBase]]
    handler: ClassVar[type[ScriptedHandler]] = ScriptedHandler
    thread_name: ClassVar[str] = "scripted-model"
    request_noun: ClassVar[str] = "request"  # for the wait_for_request timeout message

    def __init__(self, script: Iterable[SpecT] = (), *, default_text: str) -> None:
        self._cond = threading.Condition()
        self._script: deque[ReplyT] = deque(self.normalize(r) for r in script)
        self._requests: list[RequestT] = []
        self._answers: list[Answer] = []
        self.default_text = default_text
        self.upstream: str | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- to override -------------------------------------------------------------
    def normalize(self, reply: SpecT) -> ReplyT:
        """A reply spec as the script holds it."""
        raise NotImplementedError

    def respond(self, handler: ScriptedHandler, req: RequestT) -> None:
        """Answer `req` (already recorded) through `handler` (`send`, `send_json`)."""
        raise NotImplementedError

    def _describe(self, since: int) -> str:
        """The requests from #`since` on, for a timeout message ("" if none)."""
        return "".join(f"\n  #{r.index} {r.method} {r.path}" for r in self._requests[since:])

    def relay_to(self, upstream: str) -> Self:
        """Answer nothing from the script: relay every request to the real API at
        ``upstream`` (e.g. ``https://api.anthropic.com``; the request path is appended)
        and stream its answer back, recording both as usual."""
        self.upstream = upstream.rstrip("/")
        return self

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> Self:
        if self._server is not None:
            return self
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script ------------------------------------------------------------------
    def add_reply(self, reply: SpecT) -> None:
        """Queue a reply for the next agent turn."""
        with self._cond:
            self._script.append(self.normalize(reply))

    @property
    def pending_replies(self) -> int:
        with self._cond:
            return len(self._script)

    def _pop_script(self) -> ReplyT | None:
        """The next scripted reply, or None when the script is empty (call under or
        outside the lock: the condition's lock is reentrant)."""
        with self._cond:
            return self._script.popleft() if self._script else None

    # -- log ---------------------------------------------------------------------
    @property
    def requests(self) -> list[RequestT]:
        with self._cond:
            return list(self._requests)

    @property
    def next_index(self) -> int:
        """The index the next recorded request will get (a `since=` for waiters)."""
        with self._cond:
            return len(self._requests)

    def agent_requests(self) -> list[RequestT]:
        return [r for r in self.requests if r.is_agent_turn]

    def latest_request(self, *, agent_only: bool = True) -> RequestT | None:
        reqs = self.agent_requests() if agent_only else self.requests
        return reqs[-1] if reqs else None

    def describe(self, since: int = 0) -> str:
        with self._cond:
            return self._describe(since)

    def wait_for_request(
        self,
        predicate: Callable[[RequestT], bool],
        timeout: float = 30.0,
        *,
        since: int = 0,
    ) -> RequestT:
        """The first recorded request with `index >= since` that satisfies `predicate`.

        Blocks on a condition variable until one arrives; raises TimeoutError (listing
        what did arrive) after `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            checked = since
            while True:
                for req in self._requests[checked:]:
                    if predicate(req):
                        return req
                checked = max(checked, len(self._requests))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"no matching {self.request_noun} within {timeout:.1f}s; requests since "
                        f"#{since}: {self._describe(since) or 'none'}"
                    )
                self._cond.wait(remaining)

    def answers(self) -> list[Answer]:
        """Every answer sent so far, in the order they were finished."""
        with self._cond:
            return list(self._answers)

    def wait_for_answer(
        self, predicate: Callable[[Answer], bool], timeout: float = 30.0, *, since: int = 0
    ) -> Answer:
        """The first answer (to a request with `index >= since`) that satisfies
        `predicate`, waiting for it; TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for answer in self._answers:
                    if answer.index >= since and predicate(answer):
                        return answer
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no matching answer within {timeout:.1f}s")
                self._cond.wait(remaining)

    def wait_for_user_text(self, needle: str, timeout: float = 30.0, *, since: int = 0) -> RequestT:
        """The first agent turn (index >= since) whose user texts contain `needle`."""
        return self.wait_for_request(
            lambda r: r.is_agent_turn and r.mentions(needle), timeout, since=since
        )

    # -- internals (called from handler threads) ---------------------------------
    def _answered(self, index: int, status: int, data: bytes) -> None:
        answer = Answer(index, status, data.decode("utf-8", "replace"), time.monotonic())
        with self._cond:
            self._answers.append(answer)
            self._cond.notify_all()

    def _record(self, method: str, path: str, headers: dict[str, str], body: JSON) -> RequestT:
        with self._cond:
            req = cast(
                RequestT,
                self.request_type(
                    index=len(self._requests),
                    method=method,
                    path=path,
                    headers=headers,
                    body=body,
                    received_at=time.monotonic(),
                ),
            )
            self._requests.append(req)
            self._cond.notify_all()
            return req


__all__ = [
    "JSON",
    "Answer",
    "RecordedRequestBase",
    "ScriptedHandler",
    "ScriptedServer",
]
