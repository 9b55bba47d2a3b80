"""Issue 34, a fresh host's first post: the post path is rehearsed on a throwaway in-memory
host before ``settled`` (core/memory/rehearsal.py, passed by the browser host to
Host.after_ready) — every rehearsed post is a real, accepted post there, and nothing of it
reaches the host that rehearses."""

from __future__ import annotations

import asyncio

import pytest

from core.memory.rehearsal import REHEARSED_POSTS, rehearse_posts
from tests.support import HostHarness


@pytest.mark.cpython_only  # runs its own event loop (see tests/core/test_audit_batching.py)
def test_every_rehearsed_post_is_accepted() -> None:
    """A letter shape gone stale (a field the contract renamed) would make the rehearsal run
    the refusal path instead of the post's: each of the posts must be ``ok``."""
    assert asyncio.run(rehearse_posts()) == REHEARSED_POSTS
    assert asyncio.run(rehearse_posts(1)) == 1


@pytest.mark.cpython_only
def test_the_rehearsal_leaves_nothing_in_the_host_that_settles() -> None:
    """The host's projects, audit and mailboxes are as they were before ``after_ready``;
    ``settled`` is called once, after the rehearsal."""
    harness = HostHarness()
    made = harness.ok("project.create", name="Kept")["project"]["id"]
    before = dict(harness.sink.records)
    settled: list[bool] = []
    rehearsed: list[int] = []

    async def rehearse() -> None:
        rehearsed.append(await rehearse_posts())

    async def settle() -> None:
        await harness.host.after_ready(lambda: settled.append(True), rehearse=rehearse)
        for _ in range(5):  # the done callback's turn
            await asyncio.sleep(0)

    asyncio.run(settle())
    assert rehearsed == [REHEARSED_POSTS] and settled == [True]
    assert harness.sink.records == before  # no audit record of a rehearsed post
    listed = harness.ok("project.list")["projects"]
    assert [p["id"] for p in listed] == [made]
    assert harness.ok("mailbox.read", project=made)["letters"] == []
