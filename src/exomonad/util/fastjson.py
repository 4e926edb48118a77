r"""JSON through CPython's C accelerator alone, without importing :mod:`json`.

:mod:`json` imports :mod:`re`, which imports :mod:`enum`: about 9 ms of CPU in every
process that starts with it, and the hook client starts with every tool call of every
agent (16 agents on 2 cores: every millisecond of it counts eight times). :func:`loads`
and :func:`dumps` call the C scanner and encoder (``_json``) that ``json.loads`` and
``json.dumps`` use themselves, with the same defaults. What they do not do alone goes to
:mod:`json`, imported then: input that is not plain UTF-8 (a BOM, UTF-16), every error
(so its message and type are :mod:`json`'s), an interpreter without ``_json``. Results
and errors are therefore exactly :mod:`json`'s (``tests/util/test_fastjson.py``).

>>> loads(b' {"a": [1, 2.5, null, "\\u00e9"]} ')
{'a': [1, 2.5, None, 'é']}
>>> dumps({"a": [1, 2.5, None, "é"]})
'{"a": [1, 2.5, null, "\\u00e9"]}'
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["dumps", "loads"]

try:
    from _json import encode_basestring_ascii as _escape
    from _json import make_encoder as _make_encoder
    from _json import make_scanner as _make_scanner
except ImportError:  # not CPython: json does it all
    _make_scanner = _make_encoder = None  # type: ignore[assignment, misc]

_SPACE = " \t\n\r"  # JSON's whitespace, all json skips around a document


class _Defaults:
    """What ``json.JSONDecoder()`` hands its scanner: the defaults of ``json.loads``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__  # fmt: skip


_scan: Callable[[str, int], tuple[Any, int]] | None = None
if _make_scanner is not None:
    try:
        _scan = _make_scanner(_Defaults)  # type: ignore[arg-type]  # any object with its fields
    except Exception:  # a future _json that wants more: json does it
        _scan = None


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``."""
    if _scan is not None:
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            value, end = _scan(text, len(text) - len(text.lstrip(_SPACE)))
            if not text[end:].strip(_SPACE):
                return value
        except Exception:  # json raises the same error, with its message
            pass
    import json

    return json.loads(data)


def dumps(value: object) -> str:
    """``json.dumps(value)`` (ASCII, ``", "`` and ``": "`` separators, NaN allowed)."""
    if _make_encoder is not None:
        try:
            encode = _make_encoder({}, _unserializable, _escape, None, ": ", ", ", False,
                                   False, True)  # fmt: skip
            return "".join(encode(value, 0))
        except Exception:  # json raises the same error, with its message
            pass
    import json

    return json.dumps(value)
