"""The dashboard in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright, against a real ``exomonad serve`` and a scripted team.

Members show their presence; a message Claude Code's own writer puts into an inbox
reaches the timeline without a reload (how long it takes is measured and recorded, not
asserted); Approve and Deny on a person's escalation release the real hook waiting for
it with allow and deny; message text with markup renders as text; the TCP listener
refuses the page without its token. Screenshots and the timings go to
``tests/artifacts/dashboard/``.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.sync_api import Browser, Locator, Page, sync_playwright

from exomonad.teams import Mailbox
from exomonad.util.waiting import retry_until
from tests.interop.peers import node_writer
from tests.server.dashboard.conftest import PRESENCE, TEAM, Live

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"
#: Markup that would run if it were ever parsed as HTML.
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make setup` (it apt-installs chromium)")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield launched
        finally:
            launched.close()


def _shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def _timeline_at(page: Page, text: str) -> float | None:
    """When (ms since the epoch, the page's clock) the team's timeline showed ``text``."""
    at: Any = page.evaluate(
        """([team, text]) => {
            const items = document.querySelectorAll(`section[data-team="${team}"] .timeline li`);
            const hit = [...items].find((li) => li.textContent.includes(text));
            return hit ? Number(hit.dataset.at) : null;
        }""",
        [TEAM, text],
    )
    return float(at) if at is not None else None


def _write(inbox: Path, sender: str, text: str) -> float:
    """One message by Claude Code's own writer (Node, proper-lockfile); returns the
    moment it was told to write (``time.time()``)."""
    peer = node_writer(inbox, sender, 1, "2.1.330", wait=True, prefix=text)
    peer.wait_ready()
    started = time.time()
    peer.go()
    summary = peer.result()
    assert summary["written"] == 1, summary
    return started


def _decision(hook: Any) -> dict[str, Any]:
    out, err = hook.communicate(timeout=60)
    assert hook.returncode == 0, err
    decision: dict[str, Any] = orjson.loads(out)["hookSpecificOutput"]
    return decision


def _answer(page: Page, button: str, reason: str) -> str:
    """Answer the one pending approval on the page; returns its id."""
    item = page.locator('li[data-approval][data-state="pending"]')
    item.wait_for()
    approval_id = item.get_attribute("data-approval")
    assert approval_id
    item.locator('input[name="reason"]').fill(reason)
    item.locator(f"button.{button}").click()
    return approval_id


def _tokenless(page: Page, team: Live) -> None:
    """Without its token the listener gives nothing, not even the page."""
    for path in ("/", "/static/app.js", f"/{uuid.uuid4().hex}/"):
        refused = page.goto(team.origin + path)
        assert refused is not None
        assert refused.status == 401, path
    _shot(page, "0-no-token")


def _team(page: Page) -> None:
    """Members with their presence, the task list, the live connection."""
    shown = (
        "() => Object.fromEntries([...document.querySelectorAll("
        "'section[data-team=\"proj\"] .members li')].map((li) => [li.dataset.member, "
        "li.dataset.presence]))"
    )
    retry_until(lambda: PRESENCE.items() <= page.evaluate(shown).items(), timeout=30,
                message="members never showed their presence")  # fmt: skip
    retry_until(lambda: page.locator("#conn").get_attribute("data-state") == "live", timeout=30)
    task = page.locator('section[data-team="proj"] .tasks li[data-task]')
    task.wait_for()
    assert "write the parser" in (task.text_content() or "")
    assert "w-busy" in (task.locator(".meta").text_content() or "")  # its owner
    _shot(page, "1-team")


def _live_timeline(page: Page, team: Live) -> None:
    """The lead's writer puts messages into w-busy's inbox; the watcher types each into
    its pane and the event reaches the page, which is not reloaded."""
    page.evaluate("window.__loaded = performance.timeOrigin")  # gone if the page reloads
    seen = []
    for i in range(5):
        text = f"lead to w-busy {i} {uuid.uuid4().hex[:8]}"
        started = _write(team.paths().inbox("w-busy"), "team-lead", text)
        retry_until(lambda text=text: _timeline_at(page, text) is not None, timeout=60,  # type: ignore[misc]
                    message=f"{text!r} never reached the timeline")  # fmt: skip
        at = _timeline_at(page, text)
        assert at is not None
        seen.append(round(at / 1000 - started, 3))
    timing = {"what": "inbox write (Node writer, 2.1.330 style) to timeline entry in "
              "Chromium (watcher delivery into the pane, event bus, SSE, render)",
              "seconds": seen, "median": statistics.median(seen), "max": max(seen)}  # fmt: skip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timeline-latency.json").write_text(json.dumps(timing, indent=2) + "\n")
    print(f"inbox write -> timeline: {timing}")
    assert page.evaluate("window.__loaded") is not None  # the same page: no reload
    _shot(page, "2-timeline")


def _markup_is_text(page: Page, team: Live) -> Locator:
    """Markup in messages renders as text, in the timeline and among the messages to the
    user; returns the latter's item."""
    _write(team.paths().inbox("w-busy"), "team-lead", HOSTILE)
    _write(team.paths().inbox("user"), "w-busy", HOSTILE)
    retry_until(lambda: _timeline_at(page, HOSTILE) is not None, timeout=60,
                message="the hostile message never reached the timeline")  # fmt: skip
    item = page.locator('#user-inbox li[data-from="w-busy"]')
    item.wait_for()
    assert HOSTILE in (item.locator(".text").text_content() or "")
    assert page.evaluate("window.__pwned") is None
    parsed = "#teams script, #teams img, #user-inbox script, #user-inbox img"
    assert page.locator(parsed).count() == 0
    _shot(page, "3-markup-as-text")
    return item


def _approve_and_deny(page: Page, team: Live) -> None:
    """A worker's tool call waits for a person; the page's buttons release it."""
    token = team.tokens()["w-busy"]
    sudo = {"session_id": "s-busy", "tool_name": "Bash", "cwd": "/tmp",
            "tool_input": {"command": "sudo apt-get install jq"}}  # fmt: skip
    hook = team.hook("pre-tool-use", sudo, token)
    page.locator('li[data-approval][data-state="pending"]').wait_for()
    _shot(page, "4-approval-pending")
    approved = _answer(page, "approve", "fine for the build box")
    decision = _decision(hook)
    assert decision["permissionDecision"] == "allow"
    assert "(dashboard): fine for the build box" in decision["permissionDecisionReason"]
    retry_until(lambda: page.locator(f'li[data-approval="{approved}"]').count() == 0, timeout=30)
    hook = team.hook(
        "pre-tool-use", {**sudo, "tool_input": {"command": "sudo apt-get remove -y jq"}}, token
    )
    denied = _answer(page, "deny", "not today")
    decision = _decision(hook)
    assert decision["permissionDecision"] == "deny"
    assert "(dashboard): not today" in decision["permissionDecisionReason"]
    assert denied != approved
    _shot(page, "5-answered")


def _reply(page: Page, team: Live, item: Locator) -> None:
    """A reply to a message for the user lands in the sender's inbox, from user."""
    item.locator('textarea[name="reply"]').fill("use the <v2> API")
    item.locator("button.send").click()
    retry_until(lambda: any(e["from"] == "user" and e["text"] == "use the <v2> API"
                            for e in Mailbox(team.paths()).read_raw("w-busy")),
                timeout=30, message="the reply never reached w-busy's inbox")  # fmt: skip
    retry_until(lambda: _timeline_at(page, "user → w-busy: use the <v2> API") is not None,
                timeout=30, message="the reply never showed in the timeline")  # fmt: skip
    _shot(page, "6-replied")


def test_the_dashboard_in_a_browser(team: Live, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    _tokenless(page, team)
    opened = page.goto(team.url)
    assert opened is not None
    assert opened.status == 200
    _team(page)
    _live_timeline(page, team)
    item = _markup_is_text(page, team)
    _approve_and_deny(page, team)
    _reply(page, team, item)
    assert errors == []
