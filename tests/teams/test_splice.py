"""Splicing an append onto an inbox's bytes gives exactly what serialising it whole does."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from exomonad.teams.atomic import dump_json
from exomonad.teams.inbox_io import splice

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
_ENTRIES = st.lists(st.dictionaries(st.text(), _VALUES, max_size=5), max_size=6)


@given(_ENTRIES, _ENTRIES)
def test_splice_is_the_whole_list_serialised(
    old: list[dict[str, Any]], added: list[dict[str, Any]]
) -> None:
    assert splice(dump_json(old), added) == dump_json(old + added)
