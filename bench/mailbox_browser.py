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
"""

from __future__ import annotations

import random
import statistics
from typing import Any

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.mailbox_bench import BRAIN, Bench, summary
from bench.site import BenchSite
from bench.stats import ratio, runs
from core.missions.letters import MissionLetter, letter_id, sha12
from core.missions.mailbox import MAILBOX_DIR

__all__ = ["measure"]


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
        errors = list(profile.console_errors)
    small, large = str(sizes[0]), str(sizes[-1])
    b_ratio = ratio(
        browser[large]["post_median_ms"]["median"], browser[small]["post_median_ms"]["median"]
    )
    c_ratio = ratio(
        cpython[large]["host_post"]["median_us"], cpython[small]["host_post"]["median_us"]
    )
    f_ratio = ratio(browser[large]["first_post_ms"], browser[small]["post_median_ms"]["median"])
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
        "figures": {"browser": browser, "cpython": cpython, "console_errors": errors[:10]},
        "goals": goals,
    }
