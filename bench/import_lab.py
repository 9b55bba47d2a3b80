"""``python -m bench.import_lab [--files 10000] [--rounds 3] [--profile]``: where a many-file
import's time goes in the browser (issue 34; not part of ``python -m bench``).

A project of ``files`` one-line files laid out as the upload bench's folder
(``upload/dNNN/fNNNNN.txt``, 100 a folder) is put into OPFS directly
(``bench/tools.html``'s ``benchPopulate``), then exported and imported ``rounds`` times in one
page, each import timed against the export before it (the ``upload`` section's row).
``--variants A B …``: each a comma-separated list of JavaScript assignments evaluated in the
host worker before its import (``globalThis.X=…``), the variants taken in turn each round — an
A/B of a build's temporary switches within one page. ``--profile`` records the host worker's
CPU profile (CDP ``Profiler``) over one import and prints the functions with the most self
time (written to ``/tmp/h34i/import.cpuprofile``). Build ``dist/`` first.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench import host
from bench.browser import Profile
from bench.site import BenchSite
from bench.upload_bench import EXPORT_THEN_IMPORT

ROOT = Path(__file__).resolve().parent.parent
PROFILE_OUT = "/tmp/h34i/import.cpuprofile"

EXPORT_ONLY = """
async ([project]) => {
  const start = performance.now();
  const exported = await window.voicebox.host.call("project.export", { project });
  const ms = performance.now() - start;
  window.__zip = await exported.stream.arrayBuffer();
  return { ms, bytes: window.__zip.byteLength };
}
"""

IMPORT_ONLY = """
async ([name]) => {
  const zip = window.__zip.slice(0);
  const start = performance.now();
  const imported = await window.voicebox.host.call("project.import", { name }, { body: zip });
  return { ms: performance.now() - start, files: imported.result.files };
}
"""


def upload_files(count: int) -> Iterable[tuple[str, bytes]]:
    """The upload bench's folder (:func:`bench.upload_bench.make_folder`) as project files."""
    for n in range(count):
        yield f"upload/d{n // 100:03d}/f{n:05d}.txt", f"line {n} of the upload bench\n".encode()


def _top(profile: dict, limit: int = 40) -> list[tuple[str, float]]:
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas", [])
    self_us: Counter[str] = Counter()
    for sample, delta in zip(profile.get("samples", []), deltas, strict=False):
        frame = nodes[sample]["callFrame"]
        url = frame.get("url", "").rsplit("/", 1)[-1]
        self_us[f"{frame['functionName'] or '(anon)'} {url}:{frame.get('lineNumber', 0)}"] += delta
    total = sum(self_us.values()) or 1
    return [(k, round(100 * v / total, 1)) for k, v in self_us.most_common(limit)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--variants", nargs="*", default=[])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    site = BenchSite(args.dist.resolve())
    try:
        site.start()
        site.add_project("lab", upload_files(args.files))
        with sync_playwright() as pw, Profile(pw) as profile:
            profile.goto(site.url)
            profile.wait_status()
            pid = host.ok(profile, "project.create", {"name": "lab"})["project"]["id"]
            profile.open_tools(site.url)
            profile.evaluate("([n, id]) => window.benchPopulate(n, id)", ["lab", pid])
            profile.goto(site.url)
            profile.wait_status()
            variants = [v.split(",") for v in args.variants] or [[]]
            for r in range(args.rounds):
                for vi, variant in enumerate(variants):
                    for setting in variant:
                        profile._worker_send(
                            "host", "Runtime.evaluate", {"expression": f"globalThis.{setting}"}
                        )
                    both = profile.evaluate(EXPORT_THEN_IMPORT, [pid, f"imported {r} {vi}"])
                    ratio = both["import_ms"] / both["export_ms"]
                    print(
                        json.dumps(
                            {"round": r, "variant": variant, **both, "ratio": round(ratio, 3)}
                        ),
                        flush=True,
                    )
            if args.profile:
                out = profile.evaluate(EXPORT_ONLY, [pid])
                print(json.dumps({"export": out}))
                worker = "host"
                profile._worker_send(worker, "Profiler.enable")
                profile._worker_send(worker, "Profiler.setSamplingInterval", {"interval": 200})
                profile._worker_send(worker, "Profiler.start")
                got = profile.evaluate(IMPORT_ONLY, ["profiled"])
                prof = profile._worker_send(worker, "Profiler.stop")["profile"]
                Path(PROFILE_OUT).parent.mkdir(parents=True, exist_ok=True)
                Path(PROFILE_OUT).write_text(json.dumps(prof))
                print(json.dumps({"import": got}))
                for name, pct in _top(prof):
                    print(f"{pct:6.1f}%  {name}")
    finally:
        site.close()


if __name__ == "__main__":
    main()
