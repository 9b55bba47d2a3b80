"""``python -m bench.write_lab [--files 10000] [--rounds 2]``: how fast a bare page writes many
small files into OPFS, by strategy (issue 34; not part of ``python -m bench``).

Each strategy writes ``files`` one-line files (the upload bench's folder: 100 a folder), each
through a temporary and a move, into a fresh OPFS folder of one profile
(``bench/tools.html``'s ``benchWriteLab``): ``page-writable-16`` (this page, ``createWritable``,
16 in flight), ``w1-sync-16`` (one dedicated worker, sync access handles, 16 in flight) and
``wN-sync-L`` (N workers, each every N-th file); ``-direct`` writes each file in place (no
temporary, no move: what a bare page does). The strategies are taken in turn each round.
Build ``dist/`` first.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.browser import Profile
from bench.site import BenchSite

ROOT = Path(__file__).resolve().parent.parent

STRATEGIES = {
    "page-writable-16-direct": (0, 16, "writable", True),
    "w1-sync-16-direct": (1, 16, "sync", True),
    "w2-sync-16-direct": (2, 16, "sync", True),
    "page-writable-16": (0, 16, "writable", False),
    "w1-writable-16": (1, 16, "writable", False),
    "w1-sync-16": (1, 16, "sync", False),
    "w1-sync-4": (1, 4, "sync", False),
    "w2-sync-8": (2, 8, "sync", False),
    "w2-sync-16": (2, 16, "sync", False),
    "w3-sync-8": (3, 8, "sync", False),
    "w4-sync-8": (4, 8, "sync", False),
    "w4-sync-4": (4, 4, "sync", False),
}


def main() -> None:
    """Run the lab (module docstring); prints one JSON line per round and the medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=list(STRATEGIES))
    args = parser.parse_args()
    results: dict[str, list[float]] = {k: [] for k in args.only}
    site = BenchSite(ROOT / "dist")
    try:
        site.start()
        _rounds(site, args, results)
    finally:
        site.close()
    print(json.dumps({k: sorted(v) for k, v in results.items()}, indent=1))


def _rounds(site: BenchSite, args: argparse.Namespace, results: dict[str, list[float]]) -> None:
    with sync_playwright() as pw, Profile(pw) as profile:
        profile.open_tools(site.url)
        for r in range(args.rounds):
            for name in args.only:
                workers, lanes, how, direct = STRATEGIES[name]
                got = profile.evaluate(
                    "([b, c, w, l, h, d]) => benchWriteLab(b, c, w, l, h, d)",
                    [f"lab-{name}-{r}", args.files, workers, lanes, how, direct],
                )
                assert got["files"] == args.files, got
                results[name].append(round(args.files / (got["ms"] / 1000), 1))
                print(
                    json.dumps(
                        {
                            "round": r,
                            "strategy": name,
                            "ms": round(got["ms"], 1),
                            "files_per_s": results[name][-1],
                            "load": os.getloadavg()[0],
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
