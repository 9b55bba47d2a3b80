"""Storage work in lanes: several waits on the storage at once (issue 34).

A browser's storage answers each call after a wait; many small files written one after
another pay those waits one after another. :func:`in_lanes` runs ``lanes`` workers over one
shared queue so the waits overlap — when the host runs an event loop (Pyodide's in the
browser, asyncio's in ``voicebox-env``). Without one (the in-memory ports driven step by step
in the tests, which never wait) the workers run one after another with the same outcome: each
takes the next item from the same queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

__all__ = ["in_lanes"]

T = TypeVar("T")


async def in_lanes(items: Iterable[T], work: Callable[[T], Awaitable[None]], lanes: int) -> None:
    """Await ``work(item)`` for every item, at most ``lanes`` at once. The first exception
    stops every lane from taking another item (the items in flight finish) and is raised
    once they have."""
    queue = iter(items)
    failed: list[BaseException] = []

    async def lane() -> None:
        for item in queue:
            if failed:
                return
            try:
                await work(item)
            except BaseException as exc:  # re-raised below, after the other lanes stop
                failed.append(exc)
                return

    workers = [lane() for _ in range(max(1, lanes))]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        for worker in workers:
            await worker
    else:
        await asyncio.gather(*workers)
    if failed:
        raise failed[0]
