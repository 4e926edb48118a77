"""The one server-sent event parser: chunk boundaries anywhere, line ends, what is skipped."""

from __future__ import annotations

import pytest

from exomonad.util.sse import messages, parse

STREAM = (
    b"retry: 1000\r\n\r\n"
    b": ping\r\n\r\n"
    b'id: 7\r\nevent: hello\r\ndata: {"a": 1}\r\n\r\n'
    b"data: first\ndata:second\ndata\n\n"  # no space after the colon; a bare field name
    b"event: message\nunknown: x\ndata: {}\n\n"
    b"id: 9\n\n"  # no data: not dispatched, and its id is not the next event's
    b"data: last\n\n"
    b"data: cut off"  # the stream ended inside this event
)
EXPECTED = [
    (b"hello", b'{"a": 1}', b"7"),
    (b"message", b"first\nsecond\n", None),
    (b"message", b"{}", None),
    (b"message", b"last", None),
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(STREAM)])
def test_events_whatever_the_chunks(size: int) -> None:
    chunks = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    assert list(parse(chunks)) == EXPECTED


def test_messages_are_the_message_events_data() -> None:
    assert list(messages([STREAM])) == [b"first\nsecond\n", b"{}", b"last"]


def test_a_blank_line_split_across_chunks_as_cr_then_lf() -> None:
    assert list(parse([b"data: x\r", b"\n\r", b"\n"])) == [(b"message", b"x", None)]


def test_nothing_from_an_empty_stream() -> None:
    assert list(parse([])) == []
    assert list(parse([b"", b"\n\n"])) == []
