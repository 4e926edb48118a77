"""Chaining :class:`concurrent.futures.Future`\\ s (what an event loop awaits through
:func:`asyncio.wrap_future` while a thread does the work).

>>> from concurrent.futures import Future
>>> source: Future[int] = Future()
>>> doubled = then(source, lambda n: 2 * n)
>>> doubled.cancel()  # its waiter may give up; the work goes on
False
>>> source.set_result(21)
>>> doubled.result()
42
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

__all__ = ["then"]

T = TypeVar("T")
U = TypeVar("U")


def then(source: Future[T], fn: Callable[[T], U]) -> Future[U]:
    """A future of ``fn(result of source)``, computed in the thread that completes
    ``source``; ``source``'s error, or ``fn``'s, is its error. It cannot be cancelled:
    a caller that stops waiting for it stops nothing."""
    done: Future[U] = Future()
    done.set_running_or_notify_cancel()

    def chain(finished: Future[T]) -> None:
        try:
            done.set_result(fn(finished.result()))
        except BaseException as exc:  # passed on to whoever waits for ``done``
            done.set_exception(exc)

    source.add_done_callback(chain)
    return done
