"""``python -m bench.export_pairs A_DIST B_DIST [--rounds 6] [--mb 200]``: two builds' exports of
the same project, interleaved, with CPython's ``zipfile`` between them (issue 18, round five;
not part of ``python -m bench``).

On a machine shared with other work, runs of ``python -m bench`` minutes apart see different
loads (the floor itself moved 3× between runs). Here both builds are booted once, each in its
own fresh profile with the export bench's project (:func:`bench.archive_bench.mixed_files`,
seed 3) in OPFS, and each round exports A then B (then B then A the next round) and runs the
``zipfile`` floor of ``bench.export_bench`` once, seconds apart. Prints one JSON line per round
(MB/s of each, each build's ratio to that round's floor, the load average) and the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import zipfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench import host
from bench.archive_bench import mixed_files
from bench.browser import Profile
from bench.export_bench import EXPORT_START
from bench.site import BenchSite

MB = 1_000_000


def _boot(pw: object, site: BenchSite) -> tuple[Profile, str]:
    profile = Profile(pw)  # type: ignore[arg-type]
    profile.goto(site.url)
    profile.wait_status()
    pid = host.ok(profile, "project.create", {"name": "export"})["project"]["id"]
    profile.open_tools(site.url)
    profile.evaluate("([n, id]) => window.benchPopulate(n, id)", ["export", pid])
    profile.goto(site.url)
    profile.wait_status()
    return profile, pid


def _export(profile: Profile, pid: str) -> float:
    """One export, timed in the page: seconds."""
    profile.evaluate(EXPORT_START, [pid])
    while (result := profile.evaluate("() => window.__export")) is None:
        profile.page.wait_for_timeout(50)
    if not result["ok"]:
        raise RuntimeError(f"export refused: {result}")
    return result["ms"] / 1000


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the rounds, print one JSON line per round and the medians."""
    parser = argparse.ArgumentParser(prog="python -m bench.export_pairs")
    parser.add_argument("a", type=Path, help="the first build's dist/")
    parser.add_argument("b", type=Path, help="the second build's dist/")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--mb", type=float, default=200)
    args = parser.parse_args(argv)
    files = sorted(mixed_files(int(args.mb * MB), seed=3).items())
    total = sum(len(d) for _, d in files)
    sites = [BenchSite(args.a.resolve()), BenchSite(args.b.resolve())]
    rows = []
    try:
        for site in sites:
            site.add_project("export", files)
            site.start()
        with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="vbx-zip-") as tmp:
            src = Path(tmp) / "src"
            for path, data in files:
                (src / path).parent.mkdir(parents=True, exist_ok=True)
                (src / path).write_bytes(data)
            booted = [_boot(pw, site) for site in sites]
            for _ in range(2):  # warm both (the first export starts the lanes, if any)
                for profile, pid in booted:
                    _export(profile, pid)
            for r in range(args.rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                load = os.getloadavg()[0]
                secs = {}
                for i in order:
                    secs[i] = _export(*booted[i])
                start = time.perf_counter()
                with zipfile.ZipFile(Path(tmp) / "out.zip", "w") as archive:
                    for path, _ in files:
                        archive.write(src / path, path)
                zip_rate = total / MB / (time.perf_counter() - start)
                rates = [total / MB / secs[0], total / MB / secs[1]]
                row = {
                    "round": r + 1,
                    "load": round(load, 2),
                    "a_mb_per_s": round(rates[0], 1),
                    "b_mb_per_s": round(rates[1], 1),
                    "zip_mb_per_s": round(zip_rate, 1),
                    "a_ratio": round(rates[0] / zip_rate, 3),
                    "b_ratio": round(rates[1] / zip_rate, 3),
                    "b_over_a": round(rates[1] / rates[0], 3),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
            for profile, _ in booted:
                profile.close()
    finally:
        for site in sites:
            site.close()
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "round"}
    print(json.dumps({"medians": med}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
