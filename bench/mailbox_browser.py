"""Mailbox post latency at a small and a large mailbox, in CPython and through the browser.

The mailboxes are filled by :class:`bench.mailbox_bench.Bench` (the real post path over the
in-memory adapters, CPython), which also gives the CPython figures (core post and the whole
``mission.post`` through the dispatcher, µs). The same segment files are then written into an
OPFS project named like the bench brain (segments only: an old mailbox without its index), and
``mission.post`` is timed from the page (ms): the first post (``rebuild_post_ms``: the host's
one full read of the mailbox, which writes the persisted index), then, after a reload (a fresh
host), the first post again (``first_post_ms``: the index checked and used), then ``runs``
blocks of
``count`` posts, each extending a randomly chosen mission's head (letters computed ahead with
:func:`core.missions.letters.letter_id`, so every post passes the head check).

What the issue's row divides (``mailbox_first_post_large_vs_post_small_browser``): the first
post into the large mailbox after the reload — but on a host that has already answered the
small mailbox's first post and its blocks (sizes run in order), so it pays the large
project's own first use, not the host's — over the median of the small mailbox's block
medians (a warm host's steady post). So that a fresh host's first post is measured too, each
size then gets two more reloads: a post right after ``ready`` (``fresh_first_post_ms``: the
host's first call of any kind that touches a mailbox, while the background warm-up may still
run) and one after :data:`IDLE_MS` of idle (``fresh_first_post_idle_ms``), and a third once
the worker has posted ``settled`` (``fresh_first_post_settled_ms``: its late imports and the
mailboxes' warm-up done — issue 34; ``settled_wait_ms`` is how long that took after ``ready`` —
what a person pays who reloads and then acts; :data:`SETTLED_RUNS` reloads, each its own
first post, the median kept and every value reported: one post in about 110 at 100,000
letters starts a new segment and rewrites the index, O(letters), whoever posts it — a single
sample landed on that post in the default run, so it measured the roll, not the reload). That
third, over the small mailbox's steady post, is the issue-34 row
``mailbox_fresh_host_settled_first_post_large_vs_post_small_browser`` (goal ≤ 3). Beside it,
like for like, the same settled first post into the large mailbox over the one into the small
(``mailbox_fresh_host_settled_first_post_large_vs_settled_small_browser``): what the large
mailbox adds, apart from what any reload's first post pays. Last, the floor under that row
(:mod:`bench.post_floor`, ``mailbox_fresh_post_floor_browser``, information): a bare page's
first post-shaped storage steps after a reload over the same steps steady.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.mailbox_bench import BRAIN, Bench, summary
from bench.post_floor import measure_floor
from bench.site import BenchSite
from bench.stats import ratio, runs
from core.missions.letters import MissionLetter, letter_id, sha12
from core.missions.mailbox import MAILBOX_DIR

__all__ = ["IDLE_MS", "SETTLED_RUNS", "measure"]

IDLE_MS = 3000
"""How long the page waits after ``ready`` before ``fresh_first_post_idle_ms``."""
SETTLE_S = 180
SETTLED_RUNS = 3
"""Reloads for ``fresh_first_post_settled_ms``, each a fresh host's first post (the median)."""
FLOOR_WAIT_MAX_MS = 5000
"""The post floor page waits after ``ready`` as long as the host took to settle, at most this."""
"""The longest wait for ``settled`` before ``fresh_first_post_settled_ms``."""


def _wait_settled(profile: Profile) -> int:
    """Wait (≤ :data:`SETTLE_S`) until the worker posted ``settled`` (its late imports and the
    mailboxes' warm-up are done); the ms waited after ``ready`` was seen."""
    started = time.monotonic()
    while time.monotonic() - started < SETTLE_S and "settled" not in profile.marks():
        time.sleep(0.05)
    return round((time.monotonic() - started) * 1000)


def _mailbox_files(bench: Bench) -> list[tuple[str, bytes]]:
    node: Any = bench.files.tree
    for part in MAILBOX_DIR:
        node = node[part]
    return [("/".join((*MAILBOX_DIR, name)), data) for name, data in sorted(node.items())]


def _letters(bench: Bench, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        mission = rng.choice(bench.missions)
        body = bench._next(mission)
        out.append(body)
        content = letter_id(MissionLetter.model_validate(body))
        bench.heads[mission] = (body["mission_seq"], sha12(content))
    return out


def measure(
    playwright: Playwright, site: BenchSite, sizes: tuple[int, ...], run_count: int, count: int
) -> dict:
    """Run the mailbox comparison (see module docstring)."""
    cpython: dict[str, Any] = {}
    posts: dict[int, list[list[dict[str, Any]]]] = {}
    firsts: dict[int, dict[str, Any]] = {}
    rebuild_posts: dict[int, dict[str, Any]] = {}
    fresh: dict[int, list[dict[str, Any]]] = {}
    for size in sizes:
        bench = Bench(size, brain=f"{BRAIN} {size}")
        box, opened = bench.open_mailbox()
        bench.core_latencies(box, 100)
        core = summary(bench.core_latencies(box, 500))
        bench.host_latencies(100)
        host_post = summary(bench.host_latencies(500))
        cpython[str(size)] = {"open_s": round(opened, 3), "core_post": core, "host_post": host_post}
        site.add_project(f"mailbox-{size}", _mailbox_files(bench))
        rebuild_posts[size] = _letters(bench, 1, seed=size + 1000)[0]
        firsts[size] = _letters(bench, 1, seed=size)[0]
        posts[size] = [_letters(bench, count, seed=size + 1 + r) for r in range(run_count)]
        fresh[size] = _letters(bench, 2 + SETTLED_RUNS, seed=size + 2000)

    browser: dict[str, Any] = {}
    with Profile(playwright) as profile:
        profile.goto(site.url)
        profile.wait_status()
        ids = {
            size: host.ok(profile, "project.create", {"name": f"{BRAIN} {size}"})["project"]["id"]
            for size in sizes
        }
        profile.open_tools(site.url)
        for size in sizes:
            profile.evaluate(
                "([n, id]) => window.benchPopulate(n, id)", [f"mailbox-{size}", ids[size]]
            )
        profile.goto(site.url)
        profile.wait_status()
        rebuilds = {}
        for size in sizes:
            agent = {"project": ids[size], "agent_id": "hand-1"}
            rebuilds[size] = host.timed_sequence(
                profile, "mission.post", [{**agent, "letter": rebuild_posts[size]}]
            )[0]
        profile.goto(site.url)  # a fresh host: the first post now finds the persisted index
        profile.wait_status()
        for size in sizes:
            agent = {"project": ids[size], "agent_id": "hand-1"}
            first = host.timed_sequence(
                profile, "mission.post", [{**agent, "letter": firsts[size]}]
            )
            blocks = [
                host.timed_sequence(profile, "mission.post", [{**agent, "letter": x} for x in b])
                for b in posts[size]
            ]
            medians = [statistics.median(b) for b in blocks]
            browser[str(size)] = {
                "rebuild_post_ms": round(rebuilds[size], 1),
                "first_post_ms": round(first[0], 1),
                "post_median_ms": runs(medians, 3),
                "posts_per_block": count,
            }
        for size in sizes:  # a fresh host's first post: right after ready, then after idle
            agent = {"project": ids[size], "agent_id": "hand-1"}
            settled: list[float] = []
            waits: list[int] = []
            plan: list[tuple[str, int | None]] = [
                ("fresh_first_post_ms", 0),
                ("fresh_first_post_idle_ms", IDLE_MS),
                *[("fresh_first_post_settled_ms", None)] * SETTLED_RUNS,
            ]
            for (key, idle), letter in zip(plan, fresh[size], strict=True):
                profile.goto(site.url)
                profile.wait_status()
                if idle is None:  # the host's late imports done (the worker's `settled`)
                    waits.append(_wait_settled(profile))
                elif idle:
                    profile.page.wait_for_timeout(idle)
                took = host.timed_sequence(profile, "mission.post", [{**agent, "letter": letter}])
                if idle is None:
                    settled.append(took[0])
                else:
                    browser[str(size)][key] = round(took[0], 1)
            browser[str(size)]["settled_wait_ms"] = max(waits)
            browser[str(size)]["fresh_first_post_settled_runs_ms"] = [round(t, 1) for t in settled]
            browser[str(size)]["fresh_first_post_settled_ms"] = round(statistics.median(settled), 1)
        errors = list(profile.console_errors)
        floor = measure_floor(  # the platform's own fresh page under a post's storage steps
            profile,
            site,
            reloads=SETTLED_RUNS,
            wait_ms=min(FLOOR_WAIT_MAX_MS, browser[str(sizes[-1])]["settled_wait_ms"]),
            blocks=run_count,
            count=count,
        )
    small, large = str(sizes[0]), str(sizes[-1])
    b_ratio = ratio(
        browser[large]["post_median_ms"]["median"], browser[small]["post_median_ms"]["median"]
    )
    c_ratio = ratio(
        cpython[large]["host_post"]["median_us"], cpython[small]["host_post"]["median_us"]
    )
    steady = browser[small]["post_median_ms"]["median"]
    f_ratio = ratio(browser[large]["first_post_ms"], steady)
    goals = {
        "mailbox_first_post_large_vs_post_small_browser": {
            "sizes": [int(large), int(small)],
            "figure_ms": [
                browser[large]["first_post_ms"],
                browser[small]["post_median_ms"]["median"],
            ],
            "ratio": f_ratio,
            "goal": "<= 3",
            "met": f_ratio <= 3,
        },
        "mailbox_fresh_host_first_post_large_vs_post_small_browser": {
            "sizes": [int(large), int(small)],
            "figure_ms": [
                browser[large]["fresh_first_post_ms"],
                browser[large]["fresh_first_post_idle_ms"],
                steady,
            ],
            "ratio": ratio(browser[large]["fresh_first_post_ms"], steady),
            "ratio_after_idle": ratio(browser[large]["fresh_first_post_idle_ms"], steady),
            "goal": "<= 3 (not the issue's row: a fresh host's first call, see module docstring)",
            "met": ratio(browser[large]["fresh_first_post_ms"], steady) <= 3,
        },
        "mailbox_fresh_host_settled_first_post_large_vs_post_small_browser": {
            "sizes": [int(large), int(small)],
            "figure_ms": [browser[large]["fresh_first_post_settled_ms"], steady],
            "ratio": ratio(browser[large]["fresh_first_post_settled_ms"], steady),
            "goal": "<= 3",
            "met": ratio(browser[large]["fresh_first_post_settled_ms"], steady) <= 3,
        },
        # like for like (issue 34): the same fresh, settled first post at both sizes — what
        # the large mailbox adds to a reload's first post, apart from what every reload's
        # first post pays (the row above keeps its strict denominator, a steady post)
        "mailbox_fresh_host_settled_first_post_large_vs_settled_small_browser": {
            "sizes": [int(large), int(small)],
            "figure_ms": [
                browser[large]["fresh_first_post_settled_ms"],
                browser[small]["fresh_first_post_settled_ms"],
            ],
            "ratio": ratio(
                browser[large]["fresh_first_post_settled_ms"],
                browser[small]["fresh_first_post_settled_ms"],
            ),
            "goal": "<= 3 (like for like; the issue's row is the one over a steady post)",
            "met": ratio(
                browser[large]["fresh_first_post_settled_ms"],
                browser[small]["fresh_first_post_settled_ms"],
            )
            <= 3,
        },
        # the floor under the row above (bench/post_floor.py): a bare page's first post-shaped
        # storage steps after a reload over the same steps steady — what a fresh page costs the
        # platform before any code of ours runs
        "mailbox_fresh_post_floor_browser": {
            "figure_ms": [floor["fresh_first_ms"], floor["steady_ms"]["median"]],
            "ratio": floor["ratio"],
            "goal": "information (the platform's own fresh page under a post's storage steps)",
            "met": None,
        },
        "mailbox_post_large_vs_small_browser": {
            "sizes": [int(large), int(small)],
            "ratio": b_ratio,
            "goal": "<= 1.2",
            "met": b_ratio <= 1.2,
        },
        "mailbox_post_large_vs_small_cpython": {
            "sizes": [int(large), int(small)],
            "ratio": c_ratio,
            "goal": "<= 1.2",
            "met": c_ratio <= 1.2,
        },
    }
    return {
        "figures": {
            "browser": browser,
            "cpython": cpython,
            "post_floor": floor,
            "console_errors": errors[:10],
        },
        "goals": goals,
    }
