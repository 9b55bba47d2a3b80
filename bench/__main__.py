"""``python -m bench [--quick] [--only SECTION ...] [--runs N] [--dist dist] [--out DIR]``.

Drives headless Debian Chromium against a served temporary copy of ``dist/`` (build it first:
``nox -s bench`` does), prints one JSON report and writes it to
``bench/results/<UTC timestamp>.json``. Every goal is a ratio of two figures measured in the
same run on the same machine. Sections (``--only`` picks some):

- ``boot``: navigation → host ready vs a bare Pyodide boot of the same files, cold and warm;
- ``call``: p50/p95 of a 1 KB ``file.read`` page → host → page vs a raw worker echo;
- ``projects``: open time and worker memory by file count and content bytes;
- ``export``: export MB/s and peak worker memory vs CPython's ``zipfile`` (same files, same run);
- ``mailbox``: post latency at 100 vs 100,000 letters (CPython and browser);
- ``audit``: audit append rate vs a raw IndexedDB put loop with the same durability;
- ``search``: search in files over a 10,000-file project, first results and complete, vs a
  bare read of the same files (issue 33);
- ``tree``: address → a usable file tree for a 10,000-file project vs a 10-file one, through
  the page (issue 34, :mod:`bench.tree_bench`);
- ``patterns``: the text checks on hostile text, seconds per 10,000 characters (Pyodide and
  CPython), and the issue-13 runner batch;
- ``runner``: missions that run (issue 30), against a real ``voicebox-env serve`` and
  ``voicebox-env runner`` on 127.0.0.1 driven through the page: spawn → ``executing`` shown in
  the tray, a line the agent prints → shown in the page (p50/p95), cancel → ``failed`` shown
  (:mod:`bench.runner_bench`);
- ``python``: the person's Python runtime (issue 32): cold start to first output, a warm run,
  Stop → stopped, beside the host's own boot in the same profile (:mod:`bench.python_bench`);
- ``upload``: a 10,000-file folder upload through the UI vs a bare page writing the same files
  into OPFS, and importing that project's zip vs exporting it (issue 34,
  :mod:`bench.upload_bench`);
- ``remote``: a remote project's export into the page (a real ``voicebox-env serve`` on
  127.0.0.1) vs a bare WebSocket reader in a worker and CPython's ``zipfile`` (issue 34,
  :mod:`bench.remote_export_bench`).

``--quick`` runs every section with tiny sizes and one run: it proves the harness works (the
test suite runs it) and its figures mean nothing. The report's ``table`` (and the first table
printed) is the issue-18 table (:mod:`bench.table`): each row's figure, goal and met / not met,
from this one run. Exit status 0 whether goals are met or not;
1 only when the harness itself failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from bench import (
    audit_bench,
    boot_bench,
    call_bench,
    export_bench,
    mailbox_browser,
    pattern_bench,
    project_bench,
    python_bench,
    remote_export_bench,
    runner_bench,
    search_bench,
    table,
    tree_bench,
    upload_bench,
)
from bench.browser import CHROMIUM
from bench.site import BenchSite

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = (
    "boot",
    "call",
    "projects",
    "export",
    "mailbox",
    "audit",
    "search",
    "tree",
    "patterns",
    "runner",
    "python",
    "upload",
    "remote",
)
MB = 1_000_000


def _plan(quick: bool, run_count: int | None) -> dict[str, Any]:
    if quick:
        return {
            "runs": run_count or 1,
            "reloads": 1,
            "calls": 10,
            "open_cases": [(3, 3_000), (30, 3_000), (3, 300_000)],
            "export_mb": 1,
            "mailbox_sizes": (10, 100),
            "mailbox_posts": 3,
            "audit_records": 10,
            "log_lines": 5,
            "search_files": 300,
            "upload_files": 50,
            "tree_files": 300,
        }
    return {
        "runs": run_count or 5,
        "reloads": 4,
        "calls": 200,
        "open_cases": [(10, MB), (1_000, MB), (10_000, MB), (10, 200 * MB), (10_000, 200 * MB)],
        "export_mb": 200,
        "mailbox_sizes": (100, 100_000),
        "mailbox_posts": 40,
        "audit_records": 300,
        "log_lines": 25,
        "search_files": 10_000,
        "upload_files": 10_000,
        "tree_files": 10_000,
    }


def _machine(playwright_version: str) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "chromium": playwright_version,
        "chromium_path": CHROMIUM,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the selected sections; return the report (never raises for a section's failure:
    the section's entry then holds ``error``)."""
    plan = _plan(args.quick, args.runs)
    sections = args.only or list(SECTIONS)
    dist = args.dist.resolve()
    if not (dist / "site-manifest.json").exists():
        raise SystemExit(f"{dist} has no site-manifest.json: build first (nox -s build)")
    site = BenchSite(dist)
    report: dict[str, Any] = {
        "schema": "voicebox-bench-v1",
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "plan": {k: v for k, v in plan.items() if k != "open_cases"}
        | {"open_cases": [list(c) for c in plan["open_cases"]]},
        "build": site.manifest.get("build"),
        "pyodide": site.manifest.get("pyodide"),
        "sections": {},
        "goals": {},
    }
    try:
        site.start()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
            report["machine"] = _machine(browser.version)
            browser.close()
            jobs = {
                "boot": lambda: boot_bench.measure(pw, site, plan["runs"], plan["reloads"]),
                "call": lambda: call_bench.measure(pw, site, plan["runs"], plan["calls"]),
                "projects": lambda: project_bench.measure(
                    pw, site, plan["runs"], plan["open_cases"]
                ),
                "export": lambda: export_bench.measure(pw, site, plan["runs"], plan["export_mb"]),
                "mailbox": lambda: mailbox_browser.measure(
                    pw, site, plan["mailbox_sizes"], plan["runs"], plan["mailbox_posts"]
                ),
                "audit": lambda: audit_bench.measure(pw, site, plan["runs"], plan["audit_records"]),
                "search": lambda: search_bench.measure(
                    pw, site, plan["runs"], plan["search_files"]
                ),
                "tree": lambda: tree_bench.measure(pw, site, plan["runs"], plan["tree_files"]),
                "patterns": lambda: pattern_bench.measure(pw, site),
                "runner": lambda: runner_bench.measure(pw, site, plan["log_lines"]),
                "python": lambda: python_bench.measure(pw, site, plan["runs"]),
                "upload": lambda: upload_bench.measure(
                    pw, site, min(plan["runs"], 3), plan["upload_files"]
                ),
                "remote": lambda: remote_export_bench.measure(
                    pw, site, plan["runs"], plan["export_mb"], plan["calls"]
                ),
            }
            for name in sections:
                started = time.monotonic()
                print(f"bench: {name} …", file=sys.stderr, flush=True)
                try:
                    out = jobs[name]()
                except Exception as exc:  # a section's failure is reported, not fatal
                    traceback.print_exc(file=sys.stderr)
                    out = {"error": f"{type(exc).__name__}: {exc}"}
                out["seconds"] = round(time.monotonic() - started, 1)
                report["sections"][name] = out
                report["goals"].update(out.get("goals", {}))
    finally:
        site.close()
    report["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["table"] = table.table(report)
    return report


def goal_table(report: dict[str, Any]) -> str:
    """Every goal of the run, one row each: name, figure (the same-run ratio, or the value the
    goal is about), goal, met / not met."""
    rows = ["goal | figure | goal | met"]
    for name, goal in sorted(report["goals"].items()):
        figure = goal.get("ratio", goal.get("value", goal.get("figure")))
        met = "met" if goal.get("met") else "not met"
        if goal.get("met", False) is None:
            met = "information"
        rows.append(f"{name} | {figure} | {goal.get('goal')} | {met}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the JSON report and write it under ``--out``."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run (a smoke test)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    parser.add_argument("--runs", type=int, default=None, help="runs per figure (default 5)")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    report = run(args)
    text = json.dumps(report, indent=1)
    print(text)
    print(table.render(report["table"]), file=sys.stderr)
    print(goal_table(report), file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.out / f"{stamp}{'-quick' if args.quick else ''}.json"
    path.write_text(text + "\n", encoding="utf-8")
    print(f"bench: report written to {path}", file=sys.stderr)
    failed = [n for n, s in report["sections"].items() if "error" in s]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
