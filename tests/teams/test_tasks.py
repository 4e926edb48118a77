"""Claude Code's task list: ids, locks, links, claims, corrupt files, concurrency."""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing.synchronize import Barrier as BarrierType
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.errors import CorruptFileError, InvalidNameError, LockError, TaskError
from exomonad.teams.atomic import dump_json
from exomonad.teams.lock import LockSettings
from exomonad.teams.paths import TeamPaths
from exomonad.teams.tasks import HIGHWATERMARK, ClaimRefusedError, TaskStore

FAST_FAIL = LockSettings(retries=2, min_timeout=0.001, max_timeout=0.002)


@pytest.fixture(autouse=True)
def _no_list_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> TaskStore:
    return TaskStore(TeamPaths("alpha", root=tmp_path))


def raw(store: TaskStore, task_id: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(store.path(task_id).read_bytes())
    return data


def write_raw(store: TaskStore, task_id: str, data: Any) -> None:
    store.dir.mkdir(parents=True, exist_ok=True)
    store.path(task_id).write_bytes(dump_json(data))


def lock_dirs(store: TaskStore) -> list[str]:
    return sorted(p.name for p in store.dir.iterdir() if p.name.endswith(".lock") and p.is_dir())


# -- create and ids ----------------------------------------------------------------------


def test_create_writes_claude_code_layout(store: TaskStore, tmp_path: Path) -> None:
    task = store.create("parse", "write the parser", active_form="Parsing", metadata={"k": 1})
    assert task.id == "1"
    assert store.dir == tmp_path / "tasks" / "alpha"
    expected = {
        "id": "1",
        "subject": "parse",
        "description": "write the parser",
        "activeForm": "Parsing",
        "status": "pending",
        "blocks": [],
        "blockedBy": [],
        "metadata": {"k": 1},
    }
    assert store.path("1").read_bytes() == dump_json(expected)  # JSON.stringify(t, null, 2)
    assert (store.dir / HIGHWATERMARK).read_bytes() == b"1"
    assert (store.dir / ".lock").is_file()
    assert (store.dir / ".lock").read_bytes() == b""
    assert lock_dirs(store) == []


def test_minimal_task_has_all_standard_fields(store: TaskStore) -> None:
    store.create("s")
    assert list(raw(store, "1")) == [
        "id",
        "subject",
        "description",
        "status",
        "blocks",
        "blockedBy",
    ]


def test_ids_consecutive_and_listed_numerically(store: TaskStore) -> None:
    ids = [store.create(f"t{i}").id for i in range(11)]
    assert ids == [str(i) for i in range(1, 12)]
    assert [t.id for t in store.list()] == ids  # "10" after "9", not after "1"
    assert store.problems == []


def test_highwatermark_bigger_than_files_wins(store: TaskStore) -> None:
    write_raw(store, "3", {"id": "3", "subject": "old"})
    (store.dir / HIGHWATERMARK).write_text("41\n")
    assert store.create("next").id == "42"
    assert (store.dir / HIGHWATERMARK).read_text() == "42"


def test_file_bigger_than_highwatermark_wins(store: TaskStore) -> None:
    write_raw(store, "7", {"id": "7", "subject": "old"})
    (store.dir / HIGHWATERMARK).write_text("2")
    assert store.create("next").id == "8"


def test_unparseable_highwatermark_counts_as_zero(store: TaskStore) -> None:
    write_raw(store, "2", {"id": "2", "subject": "old"})
    (store.dir / HIGHWATERMARK).write_text("garbage")
    assert store.create("next").id == "3"


def test_deleted_ids_are_not_reused(store: TaskStore) -> None:
    for s in "abc":
        store.create(s)
    store.delete("3")
    store.delete("2")
    assert (store.dir / HIGHWATERMARK).read_text() == "3"
    assert store.create("d").id == "4"
    assert [t.id for t in store.list()] == ["1", "4"]


def test_delete_raises_the_highwatermark(store: TaskStore) -> None:
    """A task written by someone who keeps no high-water mark still never gets reused."""
    write_raw(store, "5", {"id": "5", "subject": "foreign"})
    store.delete("5")
    assert (store.dir / HIGHWATERMARK).read_text() == "5"
    assert store.create("next").id == "6"


def test_ids_survive_a_list_reset(store: TaskStore) -> None:
    """Claude Code may delete every task file; the high-water mark keeps ids unique."""
    store.create("a")
    store.create("b")
    for p in store.dir.glob("*.json"):
        p.unlink()
    assert store.create("c").id == "3"


def test_create_with_missing_blocker_writes_nothing(store: TaskStore) -> None:
    store.create("a")
    with pytest.raises(TaskError, match="9 not found"):
        store.create("b", blocked_by=["9"])
    assert [p.name for p in store.dir.glob("*.json")] == ["1.json"]
    assert (store.dir / HIGHWATERMARK).read_text() == "1"


def test_task_list_id_env_overrides_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "shared list")
    store = TaskStore(TeamPaths("alpha", root=tmp_path))
    store.create("x")
    assert (tmp_path / "tasks" / "shared-list" / "1.json").is_file()


def test_no_team_config_needed_and_empty_list(store: TaskStore) -> None:
    assert store.list() == []
    assert not store.paths.config_file.exists()
    assert store.create("x").id == "1"


# -- concurrency -------------------------------------------------------------------------


def test_concurrent_creates_from_threads(store: TaskStore) -> None:
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        s = TaskStore(store.paths, durable=False)  # the lock is under test, not fsync
        barrier.wait()
        try:
            for i in range(10):
                s.create(f"t{n}-{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    tasks = store.list()
    assert [t.id for t in tasks] == [str(i) for i in range(1, 81)]
    assert sorted(t.subject for t in tasks) == sorted(
        f"t{n}-{i}" for n in range(8) for i in range(10)
    )
    assert (store.dir / HIGHWATERMARK).read_text() == "80"
    assert lock_dirs(store) == []


def _create_in_process(root: str, n: int, barrier: BarrierType) -> None:
    store = TaskStore(TeamPaths("alpha", root=root), durable=False)
    barrier.wait()
    for i in range(10):
        store.create(f"p{n}-{i}")


def test_concurrent_creates_from_processes(store: TaskStore, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [
        ctx.Process(target=_create_in_process, args=(str(tmp_path), n, barrier)) for n in range(4)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    tasks = store.list()
    assert [t.id for t in tasks] == [str(i) for i in range(1, 41)]
    assert sorted(t.subject for t in tasks) == sorted(
        f"p{n}-{i}" for n in range(4) for i in range(10)
    )
    assert lock_dirs(store) == []


def test_create_waits_for_a_foreign_list_lock(store: TaskStore) -> None:
    store.create("a")
    (store.dir / ".lock.lock").mkdir()  # Claude Code holds the list lock
    with pytest.raises(LockError):
        TaskStore(store.paths, lock=FAST_FAIL).create("b")
    assert (store.dir / ".lock.lock").is_dir()  # a fresh foreign lock is never removed
    assert [t.id for t in store.list()] == ["1"]
    (store.dir / ".lock.lock").rmdir()
    assert store.create("b").id == "2"


def test_stale_list_lock_is_broken(store: TaskStore) -> None:
    store.create("a")
    stale = store.dir / ".lock.lock"
    stale.mkdir()
    os.utime(stale, (0, 0))
    assert store.create("b").id == "2"
    assert not stale.exists()


def test_update_honours_the_task_file_lock(store: TaskStore) -> None:
    store.create("a")
    before = store.path("1").read_bytes()
    (store.dir / "1.json.lock").mkdir()
    with pytest.raises(LockError):
        TaskStore(store.paths, lock=FAST_FAIL).update("1", status="completed")
    assert store.path("1").read_bytes() == before


# -- update ------------------------------------------------------------------------------


def test_update_merges_fields(store: TaskStore) -> None:
    store.create("a", "desc", owner="w1", active_form="Doing a", metadata={"x": 1, "y": 2})
    t = store.update(
        "1", subject="A", status="in_progress", owner=None, metadata={"y": None, "z": 3}
    )
    assert (t.subject, t.status, t.owner, t.description) == ("A", "in_progress", None, "desc")
    data = raw(store, "1")
    assert "owner" not in data
    assert data["activeForm"] == "Doing a"
    assert data["metadata"] == {"x": 1, "z": 3}
    store.update("1", active_form=None, metadata=None)
    assert {"activeForm", "metadata"}.isdisjoint(raw(store, "1"))
    assert lock_dirs(store) == []


def test_update_rejects_bad_input(store: TaskStore) -> None:
    store.create("a")
    before = store.path("1").read_bytes()
    with pytest.raises(TaskError, match="status"):
        store.update("1", status="done")  # type: ignore[arg-type]
    with pytest.raises(TaskError, match="subject"):
        store.update("1", subject="  ")
    with pytest.raises(TaskError, match="itself"):
        store.update("1", add_blocks=["1"])
    with pytest.raises(TaskError, match="5 not found"):
        store.update("1", status="completed", add_blocks=["5"])
    with pytest.raises(TaskError, match="not found"):
        store.update("2", status="completed")
    assert store.path("1").read_bytes() == before


def test_links_are_kept_on_both_sides(store: TaskStore) -> None:
    for s in "abcd":
        store.create(s)
    store.update("1", add_blocks=["2", "3"])
    store.update("4", add_blocked_by=["2"])
    store.update("1", add_blocks=["2"])  # idempotent: no duplicates
    by_id = {t.id: t for t in store.list()}
    assert by_id["1"].blocks == ["2", "3"]
    assert by_id["2"].blocked_by == ["1"]
    assert by_id["2"].blocks == ["4"]
    assert by_id["3"].blocked_by == ["1"]
    assert by_id["4"].blocked_by == ["2"]


def test_create_blocked_by_links_both_sides(store: TaskStore) -> None:
    store.create("a")
    t = store.create("b", blocked_by=["1", "1"])
    assert t.blocked_by == ["1"]
    assert store.get("1").blocks == ["2"]


def test_unknown_keys_survive_updates_and_missing_fields_are_filled(store: TaskStore) -> None:
    write_raw(store, "1", {"id": "1", "subject": "s", "status": "pending", "future": {"a": 1}})
    store.update("1", description="d")
    store.claim("1", "w1")
    data = raw(store, "1")
    assert data["future"] == {"a": 1}
    assert list(data) == [
        "id",
        "subject",
        "description",
        "owner",
        "status",
        "blocks",
        "blockedBy",
        "future",
    ]


# -- claim -------------------------------------------------------------------------------


def test_claim_sets_owner_and_in_progress(store: TaskStore) -> None:
    store.create("a")
    t = store.claim("1", "gemini-1")
    assert (t.owner, t.status) == ("gemini-1", "in_progress")
    assert raw(store, "1")["owner"] == "gemini-1"
    assert lock_dirs(store) == []


def test_claim_own_task_again_is_idempotent(store: TaskStore) -> None:
    store.create("a", owner="w1")
    assert store.claim("1", "w1").status == "in_progress"  # pre-assigned, now started
    before = store.path("1").stat().st_mtime_ns, store.path("1").read_bytes()
    assert store.claim("1", "w1").owner == "w1"
    assert (store.path("1").stat().st_mtime_ns, store.path("1").read_bytes()) == before


def test_claim_refuses_other_owner(store: TaskStore) -> None:
    store.create("a")
    store.claim("1", "w1")
    with pytest.raises(ClaimRefusedError, match="'w1'") as info:
        store.claim("1", "w2")
    assert info.value.reason == "already_claimed"
    assert store.get("1").owner == "w1"
    assert lock_dirs(store) == []


def test_claim_refuses_completed(store: TaskStore) -> None:
    store.create("a")
    store.update("1", status="completed")
    with pytest.raises(ClaimRefusedError) as info:
        store.claim("1", "w1")
    assert info.value.reason == "already_resolved"
    assert store.get("1").owner is None


def test_claim_refuses_open_blockers_until_completed(store: TaskStore) -> None:
    store.create("a")
    store.create("b")
    store.create("c", blocked_by=["1", "2"])
    store.update("1", status="in_progress")
    with pytest.raises(ClaimRefusedError) as info:
        store.claim("3", "w1")
    assert (info.value.reason, info.value.blocked_by) == ("blocked", ["1", "2"])
    assert isinstance(info.value, TaskError)
    store.update("1", status="completed")
    with pytest.raises(ClaimRefusedError, match=r"open task\(s\) 2$"):
        store.claim("3", "w1")
    store.update("2", status="completed")
    assert store.claim("3", "w1").status == "in_progress"


def test_missing_or_corrupt_blockers_count_as_resolved(store: TaskStore) -> None:
    store.create("a")
    store.create("b")
    store.create("c", blocked_by=["1", "2"])
    store.path("1").unlink()
    store.path("2").write_text("{broken")
    assert store.claim("3", "w1").owner == "w1"


def test_claim_missing_task(store: TaskStore) -> None:
    with pytest.raises(TaskError, match="not found"):
        store.claim("1", "w1")
    store.create("a")
    with pytest.raises(InvalidNameError):
        store.claim("1", "")
    assert store.get("1").owner is None


# -- delete ------------------------------------------------------------------------------


def test_delete_cleans_references(store: TaskStore) -> None:
    for s in "abc":
        store.create(s)
    store.update("2", add_blocked_by=["1"], add_blocks=["3"])
    store.delete("2")
    assert not store.path("2").exists()
    assert store.get("1").blocks == []
    assert store.get("3").blocked_by == []
    assert lock_dirs(store) == []
    with pytest.raises(TaskError, match="not found"):
        store.delete("2")


def test_delete_removes_a_corrupt_file(store: TaskStore) -> None:
    write_raw(store, "1", [1, 2])
    store.delete("1")
    assert not store.path("1").exists()


# -- corrupt files -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[1, 2]",
        b'{"id": "2", "status": "pending"}',
        b'{"id": "2", "subject": "s", "status": "done"}',
    ],
    ids=["bad-json", "array", "no-subject", "bad-status"],
)
def test_corrupt_file_is_skipped_and_never_overwritten(store: TaskStore, content: bytes) -> None:
    store.create("good")
    store.path("2").write_bytes(content)
    store.create("also good", blocked_by=["1"])
    assert [t.id for t in store.list()] == ["1", "3"]  # the corrupt 2.json still holds id 2
    assert [p.path.name for p in store.problems] == ["2.json"]
    with pytest.raises(CorruptFileError):
        store.get("2")
    with pytest.raises(CorruptFileError):
        store.update("2", status="completed")
    with pytest.raises(CorruptFileError):
        store.claim("2", "w1")
    with pytest.raises(CorruptFileError):
        store.update("1", add_blocks=["2"])
    store.delete("1")  # reference cleanup walks past the corrupt file
    assert store.path("2").read_bytes() == content
    assert store.get("3").blocked_by == []
    assert lock_dirs(store) == []
