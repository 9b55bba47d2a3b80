"""Project open (time and worker memory by file count and content bytes) and export throughput.

**Open.** For each case (file count, content bytes) a project is created through the host and
filled straight into OPFS by ``bench/tools.html`` (see :mod:`bench.site`). Then, per case, the
site is loaded afresh (a new host, warmed by one ``project.list``), the host worker's memory is
read, and "open" — what the page does when a person opens a project: ``project.open`` then
``file.list`` of the root — is timed ``repeat`` times in the page (ms, each part kept too; the
first open also reads the manifest, later ones find the project remembered); the worker's
memory is read again after. Memory comes from
``host.info`` (the Wasm memory — Pyodide's heap, which never shrinks, so "after" is also a
peak) and CDP on the host worker (JS heap, and ArrayBuffers outside the Wasm memory).

**Export.** A mixed project (``bench.archive_bench.mixed_files``: text, incompressible binary,
zeros) of ``export_mb`` MB is exported with ``project.export`` from the page (chunks streamed to
the page), ``runs`` times, each timed in the page; the worker's memory is sampled every 200 ms
during the first export (peak extra = the growth of Wasm memory, JS heap and ArrayBuffers over
the figures before, summed). The baseline is CPython's ``zipfile`` (stored) on this machine writing
the same files, read from disk, to a zip on disk. Throughput is project bytes / s (MB = 10⁶).
The export hashes every byte twice (each file's sha256 for the manifest, the archive's sha256
for the summary) where ``zipfile`` only computes a crc32, so the section also measures sha256
and crc32 throughput in the host's Python and in CPython (``hash_limits``).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

from playwright.sync_api import Playwright

from bench import host
from bench.archive_bench import mixed_files
from bench.browser import Profile
from bench.site import BenchSite, layout_files
from bench.stats import ratio, runs

__all__ = ["measure"]

MB = 1_000_000
HOST_WORKER = "worker/host.mjs"
MEMORY_KEYS = ("wasm_memory_bytes", "js_heap_used_bytes", "backing_store_bytes")

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

EXPORT_START = """
([project]) => {
  window.__export = null;
  const start = performance.now();
  window.voicebox.host.call("project.export", { project }).then(
    (answer) => { window.__export = { ok: true, ms: performance.now() - start,
                                      size: answer.stream ? answer.stream.size : 0,
                                      result: answer.result }; },
    (err) => { window.__export = { ok: false, code: err.code, message: err.message }; });
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


LIMITS = """
import hashlib, json, time, zlib
data = bytes(range(256)) * 4096 * 16

def rate(fn):
    best = 1e9
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(len(data) / 1e6 / best, 1)

json.dumps({"sha256_mb_per_s": rate(lambda: hashlib.sha256(data).digest()),
            "crc32_mb_per_s": rate(lambda: zlib.crc32(data))})
"""


def _rate(fn: Any, size: int) -> float:
    best = 1e9
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(size / 1e6 / best, 1)


def _limits(profile: Profile, site: BenchSite) -> dict[str, Any]:
    """What bounds export speed: sha256 and crc32 throughput (MB/s) of the same 16 MiB in the
    host's Python (Pyodide, a lab worker booted like the host) and in CPython here."""
    profile.open_tools(site.url)
    inside = json.loads(profile.evaluate("(code) => window.benchLab(code)", LIMITS))
    data = bytes(range(256)) * 4096 * 16
    native = {
        "sha256_mb_per_s": _rate(lambda: hashlib.sha256(data).digest(), len(data)),
        "crc32_mb_per_s": _rate(lambda: zlib.crc32(data), len(data)),
    }
    return {"pyodide": inside, "cpython": native}


def _cpython_zipfile(site: BenchSite, name: str, run_count: int) -> dict[str, Any]:
    """CPython's zipfile (stored) writing the export project's files from disk to disk."""
    with tempfile.TemporaryDirectory(prefix="vbx-zip-") as tmp:
        src = Path(tmp) / "src"
        paths = []
        total = 0
        for path, data in site.project_files(name):
            target = src / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            paths.append(path)
            total += len(data)
        rates = []
        for _ in range(run_count):
            start = time.perf_counter()
            with zipfile.ZipFile(Path(tmp) / "out.zip", "w") as archive:
                for path in sorted(paths):
                    archive.write(src / path, path)
            rates.append(total / MB / (time.perf_counter() - start))
    return {"mb_per_s": runs(rates), "bytes": total}


def measure(
    playwright: Playwright,
    site: BenchSite,
    run_count: int,
    cases: list[tuple[int, int]],
    export_mb: float,
    repeat: int = 5,
) -> dict:
    """Run the open and export measurements (see module docstring)."""
    names = {}
    for files, total in cases:
        name = _case_name(files, total)
        names[(files, total)] = name
        site.add_project(name, layout_files(files, total))
    export_files = mixed_files(int(export_mb * MB), seed=3)
    export_info = site.add_project("export", sorted(export_files.items()))
    del export_files

    open_figures: dict[str, Any] = {}
    export_figures: dict[str, Any] = {}
    with Profile(playwright) as profile:
        profile.goto(site.url)
        profile.wait_status()
        ids = {}
        for key, name in [*names.items(), ("export", "export")]:
            ids[key] = host.ok(profile, "project.create", {"name": name})["project"]["id"]
        profile.open_tools(site.url)
        populated = {}
        for key, name in [*names.items(), ("export", "export")]:
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
            }

        profile.goto(site.url)
        profile.wait_status()
        base = _memory(profile)
        seconds = []
        peak = dict(base)
        samples_taken = 0
        for i in range(run_count):
            profile.evaluate(EXPORT_START, [ids["export"]])
            while True:
                if i == 0:
                    now = _memory(profile, gc=False)
                    samples_taken += 1
                    for key in peak:
                        peak[key] = max(peak[key], now[key])
                result = profile.evaluate("() => window.__export")
                if result is not None:
                    break
                profile.page.wait_for_timeout(200)
            if not result["ok"]:
                raise RuntimeError(f"export refused: {result}")
            seconds.append(result["ms"] / 1000)
        after = _memory(profile)
        rates = [export_info["bytes"] / MB / s for s in seconds]
        export_figures = {
            "project_files": export_info["files"],
            "project_bytes": export_info["bytes"],
            "archive_bytes": result["size"],
            "host_mb_per_s": runs(rates),
            "memory_before": base,
            "memory_peak_during_first": peak,
            "memory_after": after,
            "memory_samples": samples_taken,
            "peak_extra_bytes": max(peak["backing_store_bytes"] - base["backing_store_bytes"], 0)
            + max(peak["js_heap_used_bytes"] - base["js_heap_used_bytes"], 0),
        }
        export_figures["hash_limits"] = _limits(profile, site)
        errors = list(profile.console_errors)
    export_figures["cpython_zipfile"] = _cpython_zipfile(site, "export", run_count)

    small = [c for c in names if c[0] == min(f for f, _ in names)]
    large = [c for c in names if c[0] == max(f for f, _ in names)]
    fewest = min(small, key=lambda c: c[1])
    most = min(large, key=lambda c: c[1])
    t_small = open_figures[names[fewest]]["open_ms"]["median"]
    t_large = open_figures[names[most]]["open_ms"]["median"]
    goals: dict[str, Any] = {
        "open_most_vs_fewest_files": {
            "cases": [names[most], names[fewest]],
            "ratio": ratio(t_large, t_small),
            "goal": "<= 1.2",
            "met": t_large <= 1.2 * t_small,
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
    host_rate = statistics.median(rates)
    zip_rate = export_figures["cpython_zipfile"]["mb_per_s"]["median"]
    goals["export_vs_cpython_zipfile"] = {
        "ratio": ratio(host_rate, zip_rate),
        "goal": ">= 0.5",
        "met": host_rate >= 0.5 * zip_rate,
    }
    goals["export_peak_extra_memory"] = {
        "value_bytes": export_figures["peak_extra_bytes"],
        "goal": "<= 64 MiB",
        "met": export_figures["peak_extra_bytes"] <= 64 * 2**20,
    }
    return {
        "figures": {"open": open_figures, "export": export_figures, "console_errors": errors[:10]},
        "goals": goals,
    }
