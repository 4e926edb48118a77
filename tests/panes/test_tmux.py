"""TmuxBackend against a real tmux server (one private server per test, see conftest).

The pane runs ``reader.py``, which records every line it receives exactly, echoes input
raw (so a leaked escape sequence would really recolour the screen) and records signals
(so a leaked ^C would show up).
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from exomonad.errors import PaneError
from exomonad.panes import TmuxBackend, sanitize
from exomonad.panes.tmux import TypingMethod
from exomonad.util.waiting import retry_until
from tests.support.tmux import Reader, TmuxServer

pytestmark = pytest.mark.integration

MESSAGES = [
    "hello world",
    "unicode: 日本語のテキスト 中文 한국어 café naïve Ω ✓ 🎉👍🏽👨‍👩‍👧",
    "quotes: 'single' \"double\" \u2018curly\u2019 \u201ccurly\u201d «guillemets»",
    "shell: $(rm -rf ~) ${HOME} `id` !! !$ && || > /dev/null & *",
    "tabs:\tone\t\ttwo",
    "backslashes \\n \\x1b \\\\ and a trailing backslash\\",
    "ends with a semicolon;",
    "ends with an escaped semicolon\\;",
    ";",
    "-n looks like an option",
    "  leading and trailing spaces  ",
]


def test_delivers_text_exactly_as_sanitised(
    tmux_server: TmuxServer, reader: Reader, method: TypingMethod
) -> None:
    backend = tmux_server.backend(method=method)
    receipts = [backend.deliver(reader.pane, text) for text in MESSAGES]
    expected = [sanitize(text) for text in MESSAGES]
    assert reader.wait_lines(len(MESSAGES)) == expected
    assert [r.typed for r in receipts] == expected
    assert all(r.submitted and r.enter_attempts == 1 for r in receipts)
    assert "tabs:    one        two" in expected  # tabs arrive as spaces, never as Tab
    assert reader.signals() == []


def test_receipt_timings(tmux_server: TmuxServer, reader: Reader) -> None:
    receipt = tmux_server.backend(enter_delay=0.2).deliver(reader.pane, "timed")
    assert receipt.pane == reader.pane
    assert receipt.submitted_at is not None
    assert receipt.started_at <= receipt.typed_at
    assert receipt.submitted_at - receipt.typed_at >= 0.2
    assert receipt.duration >= 0.2
    assert reader.wait_lines(1) == ["timed"]


def test_escape_sequences_and_controls_are_inert(
    tmux_server: TmuxServer, reader: Reader, method: TypingMethod
) -> None:
    backend = tmux_server.backend(method=method)
    hostile = [
        "\x1b[31mred\x1b[0m",
        "before\x03after",
        "\x1b]2;pwned-title\x07visible",
        "\x1b[2J\x1b[Hstill here",
        "\x9b31mc1 red",
        "bell\x07 del\x7f nul\x00 ^Z\x1a ^\\\x1c",
    ]
    for text in hostile:
        backend.deliver(reader.pane, text)
    with pytest.raises(ValueError, match="empty"):
        backend.deliver(reader.pane, "\x03")
    lines = reader.wait_lines(len(hostile))
    assert lines == [
        "red",
        "beforeafter",
        "visible",
        "still here",
        "c1 red",
        "bell del nul ^Z ^\\",
    ]
    assert reader.signals() == []
    styled = tmux_server.tmux("capture-pane", "-e", "-p", "-t", reader.pane)
    assert "\x1b[31m" not in styled
    assert tmux_server.fmt(reader.pane, "#{pane_title}") != "pwned-title"

    # Positive control: the same bytes sent raw *do* act, so the checks above can fail.
    tmux_server.tmux("send-keys", "-t", reader.pane, "-l", "\x1b[31mred")
    tmux_server.tmux("send-keys", "-t", reader.pane, "C-c")
    retry_until(lambda: reader.signals() == ["SIGINT"], message="raw ^C did not signal")
    retry_until(
        lambda: "\x1b[31m" in tmux_server.tmux("capture-pane", "-e", "-p", "-t", reader.pane),
        message="raw SGR did not colour the screen",
    )


def test_ten_kilobyte_message_goes_through_a_file(tmux_server: TmuxServer, reader: Reader) -> None:
    text = ("Ten kilobytes of 日本語 and `code` $(x) ! — " * 300)[:10_240]
    receipt = tmux_server.backend().deliver(reader.pane, text, sender="team-lead")
    assert receipt.spool_path is not None
    assert receipt.spool_path.parent == tmux_server.tmp / "spool"
    assert receipt.spool_path.read_text("utf-8") == text
    assert receipt.typed == (
        f"[exomonad] message from team-lead is in {receipt.spool_path} — read it"
    )
    assert reader.wait_lines(1) == [receipt.typed]
    assert receipt.submitted


def test_multiline_message_goes_through_a_file(tmux_server: TmuxServer, reader: Reader) -> None:
    text = "Please:\n\t1. run `make test`\n\t2. report back\n"
    receipt = tmux_server.backend().deliver(reader.pane, text)
    assert receipt.spool_path is not None
    assert receipt.spool_path.read_text("utf-8") == text
    assert reader.wait_lines(1) == [receipt.typed]
    assert receipt.typed.startswith("[exomonad] a message is in ")


def test_long_single_line_is_typed_in_chunks(
    tmux_server: TmuxServer, reader: Reader, method: TypingMethod
) -> None:
    text = "".join(f"{i:04d}日;" for i in range(600))  # 3600 chars, many chunk boundaries
    backend = tmux_server.backend(method=method, chunk_size=97)
    receipt = backend.deliver(reader.pane, text)
    assert receipt.spool_path is None
    assert reader.wait_lines(1) == [text]


def test_leaves_copy_mode_before_typing(tmux_server: TmuxServer, reader: Reader) -> None:
    tmux_server.tmux("copy-mode", "-t", reader.pane)
    assert tmux_server.fmt(reader.pane, "#{pane_in_mode}") == "1"
    receipt = tmux_server.backend().deliver(reader.pane, "after copy mode")
    assert reader.wait_lines(1) == ["after copy mode"]
    assert receipt.submitted
    assert tmux_server.fmt(reader.pane, "#{pane_in_mode}") == "0"


def test_synchronized_sibling_pane_gets_nothing(tmux_server: TmuxServer, reader: Reader) -> None:
    sibling = tmux_server.reader("sibling", split_from=reader.pane)
    tmux_server.tmux("set-option", "-w", "-t", reader.pane, "synchronize-panes", "on")
    backend = tmux_server.backend()  # paste-buffer: text and Enter reach the target only
    backend.deliver(reader.pane, "for the reader")
    backend.deliver(sibling.pane, "for the sibling")
    assert reader.wait_lines(1) == ["for the reader"]
    assert sibling.wait_lines(1) == ["for the sibling"]
    # Positive control: keys sent with send-keys are copied to the synchronised sibling.
    tmux_server.tmux("send-keys", "-t", reader.pane, "-l", "both")
    tmux_server.tmux("send-keys", "-t", reader.pane, "Enter")
    assert sibling.wait_lines(2) == ["for the sibling", "both"]


def test_send_text_then_submit(tmux_server: TmuxServer, reader: Reader) -> None:
    backend = tmux_server.backend()
    assert backend.send_text(reader.pane, "two\nlines") == "two lines"
    retry_until(lambda: "two lines" in backend.capture(reader.pane))
    assert reader.lines() == []
    backend.submit(reader.pane)
    assert reader.wait_lines(1) == ["two lines"]


def test_concurrent_threads_do_not_interleave(tmux_server: TmuxServer, reader: Reader) -> None:
    messages = {who: [f"{who * 300} {who}{i}" for i in range(4)] for who in "AB"}
    errors: list[BaseException] = []

    def run(who: str) -> None:
        backend = tmux_server.backend(enter_delay=0.05)  # own instance, shared lock dir
        try:
            for text in messages[who]:
                backend.deliver(reader.pane, text)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(who,)) for who in messages]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    lines = reader.wait_lines(8)
    assert sorted(lines) == sorted(messages["A"] + messages["B"])


def test_concurrent_processes_do_not_interleave(tmux_server: TmuxServer, reader: Reader) -> None:
    code = (
        "import sys\n"
        "from exomonad.panes import TmuxBackend\n"
        "b = TmuxBackend(sys.argv[1], lock_dir=sys.argv[2], spool_dir=sys.argv[3],"
        " enter_delay=0.05)\n"
        "print('ready', flush=True); sys.stdin.readline()\n"
        "for i in range(4):\n"
        "    b.deliver(sys.argv[4], 'C' * 300 + f' C{i}')\n"
    )
    argv = [
        sys.executable, "-c", code, tmux_server.socket, str(tmux_server.tmp / "locks"),
        str(tmux_server.tmp / "spool"), reader.pane,
    ]  # fmt: skip
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        assert child.stdin is not None
        assert child.stdout.readline() == "ready\n"
        child.stdin.write("go\n")
        child.stdin.flush()
        backend = tmux_server.backend(enter_delay=0.05)
        mine = [f"{'D' * 300} D{i}" for i in range(4)]
        for text in mine:
            backend.deliver(reader.pane, text)
        assert child.wait(30) == 0
    theirs = [f"{'C' * 300} C{i}" for i in range(4)]
    assert sorted(reader.wait_lines(8)) == sorted(mine + theirs)


def test_unconfirmed_submission_is_retried_then_reported(tmux_server: TmuxServer) -> None:
    # A program that turns echo off and never prints: Enter has no visible effect.
    silent = "import termios,time;a=termios.tcgetattr(0);a[3]&=~termios.ECHO;" \
        "termios.tcsetattr(0,termios.TCSANOW,a);open(__import__('sys').argv[1],'w');" \
        "time.sleep(600)"  # fmt: skip
    ready = tmux_server.tmp / "silent-ready"
    pane = tmux_server.new_pane(sys.executable, "-c", silent, str(ready))
    retry_until(ready.exists, timeout=10)
    backend = tmux_server.backend(submit_timeout=0.2, max_enter_attempts=2)
    receipt = backend.deliver(pane, "is anyone there")
    assert not receipt.submitted
    assert receipt.submitted_at is None
    assert receipt.enter_attempts == 2


def test_unknown_pane_is_a_pane_error(tmux_server: TmuxServer) -> None:
    backend = tmux_server.backend()
    for bad in ("%9999", "main:42", "nosuchsession", ""):
        with pytest.raises(PaneError):
            backend.deliver(bad, "hello")
        assert not backend.exists(bad)
    with pytest.raises(PaneError, match="does not exist"):
        backend.capture("%9999")
    with pytest.raises(PaneError, match="does not exist"):
        backend.kill("%9999")


def test_no_server_is_a_pane_error(tmp_path: Path) -> None:
    backend = TmuxBackend(f"exo-test-absent-{uuid.uuid4().hex[:12]}", lock_dir=tmp_path)
    assert not backend.exists("%0")
    with pytest.raises(PaneError, match="does not exist"):
        backend.deliver("%0", "hello")


def test_dead_pane_is_a_pane_error(tmux_server: TmuxServer) -> None:
    tmux_server.tmux("set-option", "-g", "remain-on-exit", "on")
    pane = tmux_server.new_pane("sh", "-c", "exit 3")
    retry_until(lambda: tmux_server.fmt(pane, "#{pane_dead}") == "1", timeout=10)
    backend = tmux_server.backend()
    with pytest.raises(PaneError, match="dead"):
        backend.deliver(pane, "hello")
    with pytest.raises(PaneError, match="dead"):
        backend.send_text(pane, "hello")
    assert not backend.exists(pane)
    # A dead pane can still be read (whether tmux's "Pane is dead" notice is on screen yet
    # varies, so only the absence of an error is checked).
    assert isinstance(backend.capture(pane), str)
    backend.kill(pane)
    with pytest.raises(PaneError, match="does not exist"):
        backend.capture(pane)


def test_input_disabled_pane_is_a_pane_error(tmux_server: TmuxServer, reader: Reader) -> None:
    tmux_server.tmux("select-pane", "-d", "-t", reader.pane)
    backend = tmux_server.backend()
    with pytest.raises(PaneError, match="input disabled"):
        backend.deliver(reader.pane, "hello")
    assert not backend.exists(reader.pane)
    tmux_server.tmux("select-pane", "-e", "-t", reader.pane)
    assert backend.exists(reader.pane)


def test_spawn_window_split_session_and_kill(tmux_server: TmuxServer, tmp_path: Path) -> None:
    backend = tmux_server.backend()
    out = tmp_path / "spawned.txt"
    code = (  # ends with ';' on purpose: tmux would strip it from an unprotected argument
        "import os,sys,time;open(sys.argv[1],'w').write(os.environ['ROLE']+'|'+os.getcwd());"
        "time.sleep(600);"
    )
    pane = backend.spawn(
        [sys.executable, "-c", code, str(out)],
        cwd=tmp_path,
        env={"ROLE": "worker;"},
        name="gemini-1",
        target="main",
    )
    assert re.fullmatch(r"%\d+", pane)
    retry_until(lambda: out.exists() and "|" in out.read_text(), timeout=10)
    assert out.read_text() == f"worker;|{tmp_path}"  # trailing ';' survived tmux parsing
    assert tmux_server.fmt(pane, "#{window_name}") == "gemini-1"

    sleeper = backend.spawn(["sleep", "600"], target="main")
    split = backend.spawn("sleep 600", target=sleeper, split=True, name="side")
    assert tmux_server.fmt(split, "#{window_id}") == tmux_server.fmt(sleeper, "#{window_id}")
    assert tmux_server.fmt(split, "#{pane_title}") == "side"
    assert backend.exists(split)

    session_pane = backend.spawn(["sleep", "600"], name="spawned-session")
    assert tmux_server.fmt(session_pane, "#{session_name}") == "spawned-session"

    backend.kill(split)
    assert not backend.exists(split)
    assert backend.exists(sleeper)
    with pytest.raises(PaneError):
        backend.kill(split)


def test_capture_returns_visible_text(tmux_server: TmuxServer, reader: Reader) -> None:
    backend = tmux_server.backend()
    backend.deliver(reader.pane, "capture me please")
    reader.wait_lines(1)
    text = backend.capture(reader.pane)
    assert "> capture me please" in text.splitlines()[0] + text
    assert "\x1b" not in text
    assert not text.endswith("\n")


def test_spawn_into_a_session_whose_name_prefixes_a_window_name(tmux_server: TmuxServer) -> None:
    """Regression: `new-window -t w` matched window `w1` by name prefix ("index 1 in use"),
    so a second worker could not be spawned into session `w`."""
    tmux_server.tmux("new-session", "-d", "-s", "w", "sleep 600")
    backend = tmux_server.backend()
    panes = [backend.spawn(["sleep", "600"], name=n, target="w") for n in ("w1", "w2", "w3")]
    names = {tmux_server.fmt(p, "#{session_name}:#{window_name}") for p in panes}
    assert names == {"w:w1", "w:w2", "w:w3"}
