"""Audit append rate against a raw IndexedDB put loop with the same durability, and what the
audit's anchor costs.

``bench/tools.html`` starts ``bench/pages/audit-worker.mjs``: it boots Python exactly as the
host does, appends ``count`` records through core's ``AuditLog`` over the host's IndexedDB sink
(``durability: "strict"``) — the host's path: every record MAC'd with the WebCrypto audit key,
the anchor sealed into an OPFS HOST_DIR after each group commit — then the same appends with
the anchor kept in memory (no HOST_DIR write), then puts ``count`` records of the same size with
plain IndexedDB, one strict transaction each — both sequentially (each awaited before the next:
the rate a page sees when it waits for every answer) and concurrently (all started at once:
what batching can win). Rates are records per second; each run uses fresh databases and checks
the chain verifies against its anchor. The anchor's cost is given twice: timed write by write
(``anchor_ms_per_append``, ``anchor_ms_per_write``) and as the rate with the anchor in memory
beside the rate with it in HOST_DIR; ``mac_ms_per_append`` is the time spent in WebCrypto MACs.
"""

from __future__ import annotations

import statistics
from typing import Any

from playwright.sync_api import Playwright

from bench.browser import Profile
from bench.site import BenchSite
from bench.stats import ratio, runs

__all__ = ["measure"]


def measure(playwright: Playwright, site: BenchSite, run_count: int, count: int) -> dict:
    """Run the audit comparison (see module docstring)."""
    results: list[dict[str, Any]] = []
    with Profile(playwright) as profile:
        profile.open_tools(site.url)
        for _ in range(run_count):
            results.append(profile.evaluate("(n) => window.benchAudit(n)", count))
        errors = list(profile.console_errors)
    figures: dict[str, Any] = {"records_per_run": count, "console_errors": errors[:10]}
    goals: dict[str, Any] = {}
    for mode in ("sequential", "concurrent"):
        audit = [r[mode]["audit_appends_per_s"] for r in results]
        raw = [r[mode]["raw_puts_per_s"] for r in results]
        figures[mode] = {
            "audit_appends_per_s": runs(audit),
            "anchor_in_memory_appends_per_s": runs(
                [r[mode]["anchor_in_memory_appends_per_s"] for r in results]
            ),
            "raw_idb_puts_per_s": runs(raw),
            "chain_verified": all(r[mode]["chain_verified"] for r in results),
            "record_bytes": results[0][mode]["record_bytes"],
            "anchor_writes": runs([r[mode]["anchor_writes"] for r in results]),
            "anchor_failures": sum(r[mode]["anchor_failures"] for r in results),
            "anchor_ms_per_write": runs([r[mode]["anchor_ms_per_write"] for r in results], 3),
            "anchor_ms_per_append": runs([r[mode]["anchor_ms_per_append"] for r in results], 3),
            "mac_ms_per_append": runs([r[mode]["mac_ms_per_append"] for r in results], 3),
        }
        goals[f"audit_vs_raw_idb_{mode}"] = {
            "ratio": ratio(statistics.median(audit), statistics.median(raw)),
            "goal": "report (no stated bound); 1.0 = as fast as the raw put loop",
            "met": None,
        }
    return {"figures": figures, "goals": goals}
