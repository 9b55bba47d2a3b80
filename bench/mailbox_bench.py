"""Mailbox post latency at 100 and at 100,000 letters, over the in-memory adapters.

Run: ``python -m bench.mailbox_bench`` (or ``python bench/mailbox_bench.py``). Prints, for each
size, the time to open the mailbox once (the one full read), and the latency of posting a letter
(median, mean, p95) two ways: the core post (:func:`core.missions.posting.post_mission_letter`) and
the whole host-protocol call (``mission.post`` through the dispatcher, audit included). Then the
ratio of the medians, 100,000 over 100; the goal is ≤ 1.2 (seed 004 §2c: a post is O(1) in the
mailbox's length). This is a script, never a timed test.

The mailbox is filled with the real post path: missions of :data:`CHAIN` letters each, every
letter extending its mission's head. Measured posts extend randomly chosen missions' heads, so
the tail segment fills and rolls over during the measurement exactly as in use.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.audit import AuditLog
from core.host.context import HostContext
from core.host.pipeline import Host
from core.memory.adapters import (
    FixedClock,
    MemoryAuditKey,
    MemoryAuditSink,
    MemoryHostState,
    MemoryProjectRoots,
    SeededRandomness,
)
from core.missions.letters import sha12
from core.missions.mailbox import Mailbox
from core.missions.posting import post_mission_letter

T = TypeVar("T")
SIZES = (100, 100_000)
CHAIN = 10
MEASURED = 2000
BRAIN = "Bench brain"


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits on real I/O (the in-memory ports never do)."""
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


def letter(
    mission: str, seq: int, prev: str | None, salt: int, brain: str = BRAIN
) -> dict[str, Any]:
    phases = ("judging", "executing", "gate", "review")
    return {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission,
        "mission_seq": seq,
        "prev_letter_id": prev,
        "block_id": "sb_bench",
        "brain_ref": brain,
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": phases[seq % len(phases)],
        "verdict": None,
        "tokens_total": salt,
        "started_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }


class Bench:
    """A host with one project whose mailbox holds ``size`` letters; ``brain`` is the project's
    name (the letters' ``brain_ref``): two projects of one host cannot share a name."""

    def __init__(self, size: int, brain: str = BRAIN) -> None:
        self.brain = brain
        clock = FixedClock()
        state = MemoryHostState()
        self.ctx = HostContext(
            roots=MemoryProjectRoots(),
            state=state,
            audit=AuditLog(MemoryAuditSink(), clock, key=MemoryAuditKey(), state=state),
            clock=clock,
            random=SeededRandomness(),
        )
        self.host = Host(self.ctx)
        self.project = drive(self.ctx.catalog.create(brain)).id
        self.heads: dict[str, tuple[int, str]] = {}
        self.salt = 0
        self.rng = random.Random(size)
        self.n = 0
        missions = max(1, size // CHAIN)
        self.missions = [f"msn_{i:012x}" for i in range(missions)]
        files = drive(self.ctx.roots.open(self.project))
        box = drive(Mailbox.open(files))
        for i in range(size):
            self._core_post(box, self.missions[i % missions])
        self.files = files

    def _next(self, mission: str) -> dict[str, Any]:
        seq, prev = self.heads.get(mission, (0, None))
        self.salt += 1
        return letter(mission, seq + 1, prev, self.salt, self.brain)

    def _record(self, mission: str, seq: int, content_id: str) -> None:
        self.heads[mission] = (seq, sha12(content_id))

    def _core_post(self, box: Mailbox, mission: str) -> None:
        body = self._next(mission)
        posted = drive(
            post_mission_letter(
                box,
                body,
                agent_id="hand-1",
                brain=self.brain,
                store=None,
                now_ms=0,
            )
        )
        assert not posted.duplicate
        self._record(mission, posted.letter.mission_seq, posted.letter_id)

    def open_mailbox(self) -> tuple[Mailbox, float]:
        """Open the mailbox from storage (the one full read); seconds taken."""
        start = time.perf_counter()
        box = drive(Mailbox.open(self.files))
        return box, time.perf_counter() - start

    def core_latencies(self, box: Mailbox, count: int) -> list[float]:
        """Seconds per core post, extending random missions' heads."""
        out = []
        for _ in range(count):
            mission = self.rng.choice(self.missions)
            start = time.perf_counter()
            self._core_post(box, mission)
            out.append(time.perf_counter() - start)
        return out

    def host_latencies(self, count: int) -> list[float]:
        """Seconds per ``mission.post`` through the dispatcher (audit included)."""
        out = []
        for _ in range(count):
            mission = self.rng.choice(self.missions)
            body = self._next(mission)
            self.n += 1
            message = json.dumps(
                {
                    "v": 1,
                    "id": f"b{self.n}",
                    "op": "mission.post",
                    "args": {"project": self.project, "agent_id": "hand-1", "letter": body},
                }
            )
            start = time.perf_counter()
            answer, _ = drive(self.host.handle(message))
            out.append(time.perf_counter() - start)
            result = json.loads(answer)
            assert result["ok"], result
            self._record(mission, body["mission_seq"], result["result"]["letter_id"])
        return out


def summary(samples: list[float]) -> dict[str, float]:
    """Median, mean and p95 in microseconds."""
    ordered = sorted(samples)
    return {
        "median_us": statistics.median(ordered) * 1e6,
        "mean_us": statistics.fmean(ordered) * 1e6,
        "p95_us": ordered[int(0.95 * (len(ordered) - 1))] * 1e6,
    }


def main() -> dict[str, Any]:
    """Run the benchmark, print the figures, and return them."""
    results: dict[int, dict[str, Any]] = {}
    for size in SIZES:
        fill_start = time.perf_counter()
        bench = Bench(size)
        fill = time.perf_counter() - fill_start
        box, opened = bench.open_mailbox()
        bench.core_latencies(box, 200)  # warm-up
        core = summary(bench.core_latencies(box, MEASURED))
        # the host's first call opens its own cached mailbox (the one full read): warm-up too
        bench.host_latencies(200)
        host = summary(bench.host_latencies(MEASURED))
        results[size] = {"fill_s": fill, "open_s": opened, "core": core, "host": host}
        print(
            f"{size:>7} letters  fill {fill:7.2f} s  open {opened:6.3f} s  "
            f"core post median {core['median_us']:7.1f} µs (mean {core['mean_us']:7.1f}, "
            f"p95 {core['p95_us']:7.1f})  host post median {host['median_us']:7.1f} µs "
            f"(mean {host['mean_us']:7.1f}, p95 {host['p95_us']:7.1f})"
        )
    small, large = results[SIZES[0]], results[SIZES[-1]]
    ratios = {
        "core": large["core"]["median_us"] / small["core"]["median_us"],
        "host": large["host"]["median_us"] / small["host"]["median_us"],
    }
    print(
        f"ratio {SIZES[-1]:,} / {SIZES[0]:,} letters (medians): core {ratios['core']:.2f}, "
        f"host {ratios['host']:.2f}  (goal <= 1.2)"
    )
    return {"results": results, "ratios": ratios}


if __name__ == "__main__":
    main()
