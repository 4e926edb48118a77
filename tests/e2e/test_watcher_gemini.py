"""Lead → worker with the real Gemini CLI: an inbox entry becomes the model's input.

Claude Code's side is played by the Node writer (Claude Code's lock settings and 2.1.330
entry format); ExoMonad's watcher types the entry into the Gemini pane with the tmux
backend; the scripted Gemini API server records the request it causes.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.panes import TmuxBackend
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.teams import TeamPaths, create_team, register_synthetic
from tests.e2e.gemini_cli import Tmux, prepare_home, start_gemini_in_tmux
from tests.e2e.test_gemini_pane import READY_TIMEOUT, REQUEST_TIMEOUT, _require_installed
from tests.interop.peers import node_writer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with Tmux() as server:
        yield server


async def test_inbox_message_reaches_gemini_model_request(tmux: Tmux, tmp_path: Path) -> None:
    _require_installed()
    token = secrets.token_hex(4)
    team = TeamPaths("gemini-team", tmp_path / "claude")
    create_team(team)
    with ScriptedGemini() as model:
        model.add_text(f"ACK first {token}")
        model.add_text(f"ACK second {token}")
        pane = start_gemini_in_tmux(
            tmux, prepare_home(tmp_path / "gem"), model.url, ready_timeout=READY_TIMEOUT
        )
        register_synthetic(team, "gemini-1", pane=pane.pane_id, agent_type="gemini")
        backend = TmuxBackend(tmux.socket, lock_dir=tmp_path / "locks", spool_dir=tmp_path / "sp")
        ledger = SqliteLedger(tmp_path / "ledger.db")
        watcher = InboxWatcher(ledger, backend, root=team.root)
        ready = asyncio.Event()
        task = asyncio.create_task(watcher.run(ready))
        await asyncio.wait_for(ready.wait(), 10)
        try:
            for i, word in enumerate(("first", "second")):
                text = f"please review module {word} {token}"
                sent = time.monotonic()
                peer = node_writer(team.inbox("gemini-1"), "team-lead", 1, "2.1.330", prefix=text)
                assert (await asyncio.to_thread(peer.result, 30))["lock_failures"] == 0
                want = f"[from team-lead] {text}#0"
                req = await asyncio.to_thread(model.wait_for_user_text, want, REQUEST_TIMEOUT)
                assert want in req.last_user_texts()
                assert req.is_agent_turn
                print(f"\n[watch→gemini] message {i}: {time.monotonic() - sent:.2f}s")
                await asyncio.to_thread(pane.wait_for_text, f"ACK {word} {token}", REQUEST_TIMEOUT)
            assert ledger.counts()["delivered"] == 2
        finally:
            watcher.request_stop()
            await task
            ledger.close()
