"""A 200 MB project exports through the page with the host worker's memory growing by less
than 64 MB, and the progress bar moves (issue 4; SPEC §10: streaming, memory does not grow
with project size).

The files are written straight into the project's OPFS folder by the test, so the host's heap
holds none of them before the export; the figure is the growth of the host's Wasm memory
(Pyodide's heap, which never shrinks, so its growth is the peak) across the export."""

from __future__ import annotations

import zipfile
from pathlib import Path

from e2e.hostpage import HostPage

MB = 1 << 20
FILES = 20
FILE_MB = 10

FILL = """
async ([pid, files, mb]) => {
  let dir = await navigator.storage.getDirectory();
  for (const part of ["projects", pid, "big"]) dir = await dir.getDirectoryHandle(part, { create: true });
  const block = crypto.getRandomValues(new Uint8Array(1 << 16));
  for (let f = 0; f < files; f++) {
    const w = await (await dir.getFileHandle(`part-${String(f).padStart(2, "0")}.bin`, { create: true })).createWritable();
    for (let i = 0; i < mb * 16; i++) { block[0] = i & 255; block[1] = f; await w.write(block); }
    await w.close();
  }
}
"""


def _wasm_bytes(host: HostPage) -> int:
    return host.ok("host.info")["result"]["runtime"]["wasm_memory_bytes"]


def test_a_200_mb_project_exports_with_host_memory_growing_under_64_mb(
    host: HostPage, tmp_path: Path
) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "two hundred"})["result"]["project"]["id"]
    page.evaluate(FILL, [pid, FILES, FILE_MB])
    walk = host.ok("file.walk", {"project": pid})["result"]["files"]
    assert sum(f["size"] for f in walk) == FILES * FILE_MB * MB
    before = _wasm_bytes(host)

    page.click("nav >> text=Projects")
    page.wait_for_selector(f"tr[data-project-id='{pid}']")
    seen: list[float] = []
    with page.expect_download(timeout=240_000) as download:
        page.click(f"tr[data-project-id='{pid}'] button.project-export")
        page.wait_for_selector("#archive-progress progress")
        for _ in range(200):
            value = page.get_attribute("#archive-progress progress", "value")
            seen.append(float(value or 0))
            if seen[-1] >= FILES * FILE_MB * MB:
                break
            page.wait_for_timeout(100)
    saved = tmp_path / "export.zip"
    download.value.save_as(saved)
    growth = _wasm_bytes(host) - before
    print(
        f"\n200 MB export: host Wasm memory {before / MB:.1f} MB -> growth {growth / MB:.1f} MB; "
        f"archive {saved.stat().st_size / MB:.1f} MB"
    )

    assert growth < 64 * MB
    assert len({v for v in seen if 0 < v < FILES * FILE_MB * MB}) >= 2  # the bar moved
    with zipfile.ZipFile(saved) as zf:
        names = [n for n in zf.namelist() if n.startswith("big/")]
        assert len(names) == FILES
        assert zf.getinfo("big/part-00.bin").file_size == FILE_MB * MB
    host.assert_clean()
