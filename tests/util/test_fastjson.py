"""``exomonad.util.fastjson`` is :mod:`json`, results and errors alike, without importing
it on the way that works."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exomonad.util import fastjson
from tests.support.imports import imported_after

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def same(a: Any, b: Any) -> bool:
    """Equal, NaN included."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    )


def outcome(parse: Any, data: bytes | str) -> tuple[str, Any]:
    try:
        return "ok", parse(data)
    except Exception as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_dumps_is_json_dumps_and_loads_reads_it_back(value: Any) -> None:
    text = json.dumps(value)
    assert fastjson.dumps(value) == text
    assert same(fastjson.loads(text), json.loads(text))
    assert same(fastjson.loads(text.encode()), json.loads(text.encode()))
    padded = f" \n\t{text}\r\n "
    assert same(fastjson.loads(padded), json.loads(padded))


documents = st.one_of(
    st.binary(max_size=60),
    st.text(max_size=60),
    values.map(json.dumps).map(lambda t: t[: len(t) // 2]),  # cut short
    values.map(json.dumps).map(lambda t: t + " x"),  # extra data
    values.map(json.dumps).map(lambda t: "\ufeff" + t),  # a BOM in a str: an error
    values.map(json.dumps).map(lambda t: t.encode("utf-8-sig")),  # in bytes: fine
    values.map(json.dumps).map(lambda t: t.encode("utf-16")),
)


@settings(max_examples=400, deadline=None)
@given(data=documents)
def test_any_input_gives_what_json_gives_errors_included(data: bytes | str) -> None:
    mine, theirs = outcome(fastjson.loads, data), outcome(json.loads, data)
    assert mine[0] == theirs[0]
    assert same(mine[1], theirs[1]) if mine[0] == "ok" else mine[1] == theirs[1]


def test_what_json_cannot_encode_fails_the_same() -> None:
    for value in ({1: {2: object()}}, {"s": {1, 2}}, b"bytes"):
        assert outcome(fastjson.dumps, value) == outcome(json.dumps, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", [
    "fastjson.loads(b'{\"a\": [1, 2.5, null, true]}'); fastjson.dumps({'a': [1, None]})",
    "fastjson.loads(b'{\"tool_input\": {\"command\": \"ls\"}}')",
])  # fmt: skip
def test_the_way_that_works_imports_no_json(code: str) -> None:
    assert (
        imported_after(f"from exomonad.util import fastjson\n{code}", ("json", "re", "enum")) == []
    )
