"""The inbox appender process, driven over its pipes as its server drives it (real
process, real files, real lock)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.teams.append_process import Appender, mailbox_line
from exomonad.teams.atomic import read_json_array
from exomonad.teams.config import create_team
from exomonad.teams.lock import FileLock, LockSettings, lock_dir_for
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.paths import TeamPaths
from tests.teams.conftest import leftovers


class Child:
    """``python -I -m exomonad.teams.append_process`` with its pipes."""

    def __init__(self, journal: Path) -> None:
        argv = [sys.executable, "-I", "-m", "exomonad.teams.append_process",
                "--journal", str(journal)]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._buf = b""
        self.ready = self.read(30)["ready"]

    def send(self, *lines: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(orjson.dumps(x) + b"\n" for x in lines))
        self.proc.stdin.flush()

    def read(self, timeout: float) -> dict[str, Any]:
        """The next answer line (raises after ``timeout`` seconds without one)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            assert left > 0, "no answer from the appender"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                assert chunk, "the appender ended"
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        answer = orjson.loads(line)
        assert isinstance(answer, dict)
        return answer

    def answers(self, count: int, timeout: float = 30) -> list[dict[str, Any]]:
        """Answers until ``count`` appends are answered."""
        out: list[dict[str, Any]] = []
        while sum(len(a.get("ok", a.get("err", []))) for a in out) < count:
            out.append(self.read(timeout))
        return out

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(30)


@pytest.fixture
def child(tmp_path: Path) -> Iterator[Child]:
    c = Child(tmp_path / "journal")
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait(30)


def entry(n: int) -> dict[str, Any]:
    return {"from": "w", "text": f"m{n}", "timestamp": "2026-11-28T00:00:00.000Z",
            "messageId": f"id-{n}"}  # fmt: skip


def appends(first: int, last: int, box: int = 0) -> list[dict[str, Any]]:
    return [{"n": n, "box": box, "to": "team-lead", "id": f"id-{n}", "entry": entry(n)}
            for n in range(first, last)]  # fmt: skip


def test_appends_are_answered_once_verified_and_land_once_in_order(
    child: Child, team: TeamPaths
) -> None:
    child.send(mailbox_line(0, Mailbox(team)), *appends(0, 20))
    answers = child.answers(20)
    assert [n for a in answers for n in a["ok"]] == list(range(20))
    assert all(a["held"] > 0 for a in answers)
    assert len(answers) < 20  # the ones that queued meanwhile shared a write
    assert read_json_array(team.inbox("team-lead")) == [entry(n) for n in range(20)]
    assert child.close() == 0
    assert leftovers(team.inboxes_dir) == []


def test_an_id_already_in_the_inbox_is_not_added_again(child: Child, team: TeamPaths) -> None:
    child.send(mailbox_line(0, Mailbox(team)), *appends(0, 3))
    child.answers(3)
    child.send(*appends(1, 2))  # retried: it had landed
    assert child.answers(1)[0]["ok"] == [1]
    assert read_json_array(team.inbox("team-lead")) == [entry(n) for n in range(3)]


def test_a_corrupt_inbox_is_refused_to_every_caller_and_left_alone(
    child: Child, team: TeamPaths
) -> None:
    inbox = team.inbox("team-lead")
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b'{"not": "an array"}')
    child.send(mailbox_line(0, Mailbox(team)), *appends(0, 4))
    answers = child.answers(4)
    assert sorted(n for a in answers for n in a["err"]) == [0, 1, 2, 3]
    assert {a["kind"] for a in answers} == {"corrupt"}
    assert answers[0]["path"] == str(inbox)
    assert inbox.read_bytes() == b'{"not": "an array"}'
    assert child.proc.poll() is None  # it goes on


def test_a_lock_it_cannot_get_is_a_delivery_error_and_the_process_goes_on(
    child: Child, team: TeamPaths
) -> None:
    impatient = Mailbox(team, lock=LockSettings(retries=2, min_timeout=0.001), attempts=1)
    inbox = team.inbox("team-lead")
    inbox.parent.mkdir(parents=True, exist_ok=True)
    lock = lock_dir_for(inbox)
    lock.mkdir()
    child.send(mailbox_line(0, impatient), *appends(0, 1))
    [answer] = child.answers(1)
    assert (answer["err"], answer["kind"]) == ([0], "delivery")
    assert "still held after 2 retries" in answer["message"]
    lock.rmdir()
    child.send(*appends(1, 2))
    assert child.answers(1)[0]["ok"] == [1]


def test_two_mailboxes_two_inboxes(child: Child, tmp_path: Path) -> None:
    one, two = TeamPaths("one", tmp_path / "c1"), TeamPaths("two", tmp_path / "c2")
    create_team(one)
    create_team(two)
    child.send(mailbox_line(0, Mailbox(one)), mailbox_line(1, Mailbox(two, durable=False)),
               *appends(0, 3, box=0), *appends(3, 6, box=1))  # fmt: skip
    child.answers(6)
    assert read_json_array(one.inbox("team-lead")) == [entry(n) for n in range(3)]
    assert read_json_array(two.inbox("team-lead")) == [entry(n) for n in range(3, 6)]


def test_the_end_of_its_input_writes_what_is_queued_then_it_exits(
    child: Child, team: TeamPaths
) -> None:
    child.send(mailbox_line(0, Mailbox(team)), *appends(0, 50))
    assert child.close() == 0
    assert read_json_array(team.inbox("team-lead")) == [entry(n) for n in range(50)]
    rest = child._buf + (child.proc.stdout.read() if child.proc.stdout else b"")
    answered = [n for line in rest.splitlines() for n in orjson.loads(line)["ok"]]
    assert answered == list(range(50))


def test_ctrl_c_in_its_terminal_does_not_stop_it(child: Child, team: TeamPaths) -> None:
    child.proc.send_signal(signal.SIGINT)  # what a terminal sends the whole process group
    child.send(mailbox_line(0, Mailbox(team)), *appends(0, 1))
    assert child.answers(1)[0]["ok"] == [0]
    assert child.proc.poll() is None


def test_back_to_back_groups_leave_the_lock_free_as_the_group_commit_says(
    team: TeamPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process: after a group of several, the next group may prepare its write at
    once, but takes the lock no sooner than the pause the group commit sets
    (free_after: PAUSE_FACTOR times the last hold), which Claude Code's writers get."""
    taken: list[float] = []
    real = FileLock.acquire

    def acquire(lock: FileLock) -> None:
        taken.append(time.monotonic())
        real(lock)

    monkeypatch.setattr(FileLock, "acquire", acquire)
    read, write = os.pipe()
    try:
        appender = Appender(write)
        lines = [mailbox_line(0, Mailbox(team)), *appends(0, 3)]
        appender.feed(b"".join(orjson.dumps(x) + b"\n" for x in lines))
        appender.step()  # one group of three
        [queue] = appender._queues.values()
        assert queue.waiting == []
        pause_ends = queue.free_at
        assert pause_ends > taken[0]
        appender.feed(b"".join(orjson.dumps(x) + b"\n" for x in appends(3, 4)))
        appender.due()  # ... when it is to start: the estimate of its preparation earlier
        while appender.due() != 0.0:
            time.sleep(0.0005)
        appender.step()
        assert taken[1] >= pause_ends
        answers = [orjson.loads(x) for x in os.read(read, 65536).splitlines()]
        assert [a["ok"] for a in answers] == [[0, 1, 2], [3]]
    finally:
        os.close(read)
        os.close(write)
    assert read_json_array(team.inbox("team-lead")) == [entry(n) for n in range(4)]
