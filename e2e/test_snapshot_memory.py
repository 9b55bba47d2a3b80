"""A warm boot keeps no copy of the Python snapshot it restored (issue 18; docs/operations.md,
"Open and memory").

The snapshot (about 31 MB: the Wasm memory of a freshly started Python) is read from Cache
Storage and handed to Pyodide's loader, which keeps its options for the worker's life; handed
as a plain Uint8Array it stayed alive beside the heap it had been copied into. The probe is the
host worker's ArrayBuffers outside the Wasm memory (CDP ``Runtime.getHeapUsage``
``backingStorageSize``, after a garbage collection), the same figure ``python -m bench --only
projects`` reports: after a boot that restored the snapshot it must not exceed the cold boot's
by anything near the snapshot's size. That the reload really restored it is checked by the
snapshot still being in Cache Storage afterwards (a snapshot that fails to restore is deleted,
worker/boot.mjs).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.site import BenchSite

MB = 1_000_000
HOST_WORKER = "worker/host.mjs"

SNAPSHOT_SIZE = """
async () => {
  for (const name of await caches.keys()) {
    if (!name.startsWith("voicebox-snapshot-")) continue;
    const cache = await caches.open(name);
    const hit = await cache.match(new URL("pyodide/.memory-snapshot", location.href).href);
    if (hit) return (await hit.arrayBuffer()).byteLength;
  }
  return 0;
}
"""


def test_a_restored_boot_keeps_no_copy_of_the_snapshot(dist: Path, playwright: Playwright) -> None:
    site = BenchSite(dist)
    site.start()
    try:
        with Profile(playwright) as profile:
            profile.goto(site.url)
            profile.wait_status()
            host.ok(profile, "project.list")
            cold = profile.worker_memory(HOST_WORKER)["backing_store_bytes"]
            snapshot = 0
            for _ in range(240):  # made in the background after ready (snapshot-maker.mjs)
                snapshot = profile.evaluate(SNAPSHOT_SIZE)
                if snapshot:
                    break
                profile.page.wait_for_timeout(500)

            profile.reload()
            profile.wait_status()
            host.ok(profile, "project.list")
            warm = profile.worker_memory(HOST_WORKER)["backing_store_bytes"]
            assert profile.evaluate(SNAPSHOT_SIZE) == snapshot  # restored, so not dropped
            assert profile.console_errors == []
    finally:
        site.close()

    print(
        f"\nsnapshot {snapshot / MB:.1f} MB; ArrayBuffers outside the Wasm memory: "
        f"cold boot {cold / MB:.1f} MB, restored boot {warm / MB:.1f} MB"
    )
    assert snapshot > 10 * MB
    assert warm < cold + snapshot / 2
