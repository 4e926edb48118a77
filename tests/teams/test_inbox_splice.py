"""Appending to an inbox's bytes without parsing them: what the shortcuts compute is
exactly what parsing and serialising the whole inbox gives, or they say they cannot."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from exomonad.teams.atomic import dump_json
from exomonad.teams.inbox_splice import appended, message_ids, splice

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # quotes, backslashes, newlines, control and non-ASCII characters
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_ENTRY = st.dictionaries(st.text(), _VALUES, max_size=5)
_ENTRIES = st.lists(_ENTRY, max_size=6)


@given(_ENTRIES, _ENTRIES)
def test_splice_is_the_whole_list_serialised(
    old: list[dict[str, Any]], added: list[dict[str, Any]]
) -> None:
    assert splice(dump_json(old), added) == dump_json(old + added)


@given(_ENTRIES, st.lists(_ENTRY, min_size=1, max_size=4))
def test_what_was_appended_after_our_write_is_found_by_parsing_it_alone(
    old: list[dict[str, Any]], more: list[dict[str, Any]]
) -> None:
    assert appended(dump_json(old), dump_json(old + more)) == more


def _edits(data: bytes) -> st.SearchStrategy[bytes]:
    """Bytes near ``data``: cut, extended with anything, a byte changed."""
    return st.one_of(
        st.integers(0, len(data)).map(lambda n: data[:n]),
        st.binary(max_size=40).map(lambda tail: data[:-2] + tail + data[-2:]),
        st.binary(max_size=40).map(lambda tail: data[:-2] + b",\n" + tail + b"\n]"),
        st.tuples(st.integers(0, len(data) - 1), st.integers(0, 255)).map(
            lambda at: data[: at[0]] + bytes([at[1]]) + data[at[0] + 1 :]
        ),
    )


@given(st.data(), _ENTRIES, _ENTRIES)
def test_a_file_that_is_not_our_write_plus_entries_is_never_taken_for_one(
    data: st.DataObject, old: list[dict[str, Any]], other: list[dict[str, Any]]
) -> None:
    """Sound: whenever :func:`appended` finds entries, the whole file parses to our
    entries followed by exactly those (otherwise it must say None)."""
    before = dump_json(old)
    candidate = data.draw(st.one_of(st.just(dump_json(other)), _edits(before)))
    found = appended(before, candidate)
    if found is not None:
        assert orjson.loads(candidate) == old + found


def test_appended_refuses_what_is_no_extension() -> None:
    old = dump_json([{"a": 1}])
    assert appended(old, old) is None  # nothing appended
    assert appended(old, dump_json([])) is None
    assert appended(old, old[:-2] + b",\n\n]") is None  # a trailing comma: not JSON
    assert appended(old, old[:-2] + b",\n  1\n]") is None  # not an object
    assert appended(dump_json([]), dump_json([{"b": 2}])) == [{"b": 2}]


def test_message_ids_are_read_under_either_key() -> None:
    entries: list[dict[str, Any]] = [
        {"msg_id": "a"},
        {"messageId": "b"},
        {"msg_id": "c", "messageId": "c"},
        {"messageId": 5},
        {},
    ]
    assert message_ids(entries) == {"a", "b", "c"}
