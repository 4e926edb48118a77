"""The lock-free reads of the task list, on files written the way Claude Code writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from exomonad.errors import CorruptFileError, InvalidNameError, TaskError
from exomonad.teams.atomic import dump_json
from exomonad.teams.paths import TeamPaths
from exomonad.teams.taskread import HIGHWATERMARK, TaskReader, parse_int


@pytest.fixture
def reader(tmp_path: Path) -> TaskReader:
    return TaskReader(TeamPaths("alpha", root=tmp_path))


def put(reader: TaskReader, task_id: str, data: Any) -> None:
    reader.dir.mkdir(parents=True, exist_ok=True)
    reader.path(task_id).write_bytes(dump_json(data))


def test_no_list_directory_reads_as_empty(reader: TaskReader) -> None:
    assert reader.list() == []
    assert reader.next_id() == "1"
    assert not reader.dir.exists()  # reading never creates the directory


def test_list_is_numeric_and_skips_corrupt_files(reader: TaskReader) -> None:
    for i in (10, 9, 1):
        put(reader, str(i), {"id": str(i), "subject": f"t{i}"})
    reader.path("2").write_bytes(b"{not json")
    (reader.dir / "notes.txt").write_text("ignored")
    assert [t.id for t in reader.list()] == ["1", "9", "10"]
    assert [p.path.name for p in reader.problems] == ["2.json"]
    with pytest.raises(CorruptFileError):
        reader.get("2")


def test_get_missing_and_bad_ids(reader: TaskReader) -> None:
    with pytest.raises(TaskError, match="not found"):
        reader.get("1")
    put(reader, "3", {"id": "3", "subject": "s"})
    with pytest.raises(TaskError, match="not found"):
        reader.get("1")
    with pytest.raises(InvalidNameError):
        reader.get("../../etc/passwd")


def test_next_id_takes_the_larger_of_files_and_highwatermark(reader: TaskReader) -> None:
    put(reader, "7", {"id": "7", "subject": "s"})
    assert reader.next_id() == "8"
    (reader.dir / HIGHWATERMARK).write_text("41\n")
    assert reader.next_id() == "42"
    (reader.dir / HIGHWATERMARK).write_text("garbage")
    assert reader.next_id() == "8"


def test_a_rewritten_file_is_read_again(reader: TaskReader) -> None:
    put(reader, "1", {"id": "1", "subject": "before"})
    assert reader.get("1").subject == "before"
    put(reader, "1", {"id": "1", "subject": "after, and longer"})
    assert reader.get("1").subject == "after, and longer"


@pytest.mark.parametrize(
    ("text", "value"), [("12", 12), (" 3x", 3), ("+4", 4), ("-5", -5), ("", None), ("x1", None)]
)
def test_parse_int_is_javascripts(text: str, value: int | None) -> None:
    assert parse_int(text) == value
