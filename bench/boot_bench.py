"""Boot: navigation → host ready, against a bare Pyodide boot of the same files (SPEC §2).

Each run opens two fresh profiles (order alternating between runs): one loads
``bench/bare.html`` (a module worker that runs ``loadPyodide`` from the site's ``pyodide/`` and
nothing else), one loads the site. In each, the first load is **cold** (empty profile) and
the tab is then reloaded ``reloads`` times; the last reload is **warm** (the browser's caches
and, once registered, the service worker are in play exactly as for a returning user). Every
reload's figure is kept (``*_reloads_ms``): Chromium's compiled-Wasm cache settles over the
first few loads (the second reload is often the slowest — V8 then recompiles the hot module
for its cache), so the warm figure is the last of ``reloads`` (4 by default).

Figures are ms since navigation, read in the page when the worker's ``ready`` message arrived.
For the host, the arrival of each boot stage is kept too (``lock``, ``runtime``, ``packages``,
``host``, ``ready``) — where the time goes — and ``drawn``: the page's status says Ready, which
it does once the first screen (the projects) is drawn (issue 34).
"""

from __future__ import annotations

import statistics
from typing import Any

from playwright.sync_api import Playwright

from bench.browser import Profile
from bench.site import BenchSite
from bench.stats import ratio, runs

__all__ = ["measure"]

STAGES = ("boot:lock", "boot:runtime", "boot:packages", "boot:host", "ready", "drawn")


def _one(playwright: Playwright, url: str, reloads: int) -> tuple[list[dict[str, float]], list]:
    loads = []
    with Profile(playwright) as profile:
        profile.goto(url)
        profile.wait_status()
        loads.append(profile.marks())
        for _ in range(reloads):
            profile.reload()
            profile.wait_status()
            loads.append(profile.marks())
        errors = list(profile.console_errors)
    return loads, errors


def _phases(loads: list[dict[str, float]]) -> dict[str, float]:
    """Median arrival time of each boot stage (ms since navigation)."""
    out = {}
    for stage in STAGES:
        values = [m[stage] for m in loads if stage in m]
        if values:
            out[stage.removeprefix("boot:")] = round(statistics.median(values), 1)
    return out


def _per_reload(rows: list[list[float]]) -> list[float]:
    """Median over runs of the 1st, 2nd, ... reload (ms)."""
    return [round(statistics.median(col), 1) for col in zip(*rows, strict=True)]


def measure(playwright: Playwright, site: BenchSite, run_count: int, reloads: int = 4) -> dict:
    """Run the boot comparison; return figures and ratios (see module docstring)."""
    pages = {"bare": site.url + "bench/bare.html", "host": site.url}
    cold: dict[str, list[float]] = {"bare": [], "host": []}
    first_reload: dict[str, list[float]] = {"bare": [], "host": []}
    by_reload: dict[str, list[list[float]]] = {"bare": [], "host": []}
    warm: dict[str, list[float]] = {"bare": [], "host": []}
    host_cold_marks: list[dict[str, float]] = []
    host_warm_marks: list[dict[str, float]] = []
    errors: list[str] = []
    for run in range(run_count):
        order = ("bare", "host") if run % 2 == 0 else ("host", "bare")
        for kind in order:
            loads, errs = _one(playwright, pages[kind], reloads)
            errors.extend(errs)
            cold[kind].append(loads[0]["ready"])
            first_reload[kind].append(loads[min(1, len(loads) - 1)]["ready"])
            warm[kind].append(loads[-1]["ready"])
            by_reload[kind].append([m["ready"] for m in loads[1:]])
            if kind == "host":
                host_cold_marks.append(loads[0])
                host_warm_marks.append(loads[-1])
    figures: dict[str, Any] = {
        "bare_cold_ms": runs(cold["bare"]),
        "bare_warm_ms": runs(warm["bare"]),
        "bare_first_reload_ms": runs(first_reload["bare"]),
        "host_cold_ms": runs(cold["host"]),
        "host_warm_ms": runs(warm["host"]),
        "host_first_reload_ms": runs(first_reload["host"]),
        "bare_reloads_ms": _per_reload(by_reload["bare"]),
        "host_reloads_ms": _per_reload(by_reload["host"]),
        "host_cold_stages_ms": _phases(host_cold_marks),
        "host_warm_stages_ms": _phases(host_warm_marks),
        "reloads": reloads,
        "console_errors": errors[:10],
    }
    med = {k: statistics.median(v) for k, v in cold.items()}
    med_warm = {k: statistics.median(v) for k, v in warm.items()}
    goals = {
        "boot_cold_vs_bare_cold": {
            "ratio": ratio(med["host"], med["bare"]),
            "goal": "<= 1.15",
            "met": med["host"] <= 1.15 * med["bare"],
        },
        "boot_warm_vs_bare_warm": {
            "ratio": ratio(med_warm["host"], med_warm["bare"]),
            "goal": "<= 1.15",
            "met": med_warm["host"] <= 1.15 * med_warm["bare"],
        },
        "boot_warm_vs_cold": {
            "ratio": ratio(med_warm["host"], med["host"]),
            "goal": "<= 0.5",
            "met": med_warm["host"] <= 0.5 * med["host"],
        },
    }
    return {"figures": figures, "goals": goals}
