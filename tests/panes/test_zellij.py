"""ZellijBackend through the recording stand-in ``tests/bin/zellij`` (no real Zellij here).

The stand-in records every argv and simulates one session, so these tests pin the exact
CLI calls the backend makes and its handling of missing / dead panes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.errors import PaneError
from exomonad.panes import ZellijBackend
from exomonad.panes.zellij import ZELLIJ_ENV, normalize_pane_id

from .conftest import ZellijStandIn

LIST = ["action", "list-panes", "--json"]


def dump_path(call: list[str]) -> str:
    assert call[:4] == ["action", "dump-screen", "--pane-id", "terminal_1"], call
    assert call[4] == "--path"
    return call[5]


def test_deliver_argv_sequence(zellij: ZellijStandIn) -> None:
    receipt = zellij.backend().deliver("terminal_1", "hi \x1b[31mthere\x03; $(id) 日本")
    calls = zellij.calls()
    write = ["action", "write-chars", "--pane-id", "terminal_1", "--", "hi there; $(id) 日本"]
    enter = ["action", "write", "--pane-id", "terminal_1", "13"]
    assert calls[:2] == [LIST, LIST]  # resolve for the lock key, re-check under the lock
    dump_path(calls[2])  # snapshot before typing (to see the program read the text)
    assert calls[3] == write
    at_enter = calls.index(enter)
    assert at_enter >= 5  # at least the echo poll and the pre-Enter snapshot
    # the echo wait: screen dumps (and capture's pane lookups) until the text shows
    assert all(c == LIST or dump_path(c) for c in calls[4:at_enter])
    assert any(c != LIST for c in calls[4:at_enter])
    assert all(dump_path(c) for c in calls[at_enter + 1 :])  # confirmation polls only
    assert receipt.typed == "hi there; $(id) 日本"
    assert receipt.submitted
    assert receipt.enter_attempts == 1
    assert zellij.load()["panes"]["1"]["screen"] == "$ hi there; $(id) 日本\n"


def test_session_and_bare_ids(zellij: ZellijStandIn) -> None:
    zellij.backend(session="team").deliver("1", "-x starts with a dash")
    calls = zellij.calls()
    assert all(c[:2] == ["--session", "team"] for c in calls)
    assert ["--session", "team", "action", "write-chars", "--pane-id", "terminal_1", "--",
            "-x starts with a dash"] in calls  # fmt: skip


def test_executable_from_environment(
    zellij: ZellijStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ZELLIJ_ENV, str(zellij.executable))
    backend = ZellijBackend(lock_dir=zellij.log.parent / "locks")
    assert backend.executable == str(zellij.executable)
    assert backend.exists("terminal_1")
    monkeypatch.delenv(ZELLIJ_ENV)
    assert ZellijBackend().executable == "zellij"


def test_unconfirmed_enter_is_retried(zellij: ZellijStandIn) -> None:
    state = zellij.load()
    state["ignore_enter"] = True
    zellij.save(state)
    receipt = zellij.backend(submit_timeout=0.2, max_enter_attempts=2).deliver("1", "hello")
    assert not receipt.submitted
    assert receipt.enter_attempts == 2
    enters = [c for c in zellij.calls() if c[:2] == ["action", "write"]]
    assert enters == [["action", "write", "--pane-id", "terminal_1", "13"]] * 2


def test_long_message_is_spooled(zellij: ZellijStandIn) -> None:
    text = "line\n" * 3000
    receipt = zellij.backend().deliver("1", text, sender="lead")
    assert receipt.spool_path is not None
    assert receipt.spool_path.read_text("utf-8") == text
    typed = [c[-1] for c in zellij.calls() if c[1:2] == ["write-chars"]]
    assert typed == [f"[exomonad] message from lead is in {receipt.spool_path} — read it"]


def test_missing_dead_and_plugin_panes(zellij: ZellijStandIn) -> None:
    backend = zellij.backend()
    with pytest.raises(PaneError, match="does not exist"):
        backend.deliver("terminal_9", "hello")
    with pytest.raises(PaneError, match="plugin"):
        backend.deliver("plugin_0", "hello")
    with pytest.raises(PaneError, match="invalid"):
        backend.deliver("%1", "hello")
    state = zellij.load()
    state["panes"]["1"].update(exited=True, exit_status=1)
    zellij.save(state)
    with pytest.raises(PaneError, match=r"dead.*status 1"):
        backend.deliver("terminal_1", "hello")
    assert not backend.exists("terminal_1")
    assert not backend.exists("terminal_9")
    assert not [c for c in zellij.calls() if c[1:2] in (["write-chars"], ["write"])]


def test_spawn_capture_kill(zellij: ZellijStandIn, tmp_path: Path) -> None:
    backend = zellij.backend()
    pane = backend.spawn(["gemini", "--yolo"], cwd=tmp_path, env={"ROLE": "worker"}, name="w1")
    assert pane == "terminal_2"
    assert zellij.calls()[-1] == [
        "run", "--name", "w1", "--cwd", str(tmp_path),
        "--", "env", "ROLE=worker", "gemini", "--yolo",
    ]  # fmt: skip
    assert backend.exists(pane)
    shell = backend.spawn("echo hi; exec sh", target="3")
    assert zellij.calls()[-1] == [
        "action", "new-pane", "--tab-id", "3", "--", "sh", "-c", "echo hi; exec sh",
    ]  # fmt: skip
    assert shell == "terminal_3"

    backend.send_text(pane, "draft")
    assert backend.capture(pane) == "draft"
    backend.kill(pane)
    assert zellij.calls()[-1] == ["action", "close-pane", "--pane-id", "terminal_2"]
    assert not backend.exists(pane)
    with pytest.raises(PaneError):
        backend.kill(pane)


def test_missing_executable_is_a_pane_error(tmp_path: Path) -> None:
    backend = ZellijBackend(executable=str(tmp_path / "no-zellij"), lock_dir=tmp_path)
    with pytest.raises(PaneError, match="not found"):
        backend.deliver("1", "hello")
    assert not backend.exists("1")


def test_normalize_pane_id() -> None:
    assert normalize_pane_id(" 12 ") == "terminal_12"
    assert normalize_pane_id("terminal_4") == "terminal_4"
    for bad in ("plugin_1", "terminal_", "x", ""):
        with pytest.raises(PaneError):
            normalize_pane_id(bad)
