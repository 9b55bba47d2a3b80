"""Project open: time and worker memory by file count and content bytes.

**Open.** For each case (file count, content bytes) a project is created through the host and
filled straight into OPFS by ``bench/tools.html`` (see :mod:`bench.site`). Then, per case, the
site is loaded afresh (a new host, warmed by one ``project.list``), the host worker's memory is
read, and "open" — what the page does when a person opens a project: ``project.open`` then
``file.list`` of the root — is timed ``repeat`` times in the page (ms, each part kept too; the
first open also reads the manifest, later ones find the project remembered); the worker's
memory is read again after. The goal's ratio (most files / fewest, at the smallest content)
comes from one more host that opens the two projects in turn, ``runs × repeat ×`` :data:`TURNS`
times each after each one's first open, so that both meet the same load (separate page loads
differed by more than the ratio measures: 10 files took 46.5 ms in one run and 84.8 ms in the
next). One open takes 3–18 ms here, most of it the same for both (``project.open``'s durable
audit commit), and the two differ by well under a millisecond: with 25 turns the medians moved
±0.1 in ratio between runs of the same code (1.00–1.13), so the goal's two cases take 200
turns each (about 4 s).
Memory comes from
``host.info`` (the Wasm memory — Pyodide's heap, which never shrinks, so "after" is also a
peak) and CDP on the host worker (JS heap, and ArrayBuffers outside the Wasm memory).

**Export** is its own section now: :mod:`bench.export_bench`.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.site import BenchSite, layout_files
from bench.stats import ratio, runs

__all__ = ["measure"]

MB = 1_000_000
HOST_WORKER = "worker/host.mjs"
MEMORY_KEYS = ("wasm_memory_bytes", "js_heap_used_bytes", "backing_store_bytes")
TURNS = 8
"""The goal's two cases are opened ``runs × repeat × TURNS`` times each, taking turns."""

OPEN = """
async ([project, repeat]) => {
  const out = [];
  for (let i = 0; i < repeat; i++) {
    const start = performance.now();
    await window.voicebox.host.call("project.open", { project });
    const opened = performance.now();
    const listing = await window.voicebox.host.call("file.list", { project, folder: "" });
    const end = performance.now();
    out.push({ ms: end - start, open_ms: opened - start, list_ms: end - opened,
               entries: listing.result.entries.length });
  }
  return out;
}
"""


def _case_name(files: int, total: int) -> str:
    return f"open-{files}-files-{total // 1000}kB"


def _memory(profile: Profile, gc: bool = True) -> dict[str, int]:
    """The host worker's memory, bytes: its Wasm memory (``host.info``) and JS heap (CDP)."""
    runtime = host.ok(profile, "host.info").get("runtime") or {}
    return {
        "wasm_memory_bytes": int(runtime.get("wasm_memory_bytes") or 0),
        **profile.worker_memory(HOST_WORKER, gc=gc),
    }


def measure(
    playwright: Playwright,
    site: BenchSite,
    run_count: int,
    cases: list[tuple[int, int]],
    repeat: int = 5,
) -> dict:
    """Run the open measurements (see module docstring)."""
    names = {}
    for files, total in cases:
        name = _case_name(files, total)
        names[(files, total)] = name
        site.add_project(name, layout_files(files, total))
    open_figures: dict[str, Any] = {}
    with Profile(playwright) as profile:
        profile.goto(site.url)
        profile.wait_status()
        ids = {}
        for key, name in names.items():
            ids[key] = host.ok(profile, "project.create", {"name": name})["project"]["id"]
        profile.open_tools(site.url)
        populated = {}
        for key, name in names.items():
            populated[name] = profile.evaluate(
                "([n, id]) => window.benchPopulate(n, id)", [name, ids[key]]
            )

        for (files, total), name in names.items():
            profile.goto(site.url)
            profile.wait_status()
            host.ok(profile, "project.list")  # the host's first call pays one-time costs
            before = _memory(profile)
            samples = profile.evaluate(OPEN, [ids[(files, total)], repeat])
            after = _memory(profile)
            open_figures[name] = {
                "files": files,
                "content_bytes": total,
                "root_entries": samples[0]["entries"],
                "first_open_ms": round(samples[0]["ms"], 2),
                "open_ms": runs([s["ms"] for s in samples], 2),
                "project_open_ms": runs([s["open_ms"] for s in samples], 2),
                "root_list_ms": runs([s["list_ms"] for s in samples], 2),
                "memory_before": before,
                "memory_after": after,
                "wasm_growth_bytes": after["wasm_memory_bytes"] - before["wasm_memory_bytes"],
                "js_heap_growth_bytes": after["js_heap_used_bytes"] - before["js_heap_used_bytes"],
                "populate_ms": round(populated[name]["ms"]),
                "populate_tries": populated[name].get("tries", 1),
            }

        small = [c for c in names if c[0] == min(f for f, _ in names)]
        large = [c for c in names if c[0] == max(f for f, _ in names)]
        fewest = min(small, key=lambda c: c[1])
        most = min(large, key=lambda c: c[1])
        # the goal's two cases in one host, taking turns, so that both meet the same load
        profile.goto(site.url)
        profile.wait_status()
        host.ok(profile, "project.list")
        pair = [ids[most], ids[fewest]]
        profile.evaluate(OPEN, [pair[0], 1])  # each first open reads the manifest
        profile.evaluate(OPEN, [pair[1], 1])
        turns: dict[str, list[dict]] = {pair[0]: [], pair[1]: []}
        for _ in range(max(run_count, 1) * repeat * TURNS):
            for project in pair:
                turns[project].extend(profile.evaluate(OPEN, [project, 1]))
        errors = list(profile.console_errors)

    def parts(samples: list[dict]) -> dict[str, Any]:
        return {
            "open_ms": runs([s["ms"] for s in samples], 2),
            "project_open_ms": runs([s["open_ms"] for s in samples], 2),
            "root_list_ms": runs([s["list_ms"] for s in samples], 2),
        }

    in_turn = {names[most]: parts(turns[pair[0]]), names[fewest]: parts(turns[pair[1]])}
    t_large = in_turn[names[most]]["open_ms"]
    t_small = in_turn[names[fewest]]["open_ms"]
    goals: dict[str, Any] = {
        "open_most_vs_fewest_files": {
            "cases": [names[most], names[fewest]],
            "method": "the two cases opened in turn in one host, after each one's first open",
            "in_turn": in_turn,
            "ratio": ratio(t_large["median"], t_small["median"]),
            "goal": "<= 1.2",
            "met": t_large["median"] <= 1.2 * t_small["median"],
        }
    }
    by_count: dict[int, list[tuple[int, int]]] = {}
    for files, total in names:
        by_count.setdefault(files, []).append((files, total))
    for files, group in sorted(by_count.items()):
        if len(group) < 2:
            continue
        lo, hi = min(group, key=lambda c: c[1]), max(group, key=lambda c: c[1])
        grow = {
            names[c]: open_figures[names[c]]["wasm_growth_bytes"]
            + max(open_figures[names[c]]["js_heap_growth_bytes"], 0)
            for c in (lo, hi)
        }
        after_lo = sum(open_figures[names[lo]]["memory_after"][k] for k in MEMORY_KEYS)
        after_hi = sum(open_figures[names[hi]]["memory_after"][k] for k in MEMORY_KEYS)
        goals[f"open_memory_{files}_files_content_independent"] = {
            "cases": [names[hi], names[lo]],
            "content_ratio": ratio(hi[1], lo[1]),
            "memory_after_ratio": ratio(after_hi, after_lo),
            "growth_bytes": grow,
            "goal": "worker memory after open independent of content bytes (ratio <= 1.05)",
            "met": after_hi <= 1.05 * after_lo,
        }
    return {
        "figures": {"open": open_figures, "console_errors": errors[:10]},
        "goals": goals,
    }
