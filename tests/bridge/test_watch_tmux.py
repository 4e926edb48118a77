"""The watcher end to end with real parts: Node writers, inotify, tmux, a reader program.

Twin of the fake-sink tests in ``test_watcher.py``. Each test has its own tmux server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.render import render
from exomonad.bridge.watcher import InboxWatcher
from exomonad.panes import TmuxBackend, sanitize
from exomonad.teams import Mailbox, TeamPaths, create_team, get_dialect, register_synthetic
from exomonad.util.waiting import retry_until
from tests.interop.peers import Style, node_writer
from tests.support.tmux import Reader, TmuxServer

pytestmark = pytest.mark.integration


@pytest.fixture
def team(tmp_path: Path) -> TeamPaths:
    paths = TeamPaths("pane-team", tmp_path / "claude")
    create_team(paths)
    return paths


async def _run(watcher: InboxWatcher) -> asyncio.Task[None]:
    ready = asyncio.Event()
    task = asyncio.create_task(watcher.run(ready))
    await asyncio.wait_for(ready.wait(), 10)
    return task


@pytest.fixture
async def watching(
    team: TeamPaths, tmux_server: TmuxServer, tmp_path: Path
) -> AsyncIterator[tuple[InboxWatcher, TmuxBackend]]:
    backend = tmux_server.backend(enter_delay=0.01, echo_timeout=0.5)
    ledger = SqliteLedger(tmp_path / "ledger.db")
    watcher = InboxWatcher(ledger, backend, root=team.root, durable=False)
    task = await _run(watcher)
    yield watcher, backend
    watcher.request_stop()
    await asyncio.wait_for(task, 10)
    ledger.close()


async def _wait_lines(reader: Reader, count: int, timeout: float = 60) -> list[str]:
    await asyncio.to_thread(reader.wait_lines, count, timeout)
    return reader.lines()


@pytest.mark.parametrize("style", ["2.1.112", "2.1.330"])
async def test_node_writer_messages_arrive_once_in_order(
    watching: tuple[InboxWatcher, TmuxBackend],
    team: TeamPaths,
    tmux_server: TmuxServer,
    style: Style,
) -> None:
    reader = tmux_server.reader()
    register_synthetic(team, "worker", pane=reader.pane)
    n = 25
    peer = node_writer(team.inbox("worker"), "team-lead", n, style, delay_ms=5, prefix="msg")
    result = await asyncio.to_thread(peer.result, 60)
    assert result["lock_failures"] == 0
    lines = await _wait_lines(reader, n)
    assert lines == [f"[from team-lead] msg#{i}" for i in range(n)]
    # The watcher pruned (2.1.330 dialect) what it delivered while Node kept writing.
    await asyncio.to_thread(retry_until, lambda: Mailbox(team).read_raw("worker") == [], 10)


HOSTILE = [
    "unicode: 日本語 ünïcødé 😀 — “quotes” 'single' \"double\"",
    "shell: $(rm -rf /) `id` !! $HOME ${PATH} ; && || > /dev/null",
    "tabs:\tone\ttwo",
    "escapes: \x1b[31mred\x1b[0m \x1b]0;title\x07 \x03 \x04 \x1a bell\x07 del\x7f",
    "multi\nline\nmessage",
    "big: " + "0123456789abcdef" * 640,  # 10 KB
]


async def test_hostile_text_arrives_sanitised_and_never_as_keys(
    watching: tuple[InboxWatcher, TmuxBackend], team: TeamPaths, tmux_server: TmuxServer
) -> None:
    reader = tmux_server.reader()
    register_synthetic(team, "worker", pane=reader.pane)
    mb = Mailbox(team, durable=False)
    for text in HOSTILE:
        await asyncio.to_thread(mb.send, "worker", sender="team-lead", text=text)
    lines = await _wait_lines(reader, len(HOSTILE))
    assert len(lines) == len(HOSTILE)
    assert reader.signals() == []  # no ^C / ^Z reached the terminal
    for text, line in zip(HOSTILE, lines, strict=True):
        expected = sanitize(render({"from": "team-lead", "text": text}))
        if "\n" in expected or len(expected) > 4000:  # spooled: a pointer line
            assert line.startswith("[exomonad] message from team-lead is in "), line
            spool = Path(line.split(" is in ", 1)[1].split(" ")[0])
            assert spool.read_text("utf-8") == expected
        else:
            assert line == expected
        assert "\x1b" not in line
        assert "\x03" not in line
    screen = tmux_server.tmux("capture-pane", "-p", "-e", "-t", reader.pane)
    assert "\x1b[31m" not in screen  # nothing turned the screen red


def _watch_cli(team: TeamPaths, tmux_server: TmuxServer, state: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.update(
        CLAUDE_CONFIG_DIR=str(team.root),
        EXOMONAD_DIR=str(state),
        EXOMONAD_ENTER_DELAY="0.01",
        EXOMONAD_LOCK_DIR=str(state / "locks"),
        EXOMONAD_SPOOL_DIR=str(state / "spool"),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "exomonad", "watch", "--tmux-socket", tmux_server.socket],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_mid_stream_loses_nothing(
    team: TeamPaths, tmux_server: TmuxServer, tmp_path: Path
) -> None:
    """Kill the real `exomonad watch` with SIGKILL while a Node writer streams; restart."""
    reader = tmux_server.reader()
    register_synthetic(team, "worker", pane=reader.pane)
    state = tmp_path / "state"
    n = 60
    first = _watch_cli(team, tmux_server, state)
    peer = node_writer(team.inbox("worker"), "team-lead", n, "2.1.330", delay_ms=40, prefix="k")
    retry_until(lambda: len(reader.lines()) >= 10, timeout=60, message="first watcher idle")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    killed_at = len(reader.lines())
    second = _watch_cli(team, tmux_server, state)
    try:
        result = peer.result(120)
        # A kill inside a lock hold leaves the lock until the next ExoMonad start removes
        # it (the lock journal); a write in that window may exhaust Claude Code's ~655 ms,
        # one message per 655 ms until the second watcher is up (~0.4 s idle, more on a
        # loaded box). Without the journal the lock would stand to its 10 s stale time.
        dropped = set(result["failed"])
        assert len(dropped) <= 3, f"writer dropped {sorted(dropped)}"
        want = [f"[from team-lead] k#{i}" for i in range(n) if i not in dropped]
        retry_until(lambda: set(want) <= set(reader.lines()), timeout=90,
                    message="not every message arrived after the restart")  # fmt: skip
    finally:
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=20)
    lines = [x for x in reader.lines() if x]  # a recovery Enter may submit an empty line
    first_seen = list(dict.fromkeys(lines))
    assert first_seen == want  # in order, none lost
    dupes = sum(c - 1 for c in Counter(lines).values())
    assert dupes <= 1, f"{dupes} duplicates (bounded by one message in flight)"
    if dupes:
        assert "possible duplicates" in err
    assert second.returncode == 0, err
    assert 10 <= killed_at < n


async def test_real_flag_dialect_keeps_entries_marked_read(
    team: TeamPaths, tmux_server: TmuxServer, tmp_path: Path
) -> None:
    reader = tmux_server.reader()
    register_synthetic(team, "worker", pane=reader.pane)
    backend = tmux_server.backend(enter_delay=0.01, echo_timeout=0.5)
    ledger = SqliteLedger(tmp_path / "l.db")
    watcher = InboxWatcher(
        ledger, backend, root=team.root, durable=False, dialect=get_dialect("2.1.112")
    )
    task = await _run(watcher)
    try:
        peer = node_writer(team.inbox("worker"), "team-lead", 10, "2.1.112", delay_ms=5)
        await asyncio.to_thread(peer.result, 60)
        await _wait_lines(reader, 10)

        def all_read() -> bool:
            entries = Mailbox(team).read_raw("worker")
            return len(entries) == 10 and all(e.get("read") is True for e in entries)

        await asyncio.to_thread(retry_until, all_read, 10)
    finally:
        watcher.request_stop()
        await task
        ledger.close()
