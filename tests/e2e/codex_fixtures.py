"""Real samples of what Codex CLI sends (hook stdin, wire items), kept as fixtures.

`check_fixture(name, sample, home)` compares a sample captured from the real binary in a
test with `tests/e2e/fixtures/codex/<name>.json`: same shape (keys and value types,
recursively) and equal values for the keys that do not change from run to run (event and
tool names, tool input, cwd, ...). Ids, timestamps and transcript paths differ on every
run and are compared by type only. Paths under the test's scratch dir are written as
`<root>/...`.

The fixture files are not written by hand: run the tests with
`EXO_CODEX_CAPTURE_FIXTURES=1` to (re)write them from what the binary sends.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.codex_cli import CodexHome

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "codex"
CAPTURE_ENV = "EXO_CODEX_CAPTURE_FIXTURES"

#: Keys whose values must match the fixture exactly (when the fixture has them).
STABLE_KEYS = (
    "hook_event_name",
    "tool_name",
    "tool_input",
    "permission_mode",
    "model",
    "cwd",
    "prompt",
    "source",
    "stop_hook_active",
    "last_assistant_message",
    "type",
    "name",
    "namespace",
    "execution",
    "arguments",
    "tools",
)


def normalize(value: Any, home: CodexHome) -> Any:
    """`value` with the scratch root in every string replaced by `<root>`."""
    root = str(home.root)
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, list):
        return [normalize(v, home) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v, home) for k, v in value.items()}
    return value


def shape(value: Any) -> Any:
    """Keys and value types, recursively (a list by the shapes of its items)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(v) for v in value]
    if value is None:
        return "null"
    return type(value).__name__


def check_fixture(
    name: str, sample: Any, home: CodexHome, *, stable: Iterable[str] = STABLE_KEYS
) -> Any:
    """Compare `sample` (normalised) with fixture `name`, or write it in capture mode;
    returns the normalised sample."""
    data = normalize(sample, home)
    path = FIXTURE_DIR / f"{name}.json"
    if os.environ.get(CAPTURE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return data
    if not path.exists():
        pytest.fail(f"fixture {path} is missing: run the test with {CAPTURE_ENV}=1")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert shape(data) == shape(expected), f"{name}: shape differs from {path}"
    if isinstance(expected, dict):
        for key in stable:
            if key in expected:
                assert data.get(key) == expected[key], f"{name}: {key!r} differs from {path}"
    return data


__all__ = ["CAPTURE_ENV", "FIXTURE_DIR", "STABLE_KEYS", "check_fixture", "normalize", "shape"]
