"""The benchmark harness works (issue 9): ``python -m bench --quick`` against the built site
runs every section with tiny sizes and writes one JSON report with every figure and goal.

This proves the harness, not the product's speed: there is no timing assertion here (or
anywhere in the tests). The real run is ``nox -s bench``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.mailbox_browser import SETTLED_RUNS
from bench.table import ROWS

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = {
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
}
GOALS = {
    "boot_cold_vs_bare_cold",
    "boot_warm_vs_bare_warm",
    "boot_warm_vs_cold",
    "call_overhead_p50_ms",
    "open_most_vs_fewest_files",
    "export_vs_cpython_zipfile",
    "export_peak_extra_memory",
    "export_vs_opfs_floor",
    "export_vs_hashed_floor",
    "export_vs_delivered_floor",
    "export_vs_delivered_floor_paired",
    "export_vs_crc_delivered_floor",
    "remote_export_vs_bare_ws_reader",
    "remote_export_vs_cpython_zipfile",
    "remote_list_vs_in_browser_peer_p50",
    "mailbox_post_large_vs_small_browser",
    "mailbox_first_post_large_vs_post_small_browser",
    "mailbox_post_large_vs_small_cpython",
    "mailbox_fresh_post_floor_browser",
    "audit_vs_raw_idb_sequential",
    "audit_vs_raw_idb_concurrent",
    "runner_spawn_to_executing_shown_ms",
    "runner_log_line_shown_p95_ms",
    "runner_cancel_to_failed_shown_ms",
    "search_first_results_ms",
    "search_complete_vs_bare_read",
    "tree_open_most_vs_fewest_files",
    "python_cold_first_output_ms",
    "python_warm_first_output_ms",
    "python_stop_to_stopped_ms",
    "upload_files_vs_bare_opfs_writes",
    "import_zip_vs_export",
}


def test_the_quick_harness_runs_every_section_and_writes_its_report(
    dist: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--dist", str(dist), "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    (written,) = tmp_path.glob("*-quick.json")
    report = json.loads(written.read_text(encoding="utf-8"))
    assert report == json.loads(done.stdout)
    assert report["schema"] == "voicebox-bench-v1" and report["quick"] is True
    assert set(report["sections"]) == SECTIONS
    assert {name: s.get("error") for name, s in report["sections"].items()} == dict.fromkeys(
        SECTIONS
    )
    assert set(report["goals"]) >= GOALS
    for name, goal in report["goals"].items():
        assert {"goal", "met"} <= set(goal), name
        assert any(k in goal for k in ("ratio", "value", "value_bytes", "memory_after_ratio")), name
    # the issue-18 table: every row measured in this run, with its goal and met / not met
    assert [r["row"] for r in report["table"]] == [r.label for r in ROWS]
    for row in report["table"]:
        assert isinstance(row["figure"], int | float) and row["goal"], row
        met = report["goals"][row["key"]]["met"]  # None: a figure reported as information
        assert row["met"] is (None if met is None else bool(met)), row
        assert row["row"] in done.stderr
    boot = report["sections"]["boot"]["figures"]
    assert set(boot["host_cold_stages_ms"]) >= {"runtime", "packages", "host", "ready"}
    exported = report["sections"]["export"]["figures"]
    assert exported["archive_bytes"] > exported["project_bytes"] > 0
    assert report["sections"]["audit"]["figures"]["sequential"]["chain_verified"] is True
    for runtime in ("pyodide", "cpython"):
        patterns = report["sections"]["patterns"][runtime]
        outcomes = [b["outcome"] for b in patterns["candidate_edit"].values()]
        assert outcomes == ["name-invalid", "applied"], runtime
        assert set(patterns["sanitizer_s_per_10k"]["letters"]) == {"10000", "100000"}
    ran = report["sections"]["runner"]["figures"]  # issue 30: one run, through the page
    assert ran["cancel_reason"] == "cancelled by a person" and ran["lines"] == 5
    python = report["sections"]["python"]["figures"]  # issue 32: the runtime beside the host
    assert python["cold"]["first_ms"] > 0 and python["host_ready_ms"] > 0
    assert python["stop_to_stopped_ms"]["n"] == 1
    # issue 34: the floor under a fresh host's first post, in the same run (bench/post_floor.py)
    post_floor = report["sections"]["mailbox"]["figures"]["post_floor"]
    assert len(post_floor["fresh_first_runs_ms"]) == SETTLED_RUNS
    assert post_floor["steady_ms"]["n"] == 1 and post_floor["steady_ms"]["median"] > 0
    # issue 34: the export's floors — the same files read bare from OPFS, the same remote
    # export pulled by a bare WebSocket reader — measured in the same run
    floor = exported["opfs_floor"]
    assert floor["bytes"] == exported["project_bytes"] and floor["best"] in floor["mb_per_s"]
    assert floor["hashed_best"].startswith("hash-lanes-") and floor["hashed_mb_per_s"] > 0
    remote = report["sections"]["remote"]["figures"]
    assert remote["archive_bytes"] > remote["project_bytes"] > 0
    assert remote["floor_mb_per_s"]["n"] == 1 and remote["page_mb_per_s"]["n"] == 1
