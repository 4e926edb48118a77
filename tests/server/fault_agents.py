"""Worker agents for the fault-injection run: MCP clients (the ``mcp`` SDK) over
``exomonad mcp-stdio``, as Gemini CLI runs its MCP servers, reporting to the lead with
``notify_parent`` and ``send_message`` while the server is killed and started again."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

__all__ = ["CALL_TIMEOUT", "Agents", "Call"]

#: An MCP call answered by nobody fails after this (the agent's own time-out); the test
#: asserts none did: a killed server's calls must be answered with an error at once.
CALL_TIMEOUT = 60.0


@dataclass
class Call:
    """One message an agent sends, again and again until a call for it succeeds."""

    tool: str  # notify_parent or send_message
    sender: str
    body: str  # what the agent says
    lead: str = "team-lead"
    attempts: int = 0
    message_id: str | None = None  # from the call that succeeded
    errors: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The entry's text in the lead's inbox."""
        if self.tool == "notify_parent":
            return f"[from: {self.sender}] success: {self.body}"
        return self.body

    def arguments(self) -> dict[str, str]:
        """The tool's arguments."""
        if self.tool == "notify_parent":
            return {"status": "success", "message": self.body}
        return {"to": self.lead, "text": self.body}


@dataclass
class Agents:
    """``len(tokens)`` agents in a thread of their own, until :meth:`stop`."""

    tokens: list[str]
    env: Mapping[str, str]
    log: Callable[[str], IO[bytes]]  # a file for each agent's mcp-stdio stderr
    pace: float = 0.1
    calls: list[Call] = field(default_factory=list)  # each confirmed by a call
    sessions: int = 0  # MCP sessions opened (one per agent unless a connection broke)
    broken: list[str] = field(default_factory=list)  # connections that broke
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=anyio.run, args=(self._all,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(CALL_TIMEOUT + 60)
            assert not self._thread.is_alive(), "the MCP clients did not stop"

    async def _all(self) -> None:
        async with anyio.create_task_group() as tg:
            for i, token in enumerate(self.tokens):
                tg.start_soon(self._agent, f"mcp-{i}", token)

    async def _agent(self, name: str, token: str) -> None:
        """A failed call is retried (the same text) until one succeeds, after a stop too;
        a connection that breaks is opened again (the test asserts none did)."""
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "exomonad", "mcp-stdio"],
            env={**self.env, "EXOMONAD_TOKEN": token},
        )
        errlog = self.log(f"{name}.err")
        k = 0
        call: Call | None = None
        while not self._stop.is_set() or call is not None:
            try:
                async with (
                    stdio_client(params, errlog=errlog) as (r, w),  # type: ignore[arg-type]
                    ClientSession(r, w) as session,
                ):
                    await session.initialize()
                    self.sessions += 1
                    while not self._stop.is_set() or call is not None:
                        tool = "notify_parent" if k % 2 == 0 else "send_message"
                        call = call or Call(tool, name, f"{name}#{k}")
                        if await self._call(session, call):
                            self.calls.append(call)
                            call, k = None, k + 1
                        await anyio.sleep(self.pace)  # the agent's pace, not a wait
            except Exception as exc:
                self.broken.append(f"{name}: {type(exc).__name__}: {exc}"[:300])

    @staticmethod
    async def _call(session: ClientSession, call: Call) -> bool:
        """One attempt; True if the tool answered success."""
        call.attempts += 1
        try:
            res = await session.call_tool(
                call.tool, call.arguments(), read_timeout_seconds=CALL_TIMEOUT
            )
        except MCPError as exc:  # the server was killed or is restarting: the agent retries
            call.errors.append(str(exc)[:200])
            return False
        data = res.structured_content or {}
        if res.is_error or not data.get("ok"):
            call.errors.append(str(res.content)[:200])
            return False
        call.message_id = str(data["messageId"])
        return True
