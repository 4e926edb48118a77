"""The test kit's view of Codex hook trust, and a small TOML writer.

How Codex (0.169) decides a hook is trusted (the `[hooks.state."<key>"] trusted_hash`
entries) is ExoMonad's own code now: :mod:`exomonad.runtimes.codex_trust`, re-exported
here. Checked against the real binary: a hook trusted with `hook_trust_entries` runs,
the same hook without the entry does not (tests/e2e/test_codex_model.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from exomonad.runtimes.codex_trust import (
    DEFAULT_TIMEOUT,
    MATCHERLESS_EVENTS,
    hook_event_label,
    hook_state_key,
    hook_trust_entries,
    hook_trust_hash,
)

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def canonical_json(value: Any) -> str:
    """Compact JSON with every object's keys sorted (what the trust hash covers)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------- TOML


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(v, Mapping) for v in value)
    )


def _emit(table: Mapping[str, Any], path: list[str], out: list[str]) -> None:
    for key, value in table.items():
        if not isinstance(value, Mapping) and not _is_table_array(value):
            out.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        sub = [*path, _key(key)]
        if isinstance(value, Mapping):
            out.append(f"\n[{'.'.join(sub)}]")
            _emit(value, sub, out)
        elif _is_table_array(value):
            for item in value:
                out.append(f"\n[[{'.'.join(sub)}]]")
                _emit(item, sub, out)


def toml_dumps(data: Mapping[str, Any]) -> str:
    """`data` as TOML: tables as `[a.b]`, lists of tables as `[[a.b]]`, other values
    inline. Enough for Codex's config files; `tomllib.loads` reads it back equal.

    >>> print(toml_dumps({"a": 1, "t": {"k": "v"}, "arr": [{"x": True}]}).strip())
    a = 1
    <BLANKLINE>
    [t]
    k = "v"
    <BLANKLINE>
    [[arr]]
    x = true
    """
    out: list[str] = []
    _emit(data, [], out)
    return "\n".join(out).lstrip("\n") + "\n"


__all__ = [
    "DEFAULT_TIMEOUT",
    "MATCHERLESS_EVENTS",
    "canonical_json",
    "hook_event_label",
    "hook_state_key",
    "hook_trust_entries",
    "hook_trust_hash",
    "toml_dumps",
]
