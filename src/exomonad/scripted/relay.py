"""A scripted server in relay mode: each request goes on to the real API, the answer
streams back as it arrives (chunked), and both are recorded like scripted ones.

``exomonad demo --live`` uses it: the CLIs keep talking to loopback, their keys pass
through in their own headers, and the demo measures the same hops as offline. The
connection to the vendor honours the usual proxy variables (``HTTPS_PROXY``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2

if TYPE_CHECKING:
    from exomonad.scripted.base import RecordedRequestBase, ScriptedHandler

__all__ = ["HOP_BY_HOP", "relay"]

#: Headers that belong to one connection (or that the relay sets itself): not passed on.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)
#: Seconds for the whole answer (a model's turn can be long) and for connecting.
TIMEOUT = httpx2.Timeout(600.0, connect=30.0)


def relay(handler: ScriptedHandler, req: RecordedRequestBase, upstream: str) -> None:
    """Send ``req`` (its body as received) to ``upstream`` + its path; stream the answer
    back to the client, decoded, in chunks; record it on the handler's server."""
    if req.method == "HEAD":  # a client's connectivity probe: we are reachable
        handler.send(200, "text/plain", b"")
        return
    url = upstream + req.path
    headers = {k: v for k, v in req.headers.items() if k.lower() not in HOP_BY_HOP}
    if req.headers.get("Content-Encoding"):
        headers["Content-Encoding"] = req.headers["Content-Encoding"]  # the body still is
    got = bytearray()
    status = 502
    started = False
    try:
        with (
            httpx2.Client(timeout=TIMEOUT) as client,
            client.stream(req.method, url, headers=headers, content=handler.wire_body) as resp,
        ):
            status = resp.status_code
            handler.send_response(status)
            for name, value in resp.headers.items():
                if name.lower() not in HOP_BY_HOP:
                    handler.send_header(name, value)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            started = True
            for chunk in resp.iter_bytes():
                if chunk:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    handler.wfile.flush()
                    got += chunk
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
    except httpx2.HTTPError as exc:
        if started:  # the answer is cut: the client must see the connection end
            handler.close_connection = True
        else:
            message = f"exomonad relay: {req.method} {url} failed: {exc}"
            handler.send_json(502, {"error": {"type": "relay_error", "message": message}})
            return
    handler.server.owner._answered(req.index, status, bytes(got))
