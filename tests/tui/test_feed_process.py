"""The status view's feed against a real ``exomonad serve``: a reconnection to the same
server resumes after the last event read (nothing twice, nothing lost)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from exomonad.client import ServerClient
from exomonad.server.events import BaseEvent, Gap, MessageOut
from exomonad.tui.feed import Feed
from exomonad.tui.model import Down, Snapshot
from tests.server.test_server_process import Project, project

__all__ = ["project"]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

Item = Snapshot | Down | BaseEvent | Gap


async def _texts_until(items: AsyncIterator[Item], last: str) -> list[str]:
    """The texts of the messages read, up to the one whose text is ``last``."""
    texts: list[str] = []
    while last not in texts:
        item = await asyncio.wait_for(anext(items), 30)
        assert not isinstance(item, Down), item.reason
        if isinstance(item, MessageOut):
            texts.append(item.text)
    return texts


async def test_a_reconnection_resumes_after_the_last_event_read(project: Project) -> None:
    lead = ServerClient.as_lead(project.state)
    feed = Feed(project.state, retry=0.1)
    items = feed.items()
    first = await asyncio.wait_for(anext(items), 30)
    assert isinstance(first, Snapshot)
    lead.tool("send_message", {"to": "user", "text": "one"})
    assert await _texts_until(items, "one") == ["one"]
    await items.aclose()  # the view went away (its reader thread stops)

    again = feed.items()  # the same server: resumes after the last event read
    snap = await asyncio.wait_for(anext(again), 30)
    assert isinstance(snap, Snapshot)
    assert snap.run == first.run == 1
    lead.tool("send_message", {"to": "user", "text": "two"})
    assert await _texts_until(again, "two") == ["two"]
    await again.aclose()
