"""The issue-18 table: the five figures the performance round is judged by, plus the three of
missions that run (issue 30: spawn → executing shown, a log line → shown p95, cancel → failed
shown; latencies in ms, not ratios), one row each, as figure, goal and met / not met — read
from the goals of one run (each a ratio, or a difference, of two figures measured in that run
against its floor, or for issue 30 the latency itself).

A row names the goal entry it reads (``report["goals"][key]``, written by the section that
measures it) and which of its members is the figure; the goal sentence and ``met`` are the
section's own, so a section that changes how it measures (the export path, issue 18) keeps
its row without a change here. A row whose section did not run (``--only``) or failed shows
``not measured``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ROWS", "Row", "render", "table"]


@dataclass(frozen=True, slots=True)
class Row:
    """One row: its label, the goal entry it reads, the member that is the figure, its unit."""

    label: str
    key: str
    member: str
    unit: str


ROWS = (
    Row(
        "export 200 MB / CPython zipfile on the same files",
        "export_vs_cpython_zipfile",
        "ratio",
        "×",
    ),
    # issue 34: the export's floors are the platform's own (bench/export_bench.py,
    # bench/remote_export_bench.py)
    Row(
        "local export 200 MB / 467 files / a bare OPFS read of the same files (best strategy)",
        "export_vs_opfs_floor",
        "ratio",
        "×",
    ),
    Row(
        "local export 200 MB / 467 files / the same bare reads, hashed as an archive must",
        "export_vs_hashed_floor",
        "ratio",
        "×",
    ),
    # issue 34, the streamed download: the export timed to the saved file, against a bare page
    # reading and streaming the same files into a download — hashing nothing (floor (b), the
    # platform-bound row, round 41), crc32 only (c), crc32 and sha256 as the export — and the
    # download path alone
    Row(
        "local export (streamed, to the saved file) / a bare page reading the same files and "
        "streaming them into a download, hashing nothing (the platform-bound row)",
        "export_vs_delivered_floor",
        "ratio",
        "×",
    ),
    Row(
        "the same, measured in pairs (each export right before one floor (b) run), median",
        "export_vs_delivered_floor_paired",
        "ratio",
        "×",
    ),
    Row(
        "local export (streamed, to the saved file) / the same bare page computing the zip's crc32",
        "export_vs_crc_delivered_floor",
        "ratio",
        "×",
    ),
    Row(
        "local export (streamed, to the saved file) / a bare page reading, hashing and "
        "streaming the same files into a download",
        "export_vs_delivered_hashed_floor",
        "ratio",
        "×",
    ),
    Row(
        "local export (streamed, to the saved file) / a bare streamed download of as many bytes",
        "export_vs_bare_streamed_download",
        "ratio",
        "×",
    ),
    Row(
        "remote export 200 MB into the page / a bare WebSocket reader in a worker",
        "remote_export_vs_bare_ws_reader",
        "ratio",
        "×",
    ),
    Row(
        "remote export 200 MB into the page / CPython zipfile on the same files",
        "remote_export_vs_cpython_zipfile",
        "ratio",
        "×",
    ),
    Row(
        "remote projects.list p50 / the same call to an in-browser peer p50",
        "remote_list_vs_in_browser_peer_p50",
        "ratio",
        "×",
    ),
    Row("1 KB file.read p50 − raw worker echo p50", "call_overhead_p50_ms", "value", " ms"),
    Row("cold boot / bare Pyodide cold", "boot_cold_vs_bare_cold", "ratio", "×"),
    Row(
        "first mission.post into a 100,000-letter mailbox / a post into a 100-letter one",
        "mailbox_first_post_large_vs_post_small_browser",
        "ratio",
        "×",
    ),
    # issue 34: many small files (bench/upload_bench.py) and a fresh host's first post
    Row(
        "a fresh host's first post into 100,000 letters (settled) / a post into 100",
        "mailbox_fresh_host_settled_first_post_large_vs_post_small_browser",
        "ratio",
        "×",
    ),
    Row(
        "the same, like for like: over a fresh settled first post into 100",
        "mailbox_fresh_host_settled_first_post_large_vs_settled_small_browser",
        "ratio",
        "×",
    ),
    Row(
        "the platform's floor under it: a bare page's first post-shaped storage steps after a "
        "reload / the same steps steady",
        "mailbox_fresh_post_floor_browser",
        "ratio",
        "×",
    ),
    Row(
        "upload 10,000 files through the UI, files/s",
        "upload_files_vs_bare_opfs_writes",
        "figure",
        " files/s",
    ),
    Row(
        "upload 10,000 files / a bare page's OPFS writes",
        "upload_files_vs_bare_opfs_writes",
        "ratio",
        "×",
    ),
    Row("import a 10,000-file zip / export it", "import_zip_vs_export", "ratio", "×"),
    Row("open 10,000 files / open 10", "open_most_vs_fewest_files", "ratio", "×"),
    # issue 34: what a person waits for, through the page (bench/tree_bench.py)
    Row(
        "open a 10,000-file project to a usable tree / a 10-file one",
        "tree_open_most_vs_fewest_files",
        "ratio",
        "×",
    ),
    # issue 30: missions that run, seen from the page (bench/runner_bench.py)
    Row(
        "spawn → executing letter shown in the tray",
        "runner_spawn_to_executing_shown_ms",
        "value",
        " ms",
    ),
    Row(
        "a log line the agent prints → shown in the page, p95",
        "runner_log_line_shown_p95_ms",
        "value",
        " ms",
    ),
    Row("cancel → failed shown in the tray", "runner_cancel_to_failed_shown_ms", "value", " ms"),
    Row("search 10,000 files: first results", "search_first_results_ms", "value", " ms"),
    Row("search 10,000 files, cold: complete", "search_complete_vs_bare_read", "value", " ms"),
    Row(
        "search 10,000 files, cold: complete / bare read",
        "search_complete_vs_bare_read",
        "ratio",
        "×",
    ),
    Row("search 10,000 files, cache warm: complete", "search_complete_warm_ms", "value", " ms"),
    Row("search warm-up of 10,000 files (background)", "search_warm_up_ms", "value", " ms"),
    # issue 32: the person's Python runtime (bench/python_bench.py)
    Row("Python runtime: cold start → first output", "python_cold_first_output_ms", "value", " ms"),
    Row("Python runtime: warm run → first output", "python_warm_first_output_ms", "value", " ms"),
    Row("Python runtime: Stop → stopped", "python_stop_to_stopped_ms", "value", " ms"),
    Row(
        "Python runtime: first run with requirements (3 wheels installed)",
        "python_first_run_with_requirements_ms",
        "value",
        " ms",
    ),
)


def table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of :data:`ROWS` for ``report`` (the bench's JSON report): ``row``, ``key``,
    ``figure`` (a number, or ``None`` when not measured), ``unit``, ``goal`` (the section's
    sentence) and ``met`` (``True``/``False``; ``None`` when not measured, or for a figure the
    section reports as information, its goal's ``met`` being ``None``)."""
    out = []
    for row in ROWS:
        goal = report.get("goals", {}).get(row.key)
        figure = None if goal is None else goal.get(row.member)
        out.append(
            {
                "row": row.label,
                "key": row.key,
                "figure": figure,
                "unit": row.unit,
                "goal": None if goal is None else goal.get("goal"),
                "met": None
                if goal is None or figure is None or goal.get("met") is None
                else bool(goal.get("met")),
            }
        )
    return out


def render(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table: figure | now | goal | met."""
    lines = ["| figure | now | goal | met |", "|---|---|---|---|"]
    for r in rows:
        now = "not measured" if r["figure"] is None else f"{r['figure']}{r['unit']}"
        met = {None: "not measured", True: "met", False: "not met"}[r["met"]]
        if r["met"] is None and r["figure"] is not None:
            met = "information (no goal of its own)"
        lines.append(f"| {r['row']} | {now} | {r['goal'] or '—'} | {met} |")
    return "\n".join(lines)
