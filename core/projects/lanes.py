"""Storage work in lanes: several waits on the storage at once (issue 34).

A browser's storage answers each call after a wait; many small files written one after
another pay those waits one after another. :func:`in_lanes` runs ``lanes`` workers over one
shared queue so the waits overlap — when the files' adapter says its waits may
(:class:`~core.ports.OverlapsWaits`, found under the wrappers by :func:`overlaps`: the
browser's). Over any other adapter (the in-memory ports driven step by step in the tests,
which never wait) the workers run one after another with the same outcome: each takes the
next item from the same queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from core.ports import OverlapsWaits, ProjectFiles
from core.projects.read_through import ReadThrough

__all__ = ["in_lanes", "overlaps"]

T = TypeVar("T")


def overlaps(files: ProjectFiles) -> bool:
    """True when the adapter under ``files``' wrappers says its waits may overlap."""
    while isinstance(files, ReadThrough):
        files = files.reads_from
    return isinstance(files, OverlapsWaits) and files.overlaps_waits


async def in_lanes(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], lanes: int, *, overlap: bool
) -> None:
    """Await ``work(item)`` for every item, at most ``lanes`` at once when ``overlap`` (else
    one after another). The first exception stops every lane from taking another item (the
    items in flight finish) and is raised once they have."""
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

    if overlap and lanes > 1:
        await asyncio.gather(*(lane() for _ in range(lanes)))
    else:
        await lane()
    if failed:
        raise failed[0]
