"""The server's blocking work (tool calls, hooks, file locks, SQLite, tmux, approvals)
runs in one pool of threads, off the event loop.

:func:`in_thread` replaces ``anyio.to_thread.run_sync``, whose capacity limiter, cancel
scopes and per-call bookkeeping cost a cheap tool call about 45 µs more of the server's
CPU (issue 14; ``docs/performance.md``). What stays the same: a call handed over always
runs to its end, so its effects (an inbox append, an approval) land even if the request
that asked for it is cancelled; the cancelled caller just stops waiting, and the result
is dropped. The pool holds at most :data:`MAX_THREADS` threads, started as needed: calls
that wait for a person (an escalated tool call) hold one each, and further calls queue.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["MAX_THREADS", "in_thread"]

T = TypeVar("T")

#: Threads the pool may run at once (``anyio``'s default limiter allowed 40).
MAX_THREADS = 64

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="exomonad")
    return _pool


async def in_thread(fn: Callable[..., T], /, *args: Any) -> T:
    """``fn(*args)`` in the server's thread pool; its result (or exception) once done."""
    loop = asyncio.get_running_loop()
    return await asyncio.shield(loop.run_in_executor(_executor(), fn, *args))
