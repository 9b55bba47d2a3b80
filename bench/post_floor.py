"""The platform's own fresh-page cost under a ``mission.post`` (issue 34: "if a row's floor is
itself the limit, show the profile and say so with figures").

``bench/pages/postfloor.html`` starts a worker that loads the site's Pyodide (a page as fresh
and as heavy as the host's) and then answers each "post" with the storage steps a settled
host's post makes, from JavaScript with no Python: three reads through read-only sync access
handles opened then, two stats, the mailbox segment written atomically (``createWritable`` to a
temporary, moved over the segment) and one record added in a strict IndexedDB transaction.
:func:`measure_floor` times the first of them after each of ``reloads`` reloads (after waiting
``wait_ms``, as long as the host took to settle) and the median of ``blocks`` blocks of
``count`` in a row after a warm-up: their ratio is what a fresh page costs the platform's
storage alone, the floor under the host's row
``mailbox_fresh_host_settled_first_post_large_vs_post_small_browser``.
"""

from __future__ import annotations

import statistics
from typing import Any

from bench.browser import Profile
from bench.site import BenchSite
from bench.stats import ratio, runs

__all__ = ["measure_floor"]

PAGE = "bench/postfloor.html"
WARM_UP = 40
"""Posts made before the steady blocks (the host's blocks come after as many)."""


def _posts(profile: Profile, count: int) -> list[float]:
    return [float(x) for x in profile.evaluate("(n) => window.benchFloorPosts(n)", count)]


def measure_floor(
    profile: Profile, site: BenchSite, *, reloads: int, wait_ms: int, blocks: int, count: int
) -> dict[str, Any]:
    """``{"fresh_first_ms", "fresh_first_runs_ms", "steady_ms", "ratio"}`` (ms; ``steady_ms``
    as :func:`bench.stats.runs` gives it). Raises ``RuntimeError`` when the page fails."""
    url = site.url + PAGE
    profile.goto(url)
    if profile.wait_status() != "ready":
        raise RuntimeError(f"the post floor page failed: {profile.evaluate('() => __bench.error')}")
    _posts(profile, 3)  # its files and database made (first profile use), outside the figures
    firsts = []
    for _ in range(reloads):
        profile.goto(url)
        profile.wait_status()
        if wait_ms:
            profile.page.wait_for_timeout(wait_ms)
        firsts.append(_posts(profile, 1)[0])
    _posts(profile, WARM_UP)
    medians = [statistics.median(_posts(profile, count)) for _ in range(blocks)]
    steady = runs(medians, 3)
    first = round(statistics.median(firsts), 1)
    return {
        "fresh_first_ms": first,
        "fresh_first_runs_ms": [round(t, 1) for t in firsts],
        "steady_ms": steady,
        "wait_ms": wait_ms,
        "ratio": ratio(first, float(steady["median"])),
    }
