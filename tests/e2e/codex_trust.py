"""How Codex CLI (0.169) decides a command hook is trusted, and a small TOML writer.

Codex runs a non-managed command hook only when the user config holds, for that hook,

    [hooks.state."<source file>:<event label>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

and the hash matches the hook's current definition; any other hook is skipped without a
word under `codex exec` (the TUI asks "Review hooks / Trust all / Continue without
trusting"). The key and the hash, as codex-rs `hooks/src/engine/discovery.rs` and
`config/src/fingerprint.rs` compute them:

* `<source file>`: the absolute path of the file that declares the hook
  (`<project>/.codex/config.toml`, `~/.codex/config.toml` or a `hooks.json` next to
  one); `<event label>`: the event in snake case (`pre_tool_use`, `permission_request`,
  `stop`, ...); the indexes count matcher groups of that event and handlers in a group.
* the hash covers a normalised identity, not the file's text:
  `{"event_name": <label>, "matcher": <matcher>, "hooks": [<handler>]}` where the
  handler is `{"type": "command", "command", "timeout" (default 600, at least 1),
  "async" (default false), "statusMessage" (only when set)}` and `matcher` is left out
  when absent and for events that ignore matchers (`UserPromptSubmit`, `Stop`). That
  object goes through TOML (so absent values vanish), then to JSON with every object's
  keys sorted, serialised compactly (no spaces, UTF-8); the SHA-256 of those bytes, in
  hex, prefixed `sha256:`.

Checked against the real binary: a hook trusted with `hook_trust_entries` runs, the same
hook without the entry does not (tests/e2e/test_codex_model.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 600
#: Events whose matcher Codex drops before hashing (and matching).
MATCHERLESS_EVENTS = frozenset({"user_prompt_submit", "stop"})

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def hook_event_label(event: str) -> str:
    """`PreToolUse` -> `pre_tool_use` (labels pass through unchanged)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_state_key(source: Path, event: str, group: int, index: int) -> str:
    """The `[hooks.state."<key>"]` key of handler `index` in matcher group `group`."""
    return f"{source}:{hook_event_label(event)}:{group}:{index}"


def canonical_json(value: Any) -> str:
    """Compact JSON with every object's keys sorted (serde_json's output for Codex's
    canonicalised value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def hook_trust_hash(event: str, handler: Mapping[str, Any], matcher: str | None = None) -> str:
    """`sha256:<hex>` of one command handler as Codex normalises it (see module doc)."""
    label = hook_event_label(event)
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    normalised: dict[str, Any] = {
        "type": "command",
        "command": str(handler["command"]),
        "timeout": max(1, int(timeout)) if timeout is not None else DEFAULT_TIMEOUT,
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = str(handler["statusMessage"])
    identity: dict[str, Any] = {"event_name": label, "hooks": [normalised]}
    if matcher is not None and label not in MATCHERLESS_EVENTS:
        identity["matcher"] = matcher
    digest = hashlib.sha256(canonical_json(identity).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


def hook_trust_entries(source: Path) -> dict[str, str]:
    """`{state key: trusted hash}` for every command hook declared in `source` (a
    `config.toml` with a `[hooks]` table, or a `hooks.json`)."""
    source = source.resolve()
    text = source.read_text(encoding="utf-8")
    data = json.loads(text) if source.suffix == ".json" else tomllib.loads(text)
    hooks = data.get("hooks") or {}
    entries: dict[str, str] = {}
    for event, groups in hooks.items():
        if event == "state" or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            matcher = group.get("matcher")
            matcher = matcher if isinstance(matcher, str) else None
            for i, handler in enumerate(group.get("hooks") or []):
                if handler.get("type", "command") == "command":
                    key = hook_state_key(source, event, g, i)
                    entries[key] = hook_trust_hash(event, handler, matcher)
    return entries


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
