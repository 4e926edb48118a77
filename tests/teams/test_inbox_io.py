"""The locked read-modify-write (``inbox_io.mutate``) with its write prepared ahead of the
lock: the prepared file is renamed into place only if the bytes read under the lock are
the ones it was computed from; any other change, whatever its size or timestamps, is read
and kept, the write prepared again with the lock let go (written under the lock after
the last try), and a file that turned corrupt is left alone. An append to this process's
own last write is spliced onto its bytes without parsing them."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from exomonad.errors import CorruptFileError
from exomonad.teams import inbox_io, lockwait
from exomonad.teams.atomic import (
    Staged,
    dump_json,
    parse_json_array,
    stage_json,
    write_json_atomic,
)
from exomonad.teams.dirs import SafeDir
from exomonad.teams.inbox_io import Mutation, mutate
from exomonad.teams.lock import DEFAULT_LOCK, lock_dir_for
from exomonad.teams.paths import TeamPaths
from tests.teams.conftest import leftovers


def entry(text: str) -> dict[str, Any]:
    return {"from": "w", "text": text, "timestamp": "2026-11-25T00:00:00.000Z", "msg_id": text}


SEEDED = [entry("aaaa"), entry("bbbb")]
NEW = entry("new")


class Appender:
    """A change that appends :data:`NEW` unless present; counts its runs."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, entries: list[dict[str, Any]], _: SafeDir) -> bool:
        self.runs += 1
        if any(e.get("msg_id") == NEW["msg_id"] for e in entries):
            return False
        entries.append(NEW)
        return True


@pytest.fixture
def inbox(team: TeamPaths) -> Path:
    path = team.inbox("team-lead")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, SEEDED)
    return path


def append_ahead(team: TeamPaths, change: Appender) -> Mutation:
    return mutate(
        team,
        "team-lead",
        change,
        lock=DEFAULT_LOCK,
        durable=True,
        verify=lambda: [NEW["msg_id"]],
        ahead=True,
    )


def counting_stages(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count temp files written (each records how many entries it holds)."""
    stages: list[int] = []

    def counted(path: Path, value: Any, **kw: Any) -> Staged:
        stages.append(len(value))
        return stage_json(path, value, **kw)

    monkeypatch.setattr(inbox_io, "stage_json", counted)
    return stages


def after_preparing(monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], object]) -> None:
    """Run ``edit`` on the inbox once, right after the write was prepared ahead of the
    lock (a writer slipping in before we take it)."""
    real = inbox_io._prepare
    done: list[bool] = []

    def prepare(path: Path, *args: Any) -> Any:
        prepared = real(path, *args)
        if not done:
            done.append(True)
            edit(path)
        return prepared

    monkeypatch.setattr(inbox_io, "_prepare", prepare)


def rewritten_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path``'s bytes in place (2.1.112's way: same inode), then give it back
    its old mtime."""
    st = os.stat(path)
    with path.open("r+b") as fh:
        fh.write(data)
        fh.truncate()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_the_prepared_write_is_renamed_when_the_file_is_unchanged(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stages = counting_stages(monkeypatch)
    change = Appender()
    done = append_ahead(team, change)
    assert done.wrote
    assert done.verified
    assert (stages, change.runs) == ([3], 1)  # prepared once; nothing redone under the lock
    assert inbox.read_bytes() == dump_json([*SEEDED, NEW])
    assert done.version is not None
    assert done.version[0] == os.stat(inbox).st_ino
    assert leftovers(team.inboxes_dir) == []


@pytest.mark.parametrize("how", ["renamed", "in place, same size and mtime"])
def test_a_change_after_preparing_is_read_and_kept(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # The same number of bytes, one entry's text changed: only the bytes tell.
    edited = [entry("aaaa"), {**entry("bbbb"), "text": "BBBB"}]
    assert len(dump_json(edited)) == len(dump_json(SEEDED))

    def edit(path: Path) -> None:
        if how == "renamed":
            write_json_atomic(path, edited)
        else:
            rewritten_in_place(path, dump_json(edited))

    after_preparing(monkeypatch, edit)
    stages = counting_stages(monkeypatch)
    change = Appender()
    done = append_ahead(team, change)
    assert done.wrote
    assert done.verified
    assert change.runs == 2  # ahead of the lock, then again on the bytes that changed
    assert stages == [3, 3]
    assert inbox.read_bytes() == dump_json([*edited, NEW])  # the foreign edit kept
    assert leftovers(team.inboxes_dir) == []  # the stale prepared file removed


def test_an_entry_appended_after_preparing_is_kept(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    after_preparing(monkeypatch, lambda path: write_json_atomic(path, [*SEEDED, entry("cc")]))
    done = append_ahead(team, Appender())
    assert done.verified
    assert inbox.read_bytes() == dump_json([*SEEDED, entry("cc"), NEW])


def test_a_file_turned_corrupt_after_preparing_is_refused_and_left_alone(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = inbox.read_bytes()
    garbage = good[:-1] + b"}"  # the same size, no longer JSON
    after_preparing(monkeypatch, lambda path: rewritten_in_place(path, garbage))
    change = Appender()
    with pytest.raises(CorruptFileError):
        append_ahead(team, change)
    assert inbox.read_bytes() == garbage
    assert leftovers(team.inboxes_dir) == []


def test_an_already_present_entry_prepares_nothing_and_is_verified_from_the_read(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_json_atomic(inbox, [*SEEDED, NEW])
    before = inbox.read_bytes()
    stages = counting_stages(monkeypatch)
    done = append_ahead(team, Appender())
    assert (done.wrote, done.verified, stages) == (False, True, [])
    assert inbox.read_bytes() == before


def test_nothing_is_prepared_while_someone_holds_the_lock(team: TeamPaths, inbox: Path) -> None:
    lock = lock_dir_for(inbox)
    lock.mkdir()
    try:
        with team.open_dir(inbox.parent) as d:
            assert isinstance(inbox_io._prepare(inbox, d, Appender(), True), inbox_io._Busy)
    finally:
        lock.rmdir()
    assert leftovers(team.inboxes_dir) == []


def test_a_write_that_finds_the_lock_held_is_prepared_after_its_holder_wrote(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's writer holds the lock (and is about to append): our write waits for
    it to let go, then is prepared from what it wrote, instead of being parsed,
    serialised and fsynced whole under the lock while Claude Code's next writer waits."""
    lock = lock_dir_for(inbox)
    lock.mkdir()
    waiting = threading.Event()
    real = lockwait.until_gone

    def until_gone(d: SafeDir, name: str, timeout: float, poll: float, *, watch: bool) -> bool:
        waiting.set()
        return real(d, name, timeout, poll, watch=watch)

    monkeypatch.setattr("exomonad.teams.inbox_io.until_gone", until_gone)
    monkeypatch.setattr(inbox_io, "BUSY_WAIT", 60.0)  # however slow the machine

    def claude_code_writes() -> None:
        assert waiting.wait(30)  # our write found the lock held and waits for it
        write_json_atomic(inbox, [*SEEDED, entry("theirs")])
        lock.rmdir()

    writer = threading.Thread(target=claude_code_writes)
    writer.start()
    change = LockWatching(inbox)
    done = append_ahead(team, change)
    writer.join()
    assert done.verified
    assert change.locked == [False]  # prepared once, after their write, the lock free
    assert inbox.read_bytes() == dump_json([*SEEDED, entry("theirs"), NEW])
    assert leftovers(team.inboxes_dir) == []


def test_a_torn_read_prepares_nothing(team: TeamPaths, inbox: Path) -> None:
    # 2.1.112 rewrites in place: unlocked, a read may see half a file.
    inbox.write_bytes(dump_json(SEEDED)[:20])
    change = Appender()
    with team.open_dir(inbox.parent) as d:
        assert inbox_io._prepare(inbox, d, change, True) is None
    assert change.runs == 0
    assert leftovers(team.inboxes_dir) == []


# -- preparing again with the lock free, and splicing onto our own last write -------------


class LockWatching(Appender):
    """:class:`Appender` that notes, at each run, whether the inbox's lock was held."""

    def __init__(self, inbox: Path) -> None:
        super().__init__()
        self.locked: list[bool] = []
        self.lock = lock_dir_for(inbox)

    def __call__(self, entries: list[dict[str, Any]], d: SafeDir) -> bool:
        self.locked.append(self.lock.exists())
        return super().__call__(entries, d)


def test_a_change_after_preparing_is_prepared_again_with_the_lock_free(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's writers wait while we hold the lock: a write whose basis changed is
    thrown away, the lock let go, and the write prepared again, not redone under it."""
    after_preparing(monkeypatch, lambda path: write_json_atomic(path, [*SEEDED, entry("cc")]))
    change = LockWatching(inbox)
    done = append_ahead(team, change)
    assert done.verified
    assert change.locked == [False, False]
    assert inbox.read_bytes() == dump_json([*SEEDED, entry("cc"), NEW])
    assert leftovers(team.inboxes_dir) == []


def test_a_file_that_keeps_changing_is_written_under_the_lock_after_the_last_try(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = inbox_io._prepare
    foreign: list[dict[str, Any]] = []

    def prepare(path: Path, *args: Any) -> Any:
        prepared = real(path, *args)
        foreign.append(entry(f"f{len(foreign)}"))  # someone writes every time
        write_json_atomic(path, [*SEEDED, *foreign])
        return prepared

    monkeypatch.setattr(inbox_io, "_prepare", prepare)
    change = LockWatching(inbox)
    done = append_ahead(team, change)
    assert done.verified
    assert change.locked == [False] * inbox_io.AHEAD_TRIES + [True]
    assert inbox.read_bytes() == dump_json([*SEEDED, *foreign, NEW])
    assert leftovers(team.inboxes_dir) == []


def appends(*items: dict[str, Any]) -> inbox_io.Appends:
    """The group commit's kind of change: add ``items`` unless their ids are present."""

    def new(present: set[str]) -> list[dict[str, Any]]:
        added = [e for e in items if e["msg_id"] not in present]
        present.update(e["msg_id"] for e in added)
        return added

    return inbox_io.Appends(new)


def append(team: TeamPaths, change: inbox_io.Appends) -> Mutation:
    return mutate(team, "team-lead", change, lock=DEFAULT_LOCK, durable=True, ahead=True)


def counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    parses: list[int] = []

    def parse(path: Path, data: bytes) -> list[dict[str, Any]]:
        parses.append(len(data))
        return parse_json_array(path, data)

    monkeypatch.setattr(inbox_io, "parse_json_array", parse)
    return parses


def test_an_append_to_our_own_last_write_is_spliced_without_parsing_the_inbox(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert append(team, appends(entry("one"))).verified  # parsed: not written by us yet
    parses = counting_parses(monkeypatch)
    for text in ("two", "three"):
        done = append(team, appends(entry(text)))
        assert (done.wrote, done.verified) == (True, True)
    assert parses == []
    assert inbox.read_bytes() == dump_json([*SEEDED, *map(entry, ("one", "two", "three"))])
    again = append(team, appends(entry("two")))  # present already: nothing to write
    assert (again.wrote, again.verified) == (False, True)
    assert leftovers(team.inboxes_dir) == []


def test_a_same_size_same_mtime_rewrite_after_our_append_is_read_not_spliced_over(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache of our last write is chosen by inode, mtime and size, which an in-place
    rewrite (2.1.112) can leave as they were; the bytes read under the lock decide."""
    assert append(team, appends(entry("mine"))).verified
    ours = inbox.read_bytes()
    theirs = [*SEEDED[:1], {**SEEDED[1], "text": "BBBB"}, entry("mine")]
    assert len(dump_json(theirs)) == len(ours)
    rewritten_in_place(inbox, dump_json(theirs))
    done = append(team, appends(entry("next")))
    assert done.verified
    assert inbox.read_bytes() == dump_json([*theirs, entry("next")])


def test_a_file_written_by_someone_else_after_our_append_is_parsed(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert append(team, appends(entry("mine"))).verified
    write_json_atomic(inbox, [entry("mine")])  # a poller pruned the rest
    parses = counting_parses(monkeypatch)
    assert append(team, appends(entry("next"), entry("mine"))).verified
    assert parses == [len(dump_json([entry("mine")]))]
    assert inbox.read_bytes() == dump_json([entry("mine"), entry("next")])


def _deleted_fds() -> list[str]:
    """This process's open descriptors of files that are gone (replaced inboxes)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith(" (deleted)") and "team-lead.json" in target:
            out.append(target)
    return out


def test_the_replaced_file_is_closed_after_the_lock_or_when_its_caller_says(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert append(team, appends(entry("one"))).verified
    assert _deleted_fds() == []  # closed once the lock was let go
    monkeypatch.setattr(inbox_io, "_deferred", [])
    assert append(team, appends(entry("two"))).verified
    assert len(_deleted_fds()) == 1  # kept open: freeing its blocks waits
    inbox_io.close_deferred()
    assert _deleted_fds() == []


def test_entries_appended_by_another_writer_since_our_write_are_parsed_alone(
    team: TeamPaths, inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's writers append between our group writes: the inbox is then our last
    write plus their entries, and only theirs are parsed (their ids kept, so a retry of
    one of them is not added twice)."""
    assert append(team, appends(entry("mine"))).verified
    theirs = [*SEEDED, entry("mine"), entry("theirs")]
    write_json_atomic(inbox, theirs)  # as Claude Code 2.1.330 writes: temp + rename
    parses = counting_parses(monkeypatch)
    done = append(team, appends(entry("theirs"), entry("next")))
    assert (done.wrote, done.verified) == (True, True)
    assert parses == []
    assert inbox.read_bytes() == dump_json([*theirs, entry("next")])
