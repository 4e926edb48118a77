"""Atomic JSON files: JSON.stringify-identical bytes, atomic replace, strict array reads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.errors import CorruptFileError, ExomonadError
from exomonad.teams.atomic import (
    commit_staged,
    discard_staged,
    dump_json,
    read_json,
    read_json_array,
    stage_json,
    write_json_atomic,
)
from exomonad.teams.dirs import SafeDir

# Expected bytes were produced once with Node 20: JSON.stringify(value, null, 2).
STRINGIFY_SAMPLES: list[tuple[str, Any, str]] = [
    (
        "inbox-entry",
        [
            {
                "from": "gemini-1",
                "text": "héllo \u2028 wörld ✓ 😀",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "read": False,
            }
        ],
        '[\n  {\n    "from": "gemini-1",\n    "text": "héllo \u2028 wörld ✓ 😀",\n'
        '    "timestamp": "2026-01-01T00:00:00.000Z",\n    "read": false\n  }\n]',
    ),
    ("empty-array", [], "[]"),
    ("empty-object", {}, "{}"),
    (
        "nested-and-escapes",
        {
            "a": [],
            "b": {},
            "c": [{"d": None, "e": True}],
            "f": -12,
            "g": 1.5,
            "h": 'tab\tnl\nq"bs\\ ctl\x01\x1f del\x7f slash/ \b\f\x00',
        },
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    {\n      "d": null,\n      "e": true\n'
        '    }\n  ],\n  "f": -12,\n  "g": 1.5,\n'
        '  "h": "tab\\tnl\\nq\\"bs\\\\ ctl\\u0001\\u001f del\x7f slash/ \\b\\f\\u0000"\n}',
    ),
    (
        "mixed-array",
        [1, "two", [3, [4]], {"five": {}}],
        '[\n  1,\n  "two",\n  [\n    3,\n    [\n      4\n    ]\n  ],\n  {\n    "five": {}\n  }\n]',
    ),
    ("bare-string", "just a string", '"just a string"'),
    (
        "numbers",
        {"big": 1e21, "small": 1e-7, "pi": 3.141592653589793, "int": 10000000000000},
        '{\n  "big": 1e+21,\n  "small": 1e-7,\n  "pi": 3.141592653589793,\n'
        '  "int": 10000000000000\n}',
    ),
]


@pytest.mark.parametrize(
    ("value", "expected"), [pytest.param(v, e, id=i) for i, v, e in STRINGIFY_SAMPLES]
)
def test_dump_matches_json_stringify(value: Any, expected: str) -> None:
    assert dump_json(value) == expected.encode("utf-8")


def test_numbers_read_from_js_json_round_trip_byte_identical() -> None:
    # JS never writes "1.0": what it wrote parses back to ints and is dumped unchanged.
    text = '{\n  "one": 1,\n  "neg": -3,\n  "half": 0.5,\n  "big": 9007199254740993\n}'
    assert dump_json(orjson.loads(text)) == text.encode()


@pytest.mark.parametrize("expected", [e for _, _, e in STRINGIFY_SAMPLES])
def test_samples_written_by_javascript_round_trip_byte_identically(expected: str) -> None:
    assert dump_json(orjson.loads(expected)) == expected.encode()


@pytest.mark.parametrize(
    "number",
    [
        "0.30000000000000004",
        "5e-324",
        "1.7976931348623157e+308",
        "-1e-7",
        "1e+21",
        "18446744073709551615",
    ],
)
def test_numbers_written_by_javascript_round_trip(number: str) -> None:
    text = '{\n  "n": ' + number + "\n}"  # JSON.stringify({n: <number>}, null, 2)
    assert dump_json(orjson.loads(text)) == text.encode()


@pytest.mark.parametrize("number", ["100000000000000000000", "123456789012345680000"])
def test_integers_between_2_64_and_1e21_are_a_documented_deviation(number: str) -> None:
    # JS writes these in full; orjson reads them as floats and writes exponent form.
    # The value is unchanged for JSON.parse; only the spelling differs.
    out = dump_json(orjson.loads(f'{{"n": {number}}}'))
    assert out != f'{{\n  "n": {number}\n}}'.encode()
    assert orjson.loads(out)["n"] == float(number)


def test_python_integral_floats_are_a_documented_deviation() -> None:
    # JSON.stringify(1.0) is "1"; we write "1.0". JSON.parse reads both as the same number,
    # and normalising would cost a walk of every value on the append hot path.
    out = dump_json({"one": 1.0})
    assert out == b'{\n  "one": 1.0\n}'
    assert orjson.loads(out) == {"one": 1}


def test_unicode_is_written_raw_not_escaped() -> None:
    out = dump_json({"t": "é日本😀"})
    assert "é日本😀".encode() in out
    assert b"\\u" not in out


@pytest.mark.parametrize("durable", [True, False])
def test_write_produces_exactly_the_dump(tmp_path: Path, durable: bool) -> None:
    path = tmp_path / "inbox.json"
    value = [{"from": "a", "text": "ü", "timestamp": "t"}]
    write_json_atomic(path, value, durable=durable)
    assert path.read_bytes() == dump_json(value)
    assert os.listdir(tmp_path) == ["inbox.json"]  # no temp file left behind
    assert (path.stat().st_mode & 0o777) == 0o644


def test_write_replaces_existing_content(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_text("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]")
    write_json_atomic(path, [])
    assert path.read_bytes() == b"[]"
    assert os.listdir(tmp_path) == ["inbox.json"]


def test_many_writes_leave_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    for i in range(20):
        write_json_atomic(path, [{"n": i}], durable=False)
    assert os.listdir(tmp_path) == ["inbox.json"]
    assert read_json_array(path) == [{"n": 19}]


def test_failed_rename_leaves_original_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(b'[{"keep": true}]')
    seen: list[str] = []

    def broken_replace(src: Any, dst: Any, **_dir_fds: int) -> None:
        seen.append(os.path.basename(src))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        write_json_atomic(path, [{"new": 1}])
    monkeypatch.undo()
    assert path.read_bytes() == b'[{"keep": true}]'
    assert os.listdir(tmp_path) == ["inbox.json"]  # the temp file was cleaned up
    assert len(seen) == 1
    assert seen[0].startswith("inbox.json.tmp.")
    assert len(seen[0]) == len("inbox.json.tmp.") + 8  # <file>.tmp.<8 hex>
    int(seen[0].rsplit(".", 1)[1], 16)


def test_failed_write_leaves_original_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(b"[]")

    def broken_write(fd: int, data: Any) -> int:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "write", broken_write)
    with pytest.raises(OSError, match="Input/output"):
        write_json_atomic(path, [{"x": 1}])
    monkeypatch.undo()
    assert path.read_bytes() == b"[]"
    assert os.listdir(tmp_path) == ["inbox.json"]


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "inbox.json"
    real_write = os.write

    def trickle(fd: int, data: Any) -> int:
        return real_write(fd, bytes(data[:3]))

    value = [{"text": "a longer message than three bytes"}]
    monkeypatch.setattr(os, "write", trickle)
    write_json_atomic(path, value)
    monkeypatch.undo()
    assert path.read_bytes() == dump_json(value)


def test_unserialisable_value_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(b"[]")
    with pytest.raises(TypeError):
        write_json_atomic(path, [object()])
    assert path.read_bytes() == b"[]"
    assert os.listdir(tmp_path) == ["inbox.json"]


# -- reading ---------------------------------------------------------------------------


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert read_json_array(tmp_path / "absent.json") == []


@pytest.mark.parametrize("content", [b"", b"   ", b"\n", b" \t\r\n "])
def test_empty_or_whitespace_file_reads_as_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(content)
    assert read_json_array(path) == []
    assert path.read_bytes() == content


def test_array_of_objects_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(b'[{"a": 1}, {"b": [true, null]}]')
    assert read_json_array(path) == [{"a": 1}, {"b": [True, None]}]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{}", "top level is dict"),
        (b'{"from": "a"}', "top level is dict"),
        (b"null", "top level is NoneType"),
        (b'"text"', "top level is str"),
        (b"42", "top level is int"),
        (b"[1]", "entry 0 is int"),
        (b'[{"a": 1}, "x"]', "entry 1 is str"),
        (b"[[]]", "entry 0 is list"),
        (b"[null]", "entry 0 is NoneType"),
        (b'[{"a"', "not valid JSON"),
        (b"[1,]", "not valid JSON"),
        (b"not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_bad_array_files_raise_corrupt_naming_the_file(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(content)
    with pytest.raises(CorruptFileError) as info:
        read_json_array(path)
    err = info.value
    assert err.path == path
    assert reason in err.reason
    assert str(path) in str(err)
    assert "left untouched" in str(err)
    assert isinstance(err, ExomonadError)
    assert path.read_bytes() == content


def test_read_json_any_value_and_corrupt(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(b'{"name": "alpha", "members": []}')
    assert read_json(good) == {"name": "alpha", "members": []}
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"name": ')
    with pytest.raises(CorruptFileError) as info:
        read_json(bad)
    assert info.value.path == bad
    assert "not valid JSON" in info.value.reason


def test_round_trip_through_file(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    entries = [{"from": "a", "text": "x" * 1000, "timestamp": "t", "extra": {"k": [1, 2]}}]
    write_json_atomic(path, entries)
    assert read_json_array(path) == entries


def test_a_staged_file_is_in_place_only_once_committed_and_discard_removes_it(
    tmp_path: Path,
) -> None:
    target = tmp_path / "inbox.json"
    target.write_bytes(b"[]")
    with SafeDir.trusting(tmp_path) as d:
        kept = stage_json(target, [{"a": 1}], durable=True, at=d)
        dropped = stage_json(target, [{"b": 2}], durable=False, at=d)
        assert target.read_bytes() == b"[]"
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["inbox.json", kept.name, dropped.name]
        )
        discard_staged(dropped, at=d)
        discard_staged(dropped, at=d)  # gone already: nothing to do
        assert commit_staged(kept, at=d) == target.stat().st_ino == kept.inode
    assert target.read_bytes() == dump_json([{"a": 1}])
    assert [p.name for p in tmp_path.iterdir()] == ["inbox.json"]
