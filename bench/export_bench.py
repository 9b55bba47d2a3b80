"""Export throughput and peak worker memory, against CPython's ``zipfile`` in the same run.

A mixed project (``bench.archive_bench.mixed_files``: text, incompressible binary, zeros) of
``export_mb`` MB is put straight into OPFS by ``bench/tools.html`` (see :mod:`bench.site`) and
exported with ``project.export`` from the page (chunks streamed to the page), ``runs`` times,
each timed in the page. The host worker's memory is sampled every 200 ms during the first
export: peak extra = the growth of the Wasm memory (``host.info``), the JS heap and the
ArrayBuffers outside the Wasm memory (CDP) over the figures before, summed — with the JS heap
and ArrayBuffers of the export's reader lanes (``worker/byte-lane.mjs``, workers the host
worker starts; issue 18, round five), summed over the lanes, counted the same way (there are
none before the first export, so all of theirs is extra). The baseline is
CPython's ``zipfile`` (stored) on this machine writing the same files, read from disk, to a
zip on disk, ``runs`` times, right after. Throughput is project bytes / s (MB = 10⁶).

The floor (issue 34) is a bare page reading the same OPFS files as fast as the platform
allows, hashing nothing and making no archive (``bench/pages/exportfloor-worker.mjs``): each
of :data:`FLOOR_STRATEGIES` — ``getFile().arrayBuffer()`` with 1, 4 or 16 reads in flight,
read-only sync access handles in 1 or 3 nested lanes — ``runs`` times right after the exports,
in the same profile (the host's page gone); the floor is the strategy with the best median
(``opfs_floor``), and the goal is the export's MB/s ≥ 0.8× the floor's; the ratio to CPython's
``zipfile`` is kept as information, and so is the same bare page doing what an archive must
besides reading — sha256 and crc32 of every byte, a Blob per 8 MiB posted to the page, in three
lanes (``with_export_work_mb_per_s``: the export lab's ``y-lanes-3``).

The hashed floor (issue 34): the same bare reads (read-only sync access handles in 2, 3 or 4
lanes, :data:`HASHED_STRATEGIES`) with every byte hashed as an archive must — crc32 (the zip's)
and sha256 (the manifest's, SPEC §10) — and nothing else. Where that hashing alone keeps the
bare page below 0.8× of the no-hash floor (on this machine's 2 cores: in one run of two,
docs/archives.md §4), the goal moves to it (:func:`floor_goals`): the export ≥ 0.8× the hashed
floor, the no-hash ratio reported beside.

The streamed download (issue 34): the export a person gets — the Projects surface's own
``exportProject`` (``page/ui/archive.mjs``) with the site's service worker controlling the page,
so the archive's bytes flow host worker → page → a one-time download URL into the saved file
(``page/download.mjs``) — timed from the start to the download's file complete on disk
(Playwright's ``download.path()``), ``runs`` times: ``host_mb_per_s`` and every floor ratio use
this figure. The Blob path (``project.export`` gathered into a Blob in the page, not saved) is
kept as information (``blob_mb_per_s``). The download path's own floor: a bare page streaming
the same number of bytes (a prepared 8 MiB buffer, copied per chunk; no reading, no hashing)
through the same one-time URL into a saved file (``bare_download_mb_per_s``); the Blob path
as a person got it before — gathered into a Blob, then saved from it — timed to the file on
disk the same way (``blob_saved_mb_per_s``: project bytes / s, as every figure); and the delivered
hashed floor: the hashed floor's bare reads and hashing in 3 or 4 lanes with every byte also
handed to the page and streamed into a download the same way, timed to the file on disk
(``delivered_floor``, :data:`DELIVERED_LANES`; ``bench/pages/tools.mjs`` benchDeliveredFloor) —
what a bare page doing exactly what the streamed export must do reaches. Beside it (round 41,
:data:`DELIVERED_KINDS`) the same bare page hashing nothing (floor (b), the platform's own limit
for an export a person gets: the platform-bound row ``export_vs_delivered_floor``, goal ≥ 0.8×,
:func:`delivered_goals`) and computing the zip's crc32 only (floor (c), information);
``hash_costs_mb_per_s`` says what each hash costs per MB in a lane like the export's.

``hash_limits`` records sha256 and crc32 throughput (MB/s) of the same 16 MiB in the host's
Python (Pyodide) and in CPython here: what bounded the export while its bytes went through
Python (before issue 18's byte path).
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

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Playwright

from bench import host
from bench.archive_bench import mixed_files
from bench.browser import Profile
from bench.site import BenchSite
from bench.stats import ratio, runs

__all__ = ["delivered_goals", "floor_goals", "measure"]

MB = 1_000_000
HOST_WORKER = "worker/host.mjs"
LANE_WORKER = "worker/byte-lane.mjs"
PEAK_KEYS = (
    "wasm_memory_bytes",
    "backing_store_bytes",
    "js_heap_used_bytes",
    "lanes_backing_store_bytes",
    "lanes_js_heap_used_bytes",
)
GOAL_RATIO = 0.6
FLOOR_GOAL_RATIO = 0.8
FLOOR_STRATEGIES = ("parallel-1", "parallel-4", "parallel-16", "sah-lanes-1", "sah-lanes-3")
HASHED_STRATEGIES = ("hash-lanes-2", "hash-lanes-3", "hash-lanes-4")
"""The hashed floor's strategies (issue 34): the best no-hash way of reading (read-only sync
access handles in nested lanes) with every byte also hashed as the archive must (crc32 and
sha256), in 2, 3 or 4 lanes; the best median is the hashed floor."""
PEAK_GOAL_BYTES = 64 * 2**20
DELIVERED_LANES = (3, 4)
"""The delivered floors' lane counts (issue 34); each floor's best median is that floor."""
DELIVERED_KINDS = ("deliver", "crc-deliver", "hash-deliver")
"""The delivered floors (issue 34, round 41), each a bare page's lanes reading the files and
handing every byte to the page, which streams it into a download: ``deliver`` hashes nothing
(the platform's own limit for an export a person gets: floor (b)), ``crc-deliver`` computes the
crc32 a zip of stored entries must carry (floor (c)), ``hash-deliver`` the crc32 and the
manifest's sha256 the export computes (the delivered hashed floor)."""

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

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""

STREAM_START = """
async ([project, name]) => {
  window.__stream = null;
  const { exportProject } = await import("./ui/archive.mjs");
  const box = document.createElement("div");
  const start = performance.now();
  exportProject(window.voicebox.app, { id: project, name }, box).then(
    (answer) => { window.__stream = answer
      ? { ok: true, ms: performance.now() - start, delivery: answer.delivery }
      : { ok: false, message: document.getElementById("alerts")?.innerText ?? "" }; },
    (err) => { window.__stream = { ok: false, message: String(err) }; });
}
"""

BLOB_SAVED_START = """
async ([project]) => {
  window.__stream = null;
  const { downloadBlob } = await import("./dom.mjs");
  const start = performance.now();
  window.voicebox.host.call("project.export", { project }).then(
    (answer) => { downloadBlob(answer.stream, "blob.zip");
                  window.__stream = { ok: true, ms: performance.now() - start }; },
    (err) => { window.__stream = { ok: false, message: String(err) }; });
}
"""

BARE_DOWNLOAD = """
async ([total]) => {
  window.__stream = null;
  const { streamedDownload } = await import("./download.mjs");
  const piece = crypto.getRandomValues(new Uint8Array(65536));
  const chunk = new Uint8Array(8 << 20);
  for (let at = 0; at < chunk.length; at += piece.length) chunk.set(piece, at);
  const start = performance.now();
  const saver = await streamedDownload("bare.bin");
  if (!saver) { window.__stream = { ok: false, message: "no streamed download" }; return; }
  for (let sent = 0; sent < total; sent += chunk.length)
    saver.write(chunk.slice(0, Math.min(chunk.length, total - sent)).buffer);
  saver.close();
  saver.saved.then((done) => { window.__stream = { ok: done, ms: performance.now() - start }; });
}
"""

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


def _memory(profile: Profile, gc: bool = True) -> dict[str, int]:
    """The host worker's memory, bytes: its Wasm memory (``host.info``) and JS heap (CDP); and
    its reader lanes' JS heaps summed (``lanes_…``, ``lane_workers``: how many there were)."""
    runtime = host.ok(profile, "host.info").get("runtime") or {}
    lanes = profile.workers_memory(LANE_WORKER, gc=gc)
    return {
        "wasm_memory_bytes": int(runtime.get("wasm_memory_bytes") or 0),
        **profile.worker_memory(HOST_WORKER, gc=gc),
        "lanes_js_heap_used_bytes": lanes["js_heap_used_bytes"],
        "lanes_js_heap_total_bytes": lanes["js_heap_total_bytes"],
        "lanes_backing_store_bytes": lanes["backing_store_bytes"],
        "lane_workers": lanes["workers"],
    }


def _rate(fn: Any, size: int) -> float:
    best = 1e9
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(size / 1e6 / best, 1)


def _limits(profile: Profile, site: BenchSite) -> dict[str, Any]:
    """sha256 and crc32 throughput (MB/s) of the same 16 MiB in the host's Python (a lab worker
    booted like the host), in the worker's JavaScript and in CPython here."""
    profile.open_tools(site.url)
    inside = json.loads(profile.evaluate("(code) => window.benchLab(code)", LIMITS))
    data = bytes(range(256)) * 4096 * 16
    native = {
        "sha256_mb_per_s": _rate(lambda: hashlib.sha256(data).digest(), len(data)),
        "crc32_mb_per_s": _rate(lambda: zlib.crc32(data), len(data)),
    }
    return {"pyodide": inside, "cpython": native}


def _opfs_floor(profile: Profile, site: BenchSite, pid: str, run_count: int) -> dict[str, Any]:
    """The bare page's reads of the export project's OPFS files (module docstring): MB/s per
    strategy over ``run_count`` runs, and the best strategy's name and median."""
    profile.open_tools(site.url)
    every = (*FLOOR_STRATEGIES, *HASHED_STRATEGIES)
    per: dict[str, list[float]] = {name: [] for name in every}
    seen: dict[str, Any] = {}
    for _ in range(run_count):
        seen = profile.evaluate("([id, s]) => window.benchExportFloor(id, s)", [pid, list(every)])
        for name, ms in seen["figures"].items():
            per[name].append(seen["bytes"] / MB / (ms / 1000))
    rates = {name: runs(values) for name, values in per.items()}
    plain = [name for name in FLOOR_STRATEGIES if name in rates]
    best = max(plain, key=lambda name: rates[name]["median"])
    hashed_best = max(HASHED_STRATEGIES, key=lambda name: rates[name]["median"])
    # information: the same files through what an archive must do besides reading them —
    # sha256 and crc32 of every byte, a Blob per 8 MiB posted to the page — in three lanes,
    # as the byte path does (the export lab's y-lanes-3, bench/pages/readlab-worker.mjs)
    worked = []
    for _ in range(run_count):
        lab = profile.evaluate("([id, c]) => window.benchReadLab(id, c)", [pid, ["y-lanes-3"]])
        worked.append(float(lab["y-lanes-3"]["mb_per_s"]))
    return {
        "files": seen.get("files"),
        "bytes": seen.get("bytes"),
        "mb_per_s": rates,
        "best": best,
        "best_mb_per_s": rates[best]["median"],
        "hashed_best": hashed_best,
        "hashed_mb_per_s": rates[hashed_best]["median"],
        "with_export_work_mb_per_s": runs(worked),
    }


def _wait_stream(profile: Profile, poll: Any = None) -> dict[str, Any]:
    """Poll ``window.__stream`` until set (calling ``poll()`` between looks)."""
    while True:
        if poll is not None:
            poll()
        done = profile.evaluate("() => window.__stream")
        if done is not None:
            return dict(done)
        profile.page.wait_for_timeout(100)


def _streamed(
    profile: Profile, pid: str, total: int, run_count: int, sample: Any
) -> dict[str, Any]:
    """The streamed download's runs (module docstring): each export from its start to its file
    complete on disk, and the bare page's streamed download of ``total`` bytes the same way.
    ``sample`` is called while the first export runs (the memory probe)."""
    try:
        profile.page.wait_for_function(CONTROLLED, timeout=60_000)
    except PlaywrightError:  # a page the service worker never took: not measured
        return {"measured": False, "why": "no service worker controls the page"}
    seconds: list[float] = []
    in_page: list[float] = []
    saved_bytes = 0
    delivery = ""
    for i in range(run_count):
        with profile.page.expect_download(timeout=300_000) as caught:
            start = time.perf_counter()
            profile.evaluate(STREAM_START, [pid, "export"])
        done = _wait_stream(profile, sample if i == 0 else None)
        download = caught.value
        path = download.path()  # waits until the file is complete on disk
        seconds.append(time.perf_counter() - start)
        if not done.get("ok"):
            raise RuntimeError(f"streamed export failed: {done}")
        in_page.append(float(done["ms"]) / 1000)
        delivery = str(done.get("delivery"))
        saved_bytes = Path(path).stat().st_size
        download.delete()
    # the Blob path as a person got it before (issue 34): gathered into a Blob, then saved from
    # it (page/dom.mjs downloadBlob), timed to the file on disk the same way
    blob_saved: list[float] = []
    for _ in range(run_count):
        with profile.page.expect_download(timeout=300_000) as caught:
            start = time.perf_counter()
            profile.evaluate(BLOB_SAVED_START, [pid])
            done = _wait_stream(profile)
            if not done.get("ok"):
                raise RuntimeError(f"Blob export failed: {done}")
        caught.value.path()
        blob_saved.append(total / MB / (time.perf_counter() - start))
        caught.value.delete()
    bare: list[float] = []
    for _ in range(run_count):
        with profile.page.expect_download(timeout=300_000) as caught:
            start = time.perf_counter()
            profile.evaluate(BARE_DOWNLOAD, [total])
        done = _wait_stream(profile)
        download = caught.value
        download.path()
        bare.append(total / MB / (time.perf_counter() - start))
        download.delete()
    return {
        "measured": True,
        "delivery": delivery,
        "archive_bytes": saved_bytes,
        "seconds_to_saved_file": [round(x, 3) for x in seconds],
        "seconds_in_page": [round(x, 3) for x in in_page],
        "bare_download_mb_per_s": runs(bare),
        "blob_saved_mb_per_s": runs(blob_saved),
        "bare_download_bytes": total,
    }


def _delivered_floor(profile: Profile, site: BenchSite, pid: str, run_count: int) -> dict:
    """The delivered floors (module docstring): for each of :data:`DELIVERED_KINDS`, MB/s per
    lane count over ``run_count`` runs, each to the downloaded file complete on disk, and the
    best median (``best``/``best_mb_per_s`` stay the hashed one's, as before round 41)."""
    profile.open_tools(site.url)
    try:
        profile.page.wait_for_function(CONTROLLED, timeout=60_000)
    except PlaywrightError:
        return {"measured": False, "why": "no service worker controls the tools page"}
    per: dict[str, list[float]] = {}
    for kind in DELIVERED_KINDS:
        for lanes in DELIVERED_LANES:
            per[f"{kind}-{lanes}"] = [
                _one_delivered(profile, pid, lanes, kind) for _ in range(run_count)
            ]
    figures = {name: runs(values) for name, values in per.items()}
    out: dict[str, Any] = {"measured": True, "mb_per_s": figures}
    for kind in DELIVERED_KINDS:
        mine = [name for name in figures if name.rsplit("-", 1)[0] == kind]
        best = max(mine, key=lambda name: figures[name]["median"])
        prefix = "" if kind == "hash-deliver" else f"{kind}_"
        out[f"{prefix}best"] = best
        out[f"{prefix}best_mb_per_s"] = figures[best]["median"]
    return out


def _one_delivered(profile: Profile, pid: str, lanes: int, kind: str) -> float:
    """One run of the delivered floor ``kind`` in ``lanes`` lanes on the tools page (controlled
    by the service worker), to the downloaded file complete on disk: MB/s."""
    with profile.page.expect_download(timeout=300_000) as caught:
        start = time.perf_counter()
        done = profile.evaluate(
            "([id, n, k]) => window.benchDeliveredFloor(id, n, k)", [pid, lanes, kind]
        )
        if not done.get("ok"):  # raised inside: no download to wait for
            raise RuntimeError(f"delivered floor failed: {done}")
    caught.value.path()
    elapsed = time.perf_counter() - start
    caught.value.delete()
    return int(done["bytes"]) / MB / elapsed


def _paired(profile: Profile, site: BenchSite, pid: str, total: int, run_count: int) -> dict:
    """The export and floor (b) in pairs (round 41): ``run_count`` times, one streamed export
    to its saved file on the host's page, then at once one ``deliver-3`` run on the tools page —
    each pair under the same load, so its ratio does not drift with the machine's (the other
    figures are measured phase by phase). MB/s of each, each pair's ratio and their median."""
    pairs = []
    for _ in range(run_count):
        profile.goto(site.url)
        profile.wait_status()
        try:
            profile.page.wait_for_function(CONTROLLED, timeout=60_000)
        except PlaywrightError:
            return {"measured": False, "why": "no service worker controls the page"}
        with profile.page.expect_download(timeout=300_000) as caught:
            start = time.perf_counter()
            profile.evaluate(STREAM_START, [pid, "export"])
        done = _wait_stream(profile)
        caught.value.path()
        export = total / MB / (time.perf_counter() - start)
        caught.value.delete()
        if not done.get("ok"):
            raise RuntimeError(f"streamed export failed: {done}")
        profile.open_tools(site.url)
        profile.page.wait_for_function(CONTROLLED, timeout=60_000)
        floor = _one_delivered(profile, pid, 3, "deliver")
        pairs.append({"export": round(export, 1), "deliver-3": round(floor, 1)})
    ratios = [p["export"] / p["deliver-3"] for p in pairs]
    return {
        "measured": True,
        "pairs_mb_per_s": pairs,
        "ratios": [round(r, 3) for r in ratios],
        "median_ratio": round(statistics.median(ratios), 3),
    }


def _hash_costs(profile: Profile, site: BenchSite) -> dict[str, float]:
    """What each hash the export computes (and a candidate crc32) costs in a lane like the
    export's, MB/s over 64 MiB (best of 3; ``bench/pages/exportfloor-lane.mjs`` hashCosts)."""
    profile.open_tools(site.url)
    return dict(profile.evaluate("(n) => window.benchHashCosts(n)", 64 << 20))


def _bare_rate(figures: dict[str, Any]) -> float | None:
    """The bare streamed download's median MB/s, or None where it was not measured."""
    streamed = figures.get("streamed") or {}
    if not streamed.get("measured"):
        return None
    return float(streamed["bare_download_mb_per_s"]["median"])


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


def floor_goals(
    host: float,
    floor: float,
    hashed: float,
    delivered: float,
    *,
    strategies: tuple[str, str] = ("", ""),
) -> dict[str, dict[str, Any]]:
    """The local export's floor rows (issue 34), from MB/s of one run: ``host`` (the export),
    ``floor`` (the bare page reading the files, hashing nothing), ``hashed`` (the same reads
    with the sha256 and crc32 every archive must compute: the hashed floor) and ``delivered``
    (the bare page doing that and making the page's Blobs: information).

    The issue's goal is ``host >= 0.8 × floor``, and ``export_vs_opfs_floor`` is met only when
    that holds (round 41: before, it took the hashed row's verdict once the goal had moved).
    Where the required hashing alone is below it (``hashed < 0.8 × floor``) no export can reach
    it; the sentence says so and ``export_vs_hashed_floor`` (``host >= 0.8 × hashed``) is
    judged, else it is information. Both rows are always given, each with every figure."""
    moved = hashed < FLOOR_GOAL_RATIO * floor
    figure_mb_per_s = {
        "host": round(host, 1),
        "opfs_floor": round(floor, 1),
        "floor_strategy": strategies[0],
        "hashed_floor": round(hashed, 1),
        "hashed_strategy": strategies[1],
        "bare_with_export_work": round(delivered, 1),
    }
    hashed_met = host >= FLOOR_GOAL_RATIO * hashed
    return {
        "export_vs_opfs_floor": {
            "ratio": ratio(host, floor),
            "figure_mb_per_s": figure_mb_per_s,
            "hashed_floor_vs_opfs_floor": ratio(hashed, floor),
            "goal": (
                f">= {FLOOR_GOAL_RATIO} (the issue's floor; the required hashing alone is "
                f"{ratio(hashed, floor)}× it, so the hashed floor and the delivered rows "
                "are judged too)"
                if moved
                else f">= {FLOOR_GOAL_RATIO}"
            ),
            # the issue's own row is met only by its own floor (round 41): a moved goal is said
            # in the sentence and judged on the hashed row, never marked met here
            "met": host >= FLOOR_GOAL_RATIO * floor,
        },
        "export_vs_hashed_floor": {
            "ratio": ratio(host, hashed),
            "figure_mb_per_s": figure_mb_per_s,
            "goal": f">= {FLOOR_GOAL_RATIO}" if moved else "information",
            "met": hashed_met,
        },
    }


def delivered_goals(
    host: float,
    delivered: float,
    crc_delivered: float,
    hashed_delivered: float,
    floor: float,
    *,
    paired: float | None = None,
) -> dict[str, dict[str, Any]]:
    """The streamed export's delivered rows (issue 34, round 41), from MB/s of one run: ``host``
    (the export to the saved file), ``delivered`` (floor (b): a bare page's lanes reading the
    same files and streaming every byte into a download, hashing nothing), ``crc_delivered``
    (floor (c): the same with the zip's crc32), ``hashed_delivered`` (the same with crc32 and
    the manifest's sha256, as the export) and ``floor`` (the issue's: reads only).

    ``export_vs_delivered_floor`` is the platform-bound row: the download is the limit (the
    issue: "if a row's floor is itself the limit … the goal is that floor"), so the goal is
    ``host >= 0.8 × delivered``; it carries the issue's ratio (``vs_opfs_floor``) and floor
    (b)'s own (``delivered_vs_opfs_floor``), so neither is hidden, and ``paired_ratio`` (the
    median ratio of export / floor (b) measured in pairs, one right after the other, or None),
    judged on its own as ``export_vs_delivered_floor_paired`` (>= 0.8) where measured. The
    crc32 and hashed delivered rows are information."""
    figure = {
        "host": round(host, 1),
        "delivered_floor": round(delivered, 1),
        "crc_delivered_floor": round(crc_delivered, 1),
        "hashed_delivered_floor": round(hashed_delivered, 1),
        "opfs_floor": round(floor, 1),
    }
    return {
        "export_vs_delivered_floor": {
            "ratio": ratio(host, delivered),
            "figure_mb_per_s": figure,
            "vs_opfs_floor": ratio(host, floor),
            "delivered_vs_opfs_floor": ratio(delivered, floor),
            "paired_ratio": paired,
            "goal": f">= {FLOOR_GOAL_RATIO} (the platform's limit for an export a person gets: "
            "reads streamed into a download, nothing hashed)",
            "met": host >= FLOOR_GOAL_RATIO * delivered,
        },
        **(
            {
                "export_vs_delivered_floor_paired": {
                    "ratio": paired,
                    "goal": f">= {FLOOR_GOAL_RATIO} (the same row, its runs in pairs)",
                    "met": paired >= FLOOR_GOAL_RATIO,
                }
            }
            if paired is not None
            else {}
        ),
        "export_vs_crc_delivered_floor": {
            "ratio": ratio(host, crc_delivered),
            "figure_mb_per_s": figure,
            "goal": "information (the same with the zip's crc32)",
            "met": True,
        },
        "export_vs_delivered_hashed_floor": {
            "ratio": ratio(host, hashed_delivered),
            "figure_mb_per_s": figure,
            "goal": "information (the same with crc32 and the manifest's sha256, as the export)",
            "met": True,
        },
    }


def measure(playwright: Playwright, site: BenchSite, run_count: int, export_mb: float) -> dict:
    """Run the export measurement (see module docstring)."""
    export_files = mixed_files(int(export_mb * MB), seed=3)
    export_info = site.add_project("export", sorted(export_files.items()))
    del export_files
    figures: dict[str, Any] = {}
    with Profile(playwright) as profile:
        profile.goto(site.url)
        profile.wait_status()
        pid = host.ok(profile, "project.create", {"name": "export"})["project"]["id"]
        profile.open_tools(site.url)
        profile.evaluate("([n, id]) => window.benchPopulate(n, id)", ["export", pid])
        profile.goto(site.url)
        profile.wait_status()
        base = _memory(profile)
        peak = dict(base)
        samples_taken = 0

        def sample() -> None:
            nonlocal samples_taken
            now = _memory(profile, gc=False)
            samples_taken += 1
            for key in peak:
                peak[key] = max(peak[key], now[key])

        streamed = _streamed(profile, pid, export_info["bytes"], run_count, sample)
        seconds = []
        result: dict[str, Any] = {}
        for i in range(run_count):
            profile.evaluate(EXPORT_START, [pid])
            while True:
                if i == 0 and not streamed["measured"]:
                    sample()
                result = profile.evaluate("() => window.__export")
                if result is not None:
                    break
                profile.page.wait_for_timeout(200)
            if not result["ok"]:
                raise RuntimeError(f"export refused: {result}")
            seconds.append(result["ms"] / 1000)
        after = _memory(profile)
        blob_rates = [export_info["bytes"] / MB / s for s in seconds]
        rates = (
            [export_info["bytes"] / MB / s for s in streamed["seconds_to_saved_file"]]
            if streamed["measured"]
            else blob_rates
        )
        if streamed["measured"] and streamed["archive_bytes"] != result["size"]:
            raise RuntimeError(f"streamed {streamed['archive_bytes']} B, Blob {result['size']} B")
        figures = {
            "project_files": export_info["files"],
            "project_bytes": export_info["bytes"],
            "archive_bytes": result["size"],
            "host_mb_per_s": runs(rates),
            "host_delivery": streamed.get("delivery") or "blob",
            "blob_mb_per_s": runs(blob_rates),
            "streamed": streamed,
            "memory_before": base,
            "memory_peak_during_first": peak,
            "memory_after": after,
            "memory_samples": samples_taken,
            "peak_extra_bytes": sum(max(peak[k] - base[k], 0) for k in PEAK_KEYS),
        }
        figures["opfs_floor"] = _opfs_floor(profile, site, pid, run_count)
        figures["delivered_floor"] = _delivered_floor(profile, site, pid, run_count)
        figures["hash_limits"] = _limits(profile, site)
        figures["hash_costs_mb_per_s"] = _hash_costs(profile, site)
        if streamed["measured"]:
            figures["paired_with_delivered_floor"] = _paired(
                profile, site, pid, export_info["bytes"], run_count
            )
        errors = list(profile.console_errors)
    figures["cpython_zipfile"] = _cpython_zipfile(site, "export", run_count)
    figures["console_errors"] = errors[:10]
    host_rate = statistics.median(rates)
    zip_rate = figures["cpython_zipfile"]["mb_per_s"]["median"]
    floor_rate = figures["opfs_floor"]["best_mb_per_s"]
    goals = {
        "export_vs_cpython_zipfile": {
            "ratio": ratio(host_rate, zip_rate),
            "figure_mb_per_s": {"host": round(host_rate, 1), "cpython_zipfile": round(zip_rate, 1)},
            "goal": f">= {GOAL_RATIO}",
            "met": host_rate >= GOAL_RATIO * zip_rate,
        },
        **floor_goals(
            host_rate,
            floor_rate,
            figures["opfs_floor"]["hashed_mb_per_s"],
            figures["opfs_floor"]["with_export_work_mb_per_s"]["median"],
            strategies=(figures["opfs_floor"]["best"], figures["opfs_floor"]["hashed_best"]),
        ),
        **(
            {
                "export_vs_bare_streamed_download": {
                    "ratio": ratio(host_rate, bare_rate),
                    "figure_mb_per_s": {
                        "host": round(host_rate, 1),
                        "bare_streamed_download": round(bare_rate, 1),
                    },
                    "goal": "information (the platform's download path, issue 34)",
                    "met": True,
                }
            }
            if (bare_rate := _bare_rate(figures)) is not None
            else {}
        ),
        **(
            delivered_goals(
                host_rate,
                figures["delivered_floor"]["deliver_best_mb_per_s"],
                figures["delivered_floor"]["crc-deliver_best_mb_per_s"],
                figures["delivered_floor"]["best_mb_per_s"],
                floor_rate,
                paired=(figures.get("paired_with_delivered_floor") or {}).get("median_ratio"),
            )
            if figures["delivered_floor"].get("measured")
            else {}
        ),
        "export_peak_extra_memory": {
            "value": figures["peak_extra_bytes"],
            "goal": "<= 64 MiB",
            "met": figures["peak_extra_bytes"] <= PEAK_GOAL_BYTES,
        },
    }
    return {"figures": figures, "goals": goals}
