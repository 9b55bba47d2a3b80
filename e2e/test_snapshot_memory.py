"""Every boot starts Python from the site's snapshot and keeps no copy of it in memory (issue
18; docs/operations.md, "Round five"); a returning visit restores the inflated copy the first
boot kept in Cache Storage.

The snapshot (``pyodide/python-snapshot.bin.gz``, about 31 MB once inflated: the Wasm memory
of a freshly started Python, made by the build) is fetched, inflated and handed to Pyodide's
loader, which keeps its options for the worker's life; handed as a plain Uint8Array it stayed
alive beside the heap it had been copied into (49.5 MB of ArrayBuffers outside the Wasm memory
against 18.0 MB). The probe is the host worker's ArrayBuffers outside the Wasm memory (CDP
``Runtime.getHeapUsage`` ``backingStorageSize``, after a garbage collection), the figure
``python -m bench --only projects`` reports: after a boot that restored the snapshot it must
stay under the snapshot's own size. That the boot really restored it is what the host says
on ready (``versions.python_start``, and ``versions.python_snapshot``: ``fetched`` — the pinned
file, inflated — or ``kept``), for a first boot and for a reload.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.site import BenchSite

MB = 1_000_000
HOST_WORKER = "worker/host.mjs"
STARTED = "() => [window.voicebox.host.versions.python_start, window.voicebox.host.versions.python_snapshot]"


def test_a_boot_restores_the_shipped_snapshot_a_reload_its_kept_copy_neither_in_memory(
    dist: Path, playwright: Playwright
) -> None:
    snapshot = len(gzip.decompress((dist / "pyodide" / "python-snapshot.bin.gz").read_bytes()))
    site = BenchSite(dist)
    site.start()
    try:
        with Profile(playwright) as profile:
            profile.goto(site.url)
            profile.wait_status()
            host.ok(profile, "project.list")
            first = profile.evaluate(STARTED)
            cold = profile.worker_memory(HOST_WORKER)["backing_store_bytes"]

            profile.reload()
            profile.wait_status()
            host.ok(profile, "project.list")
            again = profile.evaluate(STARTED)
            warm = profile.worker_memory(HOST_WORKER)["backing_store_bytes"]
            assert profile.console_errors == []
    finally:
        site.close()

    print(
        f"\nsnapshot {snapshot / MB:.1f} MB; ArrayBuffers outside the Wasm memory: "
        f"first boot {cold / MB:.1f} MB, reload {warm / MB:.1f} MB"
    )
    # the first boot inflates the pinned file and keeps the inflated copy; the reload restores
    # that copy (no inflating on a returning visit: the warm boot's regression, issue 18)
    assert (first, again) == (["snapshot", "fetched"], ["snapshot", "kept"])
    assert snapshot > 10 * MB
    assert cold < snapshot
    assert warm < snapshot
