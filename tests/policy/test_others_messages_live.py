"""Live: another agent's messages are not a worker's to read, wherever they wait.

A real ``exomonad serve`` (``served``), two workers the lead spawned, the real hook client
with a worker's token. Found probing, each read below printed another agent's message
and was allowed: the lead's multi-line task for ``w2``, parked in the spool directory and
typed into ``w2``'s pane as a pointer, by ``w1``'s ``cat <spool>/*.md``; ``w2``'s report
in the lead's inbox by ``w1``'s ``cat <root>/team[s]/proj/inboxes/team-lead.json`` (a
glob, where the inbox rule read the path as written).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.client import ServerClient
from exomonad.util.waiting import retry_until
from tests.policy.test_state_tree_live import served
from tests.support.tmux import TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SECRET = "the staging password is hunter2"


def _printed(command: str) -> str:
    """What ``command`` prints when bash runs it (before the verdict: the harm is real)."""
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                          check=False).stdout  # fmt: skip


def test_a_worker_reads_neither_anothers_spooled_messages_nor_inboxes_by_glob(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    spool = tmp_path / "spool"
    with served(tmp_path, tmux_server, spool=spool) as live:
        w1, worktree = live.spawn_worker("w1")
        w2, _ = live.spawn_worker("w2")
        lead = ServerClient.as_lead(live.state, timeout=60)
        lead.call("POST", "/tool/send_message", {"to": "w2", "text": f"Task.\n{SECRET}\n"})
        box = spool / "proj" / "w2"  # the recipient's own directory
        retry_until(lambda: any(box.glob("*.md")), timeout=30, message="nothing spooled")
        (parked,) = box.glob("*.md")
        for command in (f"cat {spool}/*/*/*.md", f"cat {parked}", f"grep -r hunter2 {tmp_path}"):
            assert SECRET in _printed(command), command
            refused = live.hook(command, token=w1, cwd=worktree)
            assert refused["permissionDecision"] == "deny", (command, refused)
        allowed = live.hook(f"cat {parked}", token=w2, cwd=worktree.parent / "w2")
        assert allowed["permissionDecision"] == "allow", allowed  # its own: the pointer's

        report = "w2 found the deploy key in the build log"
        ServerClient(live.state, token=w2, timeout=60).tool(
            "notify_parent", {"status": "success", "message": report}
        )
        inbox = f"{live.env['CLAUDE_CONFIG_DIR']}/team[s]/proj/inboxes/team-lead.json"
        assert report in _printed(f"cat {inbox}")
        refused = live.hook(f"cat {inbox}", token=w1, cwd=worktree)
        assert refused["permissionDecision"] == "deny", refused
        own = f"cat {live.env['CLAUDE_CONFIG_DIR']}/teams/proj/inboxes/w1.json"
        assert live.hook(own, token=w1, cwd=worktree)["permissionDecision"] == "allow"
