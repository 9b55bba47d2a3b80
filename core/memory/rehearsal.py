"""A reloaded host's first ``mission.post`` rehearsed before ``settled`` (issue 34, a fresh
host's first post).

A reload starts a new worker: every line of JavaScript and every WebAssembly function the post
path runs — Pyodide's interpreter paths, pydantic-core's validators, the pipeline's own — runs
there for the first time and starts in the engine's baseline tier; the first posts of a fresh
page were measured 20-40 ms slower than a warm page's for about ten posts, where the storage a
post uses accounts for about 9 (``bench/post_floor.py``: a bare page's first post-shaped storage
steps after a reload, 19 ms against 10 steady, quiet machine). So once the late imports are in
and the models built, the browser's host (``browser_host/main.py``, through
:meth:`core.host.pipeline.Host.after_ready`) makes :data:`REHEARSED_POSTS` ``mission.post``
calls through a throwaway host of its own over the in-memory adapters
(:mod:`core.memory.adapters`): the same pipeline, admission, validation, mailbox and audit code,
with no storage, no page, nothing kept. A person's call that arrives meanwhile is answered
between two rehearsed posts. Nothing the rehearsal does is seen: its host, project, mailbox and
audit live in memory and are dropped before the host freezes what its boot left alive.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.host.pipeline import Host
from core.json_bound import parse_json
from core.memory.adapters import FixedClock, SeededRandomness
from core.memory.host_context import memory_host_context
from core.missions.letters import SCHEMA, sha12

__all__ = ["REHEARSED_POSTS", "rehearse_posts"]

REHEARSED_POSTS = 30
"""Posts rehearsed before ``settled``: three missions, ten letters each (judging, then
executing)."""

_BRAIN = "rehearsal"
_MISSIONS = 3


def _letter(mission: str, seq: int, prev: str | None) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "mission_id": mission,
        "mission_seq": seq,
        "prev_letter_id": prev,
        "block_id": "sb_rehearsal",
        "brain_ref": _BRAIN,
        "seat": "hand",
        "runner_id": "rehearsal-1",
        "capability": "build-runner",
        "phase": "judging" if seq == 1 else "executing",
        "verdict": None,
        "tokens_total": seq,
        "started_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }


async def rehearse_posts(posts: int = REHEARSED_POSTS) -> int:
    """Make ``posts`` ``mission.post`` calls through a new in-memory host (module docstring),
    yielding to the event loop between two; return how many were posted (each ``ok``; the
    tests hold it equal to ``posts``, so a letter shape gone stale is seen). Never raises for a
    refusal (a refused rehearsal still ran the pipeline); raises only what the pipeline raises
    (a programming error)."""
    ctx = memory_host_context(FixedClock(), SeededRandomness())
    host = Host(ctx)
    project = (await ctx.catalog.create(_BRAIN)).id
    heads: dict[str, str] = {}
    posted = 0
    for i in range(posts):
        await asyncio.sleep(0)  # a person's call goes first
        mission = f"msn_{i % _MISSIONS:012x}"
        letter = _letter(mission, i // _MISSIONS + 1, heads.get(mission))
        args = {"project": project, "agent_id": "hand-1", "letter": letter}
        text = json.dumps({"v": 1, "id": f"rehearsal-{i}", "op": "mission.post", "args": args})
        answer, _ = await host.handle(text)
        got = parse_json(answer, what="A rehearsed answer")
        if got.get("ok"):
            posted += 1
            heads[mission] = sha12(got["result"]["letter_id"])
    return posted
