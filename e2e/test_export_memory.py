"""Exports stream through the browser's byte path (issues 4 and 18; SPEC §10; docs/archives.md
§4): the files' bytes go OPFS → worker JavaScript → page without entering the Wasm heap, and the
archive is the one the core's own export makes, byte for byte.

The files are written straight into the project's OPFS folder by the test, so the host's heap
holds none of them before the export. The memory probe is ``host.info``'s runtime figures: the
host's Wasm memory (Pyodide's heap, which never shrinks, so its growth is the peak) and the byte
path's own count of the file bytes it held at once (``byte_path_peak_held_bytes``).

The byte path reads in reader lanes, workers the host worker starts (worker/byte-lane.mjs;
issue 18, round five), or in the host worker itself where no lane can start. The tests with the
``exporter`` fixture run both ways: under Playwright routing with service workers blocked — the
routing serves no nested worker (microsoft/playwright#27376), so the lanes fail to start and
the host reads (once the site's service worker controls a routed page, it serves the lanes'
script from its cache and they do start: hence the block) — and with the site on a real static
server at 127.0.0.1, where the lanes read."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from core.archive.export import ExportSource
from core.archive.manifest import MANIFEST_NAME
from core.time import instant_us
from e2e.hostpage import HostPage
from e2e.site import SiteRouter
from tests.archive.kit import GOLDEN_BIG, GOLDEN_FILES, GOLDEN_FOLDERS, export, golden, project

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


WHOLE_FILE_BYTES = 8 << 20  # browser_host/byte_path.py: the one-piece bound
CHUNK_BYTES = 8 << 20  # and the streaming piece

EXPORT = """
async ([pid]) => {
  const answer = await window.voicebox.host.call("project.export", { project: pid });
  const bytes = new Uint8Array(await answer.stream.arrayBuffer());
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { result: answer.result, b64: btoa(s) };
}
"""


LANES = 3  # worker/byte-path.mjs: reader lanes the host starts
LANE_SCRIPT = "worker/byte-lane.mjs"


@dataclass
class Exporter:
    """A ready host and how many reader lanes its exports start (0: it reads itself)."""

    host: HostPage
    lanes: int

    def assert_read_where_expected(self) -> None:
        """The exports so far started exactly that many reader lanes (asked right after an
        export: lanes idle for a minute are ended)."""
        started = [w for w in self.host.page.workers if w.url.endswith(LANE_SCRIPT)]
        assert len(started) == self.lanes


@pytest.fixture(params=["in the host worker", "in reader lanes"])
def exporter(
    request: pytest.FixtureRequest, browser: Browser, router: SiteRouter
) -> Iterator[Exporter]:
    """A ready host whose byte path reads in the host worker itself (routed, no service
    worker: no nested worker can start) or in its reader lanes (the site on 127.0.0.1)."""
    if request.param == "in the host worker":
        context = browser.new_context(service_workers="block")
        router.install(context)
        host = HostPage(context.new_page())
        host.open()
        yield Exporter(host, 0)
        context.close()
        return
    context = request.getfixturevalue("served_context")
    url: str = request.getfixturevalue("static_server")
    host = HostPage(context.new_page())
    host.open(url)
    yield Exporter(host, LANES)


def _runtime(host: HostPage) -> dict:
    return host.ok("host.info")["result"]["runtime"]


def _wasm_bytes(host: HostPage) -> int:
    return _runtime(host)["wasm_memory_bytes"]


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
    runtime = _runtime(host)
    assert runtime["byte_path_bytes"] == FILES * FILE_MB * MB  # every file byte took the path
    # 10 MB files are read in 8 MiB pieces: at most one piece held per reader (each lane, or
    # the host's own reader where no lane starts)
    assert runtime["byte_path_peak_held_bytes"] <= LANES * CHUNK_BYTES
    assert len({v for v in seen if 0 < v < FILES * FILE_MB * MB}) >= 2  # the bar moved
    with zipfile.ZipFile(saved) as zf:
        names = [n for n in zf.namelist() if n.startswith("big/")]
        assert len(names) == FILES
        assert zf.getinfo("big/part-00.bin").file_size == FILE_MB * MB
    host.assert_clean()


def test_a_project_over_the_one_piece_bound_streams_with_bounded_memory(exporter: Exporter) -> None:
    """Two 40 MiB files (over the 8 MiB one-piece bound): read, hashed and posted in 8 MiB
    pieces — each reader never holds more than one piece, the Wasm heap does not grow."""
    host = exporter.host
    pid = host.ok("project.create", {"name": "over the bound"})["result"]["project"]["id"]
    host.page.evaluate(FILL, [pid, 2, 40])
    # the export path's first use (its imports and first objects) before measuring: the heap
    # grows in steps, and one step taken by a first use is not bytes held (it took 8.7 MiB with
    # 2 MiB of files as with 80 once the host's own modules grew, stop 40)
    warm = host.ok("project.create", {"name": "warm-up"})["result"]["project"]["id"]
    host.ok("file.write", {"project": warm, "path": "a.txt"}, body=b"a\n", human=True)
    host.page.evaluate(EXPORT, [warm])
    before = _runtime(host)
    answer = host.page.evaluate(
        """async ([pid]) => { const a = await window.voicebox.host.call("project.export", { project: pid });
             return { size: a.stream.size, result: a.result }; }""",
        [pid],
    )
    exporter.assert_read_where_expected()
    after = _runtime(host)
    relayed = after["byte_path_bytes"] - before["byte_path_bytes"]
    print(
        f"\n80 MiB export: Wasm growth {(after['wasm_memory_bytes'] - before['wasm_memory_bytes']) / MB:.1f}"
        f" MiB, byte path peak held {after['byte_path_peak_held_bytes'] / MB:.1f} MiB"
    )
    assert answer["result"]["bytes"] == 80 * MB and answer["size"] == answer["result"]["size"]
    assert relayed == 80 * MB
    assert after["byte_path_peak_held_bytes"] <= max(1, exporter.lanes) * CHUNK_BYTES
    assert after["wasm_memory_bytes"] - before["wasm_memory_bytes"] < 4 * MB
    host.assert_clean()


def test_the_browser_byte_path_gives_the_cores_own_archive_byte_for_byte(
    exporter: Exporter,
) -> None:
    """The golden project (tests/archive/kit.py) exported by the browser host equals, byte for
    byte, the core's export of the same files under the same manifest head (name, envKey,
    project id, time — which name this host and this run); that export with the kit's fixed
    head is the committed golden sha256 (tests/archive/test_zipformat.py)."""
    host = exporter.host
    pid = host.ok("project.create", {"name": "Golden ü"})["result"]["project"]["id"]
    for path, data in GOLDEN_FILES.items():
        host.ok("file.write", {"project": pid, "path": path}, data)
    for folder in GOLDEN_FOLDERS:
        host.ok("file.mkdir", {"project": pid, "path": folder})
    before = _runtime(host)["byte_path_bytes"]
    out = host.page.evaluate(EXPORT, [pid])
    exporter.assert_read_where_expected()
    data = base64.b64decode(out["b64"])
    assert _runtime(host)["byte_path_bytes"] - before == sum(map(len, GOLDEN_FILES.values()))
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST_NAME))
    listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    assert listed == {p: hashlib.sha256(d).hexdigest() for p, d in GOLDEN_FILES.items()}
    assert len(GOLDEN_FILES[GOLDEN_BIG]) > WHOLE_FILE_BYTES  # the streaming hasher was used
    head = ExportSource(
        manifest["name"],
        instant_us(manifest["exported_at"]) // 1000,
        manifest["source_env_key"],
        manifest["source_project"],
    )
    expected, summary, _ = export(golden(), head)
    assert data == expected
    result = out["result"]
    assert (result["size"], result["manifest_sha256"]) == (summary.size, summary.manifest_sha256)
    host.assert_clean()


# The reader's edges (worker/byte-reader.mjs): nothing, one byte, either side of 64 KiB, exactly
# the one-piece bound and one byte over it (the streaming hasher), exactly two streaming pieces,
# two files that do not fit the staging buffer together (the staged bytes go out before the
# second is read), and more files than the reader opens ahead at once.
SMALL_BYTES = 64 << 10
AHEAD_FILES = 8  # worker/byte-reader.mjs: this many files are opened ahead
EDGE_SIZES = {
    "edge/empty.bin": 0,
    "edge/one.bin": 1,
    "edge/small-under.bin": SMALL_BYTES - 1,
    "edge/small-at.bin": SMALL_BYTES,
    "edge/stage-a.bin": 5 << 20,
    "edge/stage-b.bin": 5 << 20,
    "edge/whole-at.bin": WHOLE_FILE_BYTES,
    "edge/whole-over.bin": WHOLE_FILE_BYTES + 1,
    "edge/two-pieces.bin": 2 * CHUNK_BYTES,
    **{f"many/f{i:02d}.txt": 1000 + i for i in range(2 * AHEAD_FILES)},
}


def test_the_readers_edges_export_the_cores_own_archive_byte_for_byte(exporter: Exporter) -> None:
    """Each edge size above, written through the host: the archive the browser exports equals
    the core's export of the same files under the same manifest head, byte for byte, every
    listed sha256 is the file's, and importing it gives the files back. (In the lanes, the
    files are cut into runs of up to 8 MiB by their listed sizes: the edges give runs of one
    file, of a file over the bound, and of many small files.)"""
    host = exporter.host
    pid = host.ok("project.create", {"name": "edges"})["result"]["project"]["id"]
    rng = random.Random(18)
    files = {path: rng.randbytes(size) for path, size in EDGE_SIZES.items()}
    for path, data in files.items():
        host.ok("file.write", {"project": pid, "path": path}, data)
    before = _runtime(host)["byte_path_bytes"]
    out = host.page.evaluate(EXPORT, [pid])
    exporter.assert_read_where_expected()
    data = base64.b64decode(out["b64"])
    assert _runtime(host)["byte_path_bytes"] - before == sum(EDGE_SIZES.values())
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(archive.read(MANIFEST_NAME))
    listed = {f["path"]: (f["size"], f["sha256"]) for f in manifest["files"]}
    assert listed == {p: (len(d), hashlib.sha256(d).hexdigest()) for p, d in files.items()}
    assert archive.testzip() is None  # every entry's CRC-32 checks
    head = ExportSource(
        manifest["name"],
        instant_us(manifest["exported_at"]) // 1000,
        manifest["source_env_key"],
        manifest["source_project"],
    )
    expected, summary, _ = export(project(files), head)
    assert data == expected
    assert out["result"]["size"] == summary.size
    # and back: imported as a new project, every file has its bytes again
    back = host.ok("project.import", {"name": "edges again"}, data)["result"]["project"]["id"]
    walked = host.ok("file.walk", {"project": back})["result"]["files"]
    assert {f["path"]: f["size"] for f in walked} == {p: len(d) for p, d in files.items()}
    for path in ("edge/empty.bin", "edge/whole-over.bin", "many/f15.txt"):
        assert host.ok("file.read", {"project": back, "path": path})["body"] == files[path]
    host.assert_clean()


# A write to a file while the export has it open ahead (worker/opfs-io.mjs, "Lent handles"):
# the write waits for the reader rather than being refused, and what the page got is whole.
WRITE_DURING_EXPORT = """
async ([pid, paths, text]) => {
  let finished = false;
  const exporting = window.voicebox.host.call("project.export", { project: pid })
    .then((answer) => { finished = true; return answer; });
  const writes = [];
  for (const path of paths) {
    const body = new TextEncoder().encode(text).buffer;
    try {
      await window.voicebox.host.call("file.write", { project: pid, path }, { body });
      writes.push({ path, ok: true, during: !finished });
    } catch (err) {
      writes.push({ path, ok: false, code: err.code, during: !finished });
    }
  }
  const answer = await exporting;
  const bytes = new Uint8Array(await answer.stream.arrayBuffer());
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { writes, b64: btoa(s) };
}
"""


def test_a_write_while_the_export_reads_ahead_waits_and_the_archive_stays_whole(
    exporter: Exporter,
) -> None:
    """Each of 24 files written while an export of them runs: every write is admitted (none
    refused because the export's reader holds the file open — in the lanes, handles held in
    other workers), some land while the export is still running, and the archive the page
    holds afterwards reads whole: every entry is either the old or the new bytes, as the
    manifest's sha256 says."""
    host = exporter.host
    pid = host.ok("project.create", {"name": "busy export"})["result"]["project"]["id"]
    host.page.evaluate(FILL, [pid, 24, 1])
    paths = [f"big/part-{f:02d}.bin" for f in range(24)]
    text = "written while the export ran"
    out = host.page.evaluate(WRITE_DURING_EXPORT, [pid, paths, text])
    exporter.assert_read_where_expected()
    refused = [w for w in out["writes"] if not w["ok"]]
    assert refused == []
    assert any(w["during"] for w in out["writes"])  # the writes did meet the running export
    archive = zipfile.ZipFile(io.BytesIO(base64.b64decode(out["b64"])))
    assert archive.testzip() is None
    manifest = json.loads(archive.read(MANIFEST_NAME))
    assert sorted(f["path"] for f in manifest["files"]) == paths
    for listed in manifest["files"]:
        data = archive.read(listed["path"])
        assert hashlib.sha256(data).hexdigest() == listed["sha256"]
        assert data == text.encode() or len(data) == MB
    for path in paths:  # and every write is there afterwards
        assert host.ok("file.read", {"project": pid, "path": path})["body"] == text.encode()
    host.assert_clean()


# Two exports at once, of two projects (issue 18, round five): each reader reads one run after
# another, so the two never share a staging buffer; in the lanes, their runs interleave.
TWO_AT_ONCE = """
async ([a, b]) => {
  const one = (pid) => window.voicebox.host.call("project.export", { project: pid }).then(async (answer) => {
    const bytes = new Uint8Array(await answer.stream.arrayBuffer());
    let s = "";
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  });
  return Promise.all([one(a), one(b)]);
}
"""


def _head(data: bytes) -> ExportSource:
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST_NAME))
    return ExportSource(
        manifest["name"],
        instant_us(manifest["exported_at"]) // 1000,
        manifest["source_env_key"],
        manifest["source_project"],
    )


def test_two_exports_at_once_each_give_their_own_projects_archive(exporter: Exporter) -> None:
    """Two projects of several 1–3 MiB files (several staging buffers' worth each) exported at
    the same moment: each archive is, byte for byte, the core's export of its own files."""
    host = exporter.host
    rng = random.Random(5)
    projects = {}
    for name in ("left", "right"):
        pid = host.ok("project.create", {"name": name})["result"]["project"]["id"]
        files = {f"{name}/f{i:02d}.bin": rng.randbytes(rng.randint(1, 3) * MB) for i in range(9)}
        for path, data in files.items():
            host.ok("file.write", {"project": pid, "path": path}, data)
        projects[pid] = files
    got = host.page.evaluate(TWO_AT_ONCE, list(projects))
    exporter.assert_read_where_expected()
    for b64, files in zip(got, projects.values(), strict=True):
        data = base64.b64decode(b64)
        expected, _, _ = export(project(files), _head(data))
        assert data == expected
    host.assert_clean()


# A file removed behind the host's back (straight from OPFS, as another program would) once the
# export has begun sending: the export is refused, and every reader lets go of the files.
REMOVED_DURING_EXPORT = """
async ([pid, victim]) => {
  let removing = null;
  let dir = await navigator.storage.getDirectory();
  for (const part of ["projects", pid, "big"]) dir = await dir.getDirectoryHandle(part);
  const removeOnce = async () => {
    for (let tries = 0; ; tries++) {
      try { await dir.removeEntry(victim); return "removed"; }
      catch (err) { if (tries > 200) return `not removed: ${err.name}`; await new Promise((r) => setTimeout(r, 5)); }
    }
  };
  try {
    await window.voicebox.host.call("project.export", { project: pid },
      { onChunk: () => { removing ??= removeOnce(); } });
    return { refused: null, removed: await removing };
  } catch (err) {
    return { refused: err.code, removed: await removing };
  }
}
"""


def test_a_file_removed_while_exported_refuses_the_export_and_the_readers_let_go(
    exporter: Exporter,
) -> None:
    """96 files of 1 MiB; the last is removed from OPFS directly once the first bytes reached
    the page: the export answers ``file-not-found``; then every file can be written (no reader
    kept a handle open), and the next export is the core's own archive of the files.

    Why 96: the lanes are given runs of 7 such files, RUNS_PER_LANE at a time, and read them
    beside each other; the run holding the last file must not be given before the page can
    remove it (with 40 files, three lanes were given every run at once and sometimes read the
    last file before the first bytes reached the page: a CI run saw the export succeed)."""
    host = exporter.host
    pid = host.ok("project.create", {"name": "vanishing"})["result"]["project"]["id"]
    host.page.evaluate(FILL, [pid, 96, 1])
    out = host.page.evaluate(REMOVED_DURING_EXPORT, [pid, "part-95.bin"])
    assert out == {"refused": "file-not-found", "removed": "removed"}
    files = {f"big/part-{f:02d}.bin": bytes([f]) * 1000 for f in range(96)}
    for path, data in files.items():
        host.ok("file.write", {"project": pid, "path": path}, data)
    data = base64.b64decode(host.page.evaluate(EXPORT, [pid])["b64"])
    exporter.assert_read_where_expected()
    expected, _, _ = export(project(files), _head(data))
    assert data == expected
    host.assert_clean()
