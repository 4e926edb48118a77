"""A value that satisfies a JSON schema: how the scripted APIs answer the CLIs' side
requests (a session title, a task title) that ask for structured output."""

from __future__ import annotations

from typing import Any

__all__ = ["value_for_schema"]


def value_for_schema(schema: Any, depth: int = 0) -> Any:
    """A minimal value that satisfies a (lower-case, JSON Schema) `schema`."""
    if not isinstance(schema, dict) or depth > 8:
        return "scripted"
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return value_for_schema(options[0], depth + 1)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        return {
            k: ("Scripted session" if k == "title" else value_for_schema(v, depth + 1))
            for k, v in props.items()
        }
    if kind == "array":
        return []
    if kind == "integer":
        return 1
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "scripted"
