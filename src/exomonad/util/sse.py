"""Server-sent events, read off a stream: the one parser of every reader of the server's
streams (``exomonad mcp-stdio``'s proxy and :class:`exomonad.client.ServerClient`).

Standard library only, and nothing costly (the proxy starts with every agent session:
see :mod:`exomonad.uds`). Lines end in ``\\n`` or ``\\r\\n``; a blank line ends an event;
comments (``:``) and fields other than ``event``, ``data`` and ``id`` are skipped; an
event without data is not dispatched, nor is one the stream ends in the middle of. An
event's ``id`` is its own (not carried over to the next).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["messages", "parse"]


def parse(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, bytes, bytes | None]]:
    """``(event, data, id)`` of each event of a stream arriving in ``chunks``.

    >>> stream = [b"id: 1\\r\\nevent: x\\r\\nda", b"ta: {}\\n\\n: ping\\n\\n",
    ...           b"data: a\\ndata: b\\n", b"\\n"]
    >>> list(parse(stream))
    [(b'x', b'{}', b'1'), (b'message', b'a\\nb', None)]
    """
    buf, event, sid = b"", b"message", None
    data: list[bytes] = []
    for chunk in chunks:
        buf += chunk
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            line, start = buf[start:end], end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield event, b"\n".join(data), sid
                event, data, sid = b"message", [], None
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                event = value
            elif name == b"id":
                sid = value
        buf = buf[start:]


def messages(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The data of each ``message`` event (what MCP's streamable HTTP sends).

    >>> stream = [b": ping\\r\\n\\r\\nevent: other\\r\\ndata: 1\\r\\n\\r\\n", b"data: {}\\n\\n"]
    >>> list(messages(stream))
    [b'{}']
    """
    for event, data, _ in parse(chunks):
        if event == b"message":
            yield data
