"""``python -m bench.export_lab [--mb 200] [--rounds 2] [CASE ...]``: where an export's time goes
in the browser, piece by piece (issue 18; not part of ``python -m bench``).

The export bench's project (:func:`bench.archive_bench.mixed_files`, seed 3) is put into OPFS
as ``python -m bench`` does, then ``bench/pages/readlab-worker.mjs`` times each case on its files
in a dedicated worker — the ways of reading them (``getFile().arrayBuffer()`` in turn and read
ahead, ``slice``, ``stream()``, sync access handles per file and opened ahead), hashing 8 MiB
buffers of them (WebCrypto sha256, hash-wasm sha256 and crc32, a slicing-by-8 table crc32),
posting their bytes to the page, which makes one Blob of them, and (``x-…``, round four) what
each step after a handle's read costs: closing it, a Blob per file or per 8 MiB, a spool file,
the digest. Prints one JSON line per round:
per case its ms and MB/s over the project's bytes. Build ``dist/`` first.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench import host
from bench.archive_bench import mixed_files
from bench.browser import Profile
from bench.site import BenchSite

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
CASES = [
    "handles",
    "blob",
    "blob-ahead",
    "blob-all4",
    "slice",
    "stream",
    "sah",
    "sah-ro",
    "sah-ro-ahead",
    "sah-ro-all",
    "sha-subtle",
    "sha-wasm",
    "crc-wasm",
    "crc-table",
    "post",
    "post1",
    "x-close",
    "x-close-1",
    "x-close-2",
    "x-close-4",
    "x-close-16",
    "x-snap-4",
    "x-snap-8",
    "x-snap-16",
    "x-blob",
    "x-blob8",
    "x-fresh-blob",
    "x-spool",
    "x-digest",
    "y-full",
    "y-lanes-1",
    "y-lanes-2",
    "y-lanes-3",
]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the cases, print one JSON line per round."""
    parser = argparse.ArgumentParser(prog="python -m bench.export_lab")
    parser.add_argument("cases", nargs="*", help=f"some of: {' '.join(CASES)} (default all)")
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        parser.error(f"unknown cases: {unknown}")
    site = BenchSite(args.dist.resolve())
    try:
        info = site.add_project("export", sorted(mixed_files(int(args.mb * MB), seed=3).items()))
        site.start()
        with sync_playwright() as pw, Profile(pw) as profile:
            profile.goto(site.url)
            profile.wait_status()
            pid = host.ok(profile, "project.create", {"name": "export"})["project"]["id"]
            profile.open_tools(site.url)
            profile.evaluate("([n, id]) => window.benchPopulate(n, id)", ["export", pid])
            print(json.dumps({"project": info}))
            for _ in range(args.rounds):
                out = profile.evaluate(
                    "([id, c]) => window.benchReadLab(id, c)", [pid, args.cases or CASES]
                )
                print(json.dumps(out), flush=True)
    finally:
        site.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
