"""Helpers for tests that run a real ``exomonad serve``: wait for it, and mint a worker."""

from __future__ import annotations

from pathlib import Path

from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.util.waiting import retry_until


def answers(client: ServerClient) -> bool:
    """Whether the server answers ``/health``."""
    try:
        client.health()
    except ExomonadError:
        return False
    return True


def worker_token(state: Path, team: str = "proj", name: str = "w1",
                 runtime: str = "gemini") -> str:  # fmt: skip
    """Wait until the server of ``state`` answers, let the lead create ``team`` (its
    ``TeamCreate`` hook) and return a worker token for ``name``."""
    retry_until((state / "server.sock").exists, timeout=30, message="server did not start")
    lead = ServerClient.as_lead(state)
    retry_until(lambda: answers(lead), timeout=30, message="server did not answer")
    lead.call("POST", "/hook/post-tool-use?runtime=claude",
              {"session_id": "lead-1", "tool_name": "TeamCreate",
               "tool_input": {"team_name": team}})  # fmt: skip
    ask = {"name": name, "team": team, "runtime": runtime}
    token: str = lead.call("POST", "/teammate/token", ask)["token"]
    return token
