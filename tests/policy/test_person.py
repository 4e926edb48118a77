"""A person's answer: who counts as a person, and how the answer is recorded."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.policy.actions import MergePR
from exomonad.policy.approvals import ApprovalStore
from exomonad.policy.errors import ApprovalClosedError, ApprovalNotFoundError
from exomonad.policy.person import NotAPersonError, answer_as_person, person, require_person
from tests.support.agents import stand_ins


@pytest.fixture
def sleepers() -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    with stand_ins() as procs:
        yield procs


def test_only_a_persons_process_may_answer(sleepers: dict[str, subprocess.Popen[bytes]]) -> None:
    require_person(os.getpid())  # the test runner: a person's
    require_person(sleepers["plain"].pid)
    for name, why in (("gemini", "is an agent (gemini)"), ("lead", "is an agent (claude)"),
                      ("token", "runs with EXOMONAD_TOKEN")):  # fmt: skip
        with pytest.raises(NotAPersonError, match="answered by a person") as caught:
            require_person(sleepers[name].pid)
        assert why in str(caught.value), name  # the lead is no person either
    gone = sleepers["plain"]
    gone.kill()
    gone.wait()
    with pytest.raises(NotAPersonError, match="cannot be read"):
        require_person(gone.pid)  # unknown: refused, never taken for a person
    with pytest.raises(NotAPersonError, match="the dashboard is a person's"):
        require_person(sleepers["token"].pid, "the dashboard is a person's")


def test_an_answer_is_recorded_as_the_unix_user_with_its_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "mallory")  # a caller's environment names nobody
    assert person() == f"human:{pwd.getpwuid(os.getuid()).pw_name}" != "human:mallory"
    store = ApprovalStore(tmp_path / "approvals.db")
    first = store.create(agent="w1", role="worker", action=MergePR(3), reason="merge #3")
    done = answer_as_person(store, first.id[:5], True, "fine", via="dashboard")
    assert (done.state, done.answered_by, done.answer_reason) == (
        "approved", f"{person()} (dashboard)", "fine")  # fmt: skip
    with pytest.raises(ApprovalClosedError):
        answer_as_person(store, first.id, False)
    with pytest.raises(ApprovalNotFoundError):
        answer_as_person(store, "zzzzzzzz", False)
    second = store.create(agent="w1", role="worker", action=MergePR(4), reason="merge #4")
    assert answer_as_person(store, second.id, False).answered_by == person()  # the CLI's
    store.close()
