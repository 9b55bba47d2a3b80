"""Many small files are written by writer workers beside the host (issue 34, stop 41;
``writeMany``'s pool in worker/opfs-io.mjs, worker/write-lane.mjs): an import's batches are
split among the writers and come back whole, and when one writer's shard fails the import is
refused and every file either writer wrote is rolled back — as a failed batch always was."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext

from core.archive.apply import IMPORT_BATCH_FILES
from e2e.hostpage import HostPage
from e2e.test_upload_many import (
    batch_records,
    open_project,
    walked,
)
from e2e.test_upload_many import (
    test_cancel_stops_an_upload_within_a_second_and_keeps_every_file_written as cancel_journey,
)

WRITER = "worker/write-lane.mjs"

RAW_FILES = """
async (pid) => {
  const root = await navigator.storage.getDirectory();
  const walk = async (dir, at) => {
    const out = [];
    for await (const [name, h] of dir.entries()) {
      if (at === "" && name === ".voicebox") continue;
      const path = at ? `${at}/${name}` : name;
      if (h.kind === "directory") out.push(...(await walk(h, path)));
      else out.push(path);
    }
    return out;
  };
  try {
    const dir = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(pid);
    return await walk(dir, "");
  } catch (err) {
    if (err.name === "NotFoundError") return null;
    throw err;
  }
}
"""

PROJECT_FOLDERS = """
async () => {
  const root = await navigator.storage.getDirectory();
  const names = [];
  for await (const name of (await root.getDirectoryHandle("projects")).keys()) names.push(name);
  return names.sort();
}
"""

BREAK_MOVES = """
() => {
  FileSystemHandle.prototype.move = async function () {
    throw new DOMException("no move (injected by the test)", "UnknownError");
  };
  return true;
}
"""

BREAK_SYNC_WRITES = """
() => {
  FileSystemFileHandle.prototype.createSyncAccessHandle = async function () {
    throw new DOMException("a failing disk (injected by the test)", "UnknownError");
  };
  return true;
}
"""


def zip_of(count: int) -> tuple[dict[str, bytes], bytes]:
    files = {f"d{n // 100:02d}/f{n:05d}.txt": f"line {n}\n".encode() for n in range(count)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return files, buf.getvalue()


@pytest.fixture
def served(served_context: BrowserContext, static_server: str) -> HostPage:
    """A ready host on the site served at 127.0.0.1: Playwright's routing does not serve a
    worker's own workers (e2e/conftest.py ``static_server``), so no writer could start."""
    host = HostPage(served_context.new_page())
    host.open(static_server)
    return host


def writers(host: HostPage) -> list:
    deadline = time.monotonic() + 10
    while True:
        found = [w for w in host.page.workers if w.url.endswith(WRITER)]
        if len(found) >= 2 or time.monotonic() > deadline:
            return found
        host.page.wait_for_timeout(50)


def test_an_imports_batches_are_written_by_writer_workers_beside_the_host(
    served: HostPage,
) -> None:
    host = served
    assert [w for w in host.page.workers if w.url.endswith(WRITER)] == []
    files, body = zip_of(IMPORT_BATCH_FILES + 150)
    answer = host.ok("project.import", {"name": "pooled"}, body)["result"]
    assert answer["files"] == len(files)
    assert len(writers(host)) == 2
    pid = answer["project"]["id"]
    assert sorted(host.page.evaluate(RAW_FILES, pid)) == sorted(files)  # no temporary left
    walked = host.ok("file.walk", {"project": pid})["result"]["files"]
    assert {f["path"]: f["size"] for f in walked} == {p: len(d) for p, d in files.items()}
    host.assert_clean()


def test_an_imports_files_are_written_in_place_by_the_writers_no_move_each(
    served: HostPage,
) -> None:
    # a staged import's root is its unit of atomicity (stop 43): the writers write each file
    # under its own name, so an import still succeeds when a writer cannot move any file
    host = served
    files, body = zip_of(400)
    host.ok("project.import", {"name": "starts the writers"}, body)
    pool = writers(host)
    assert len(pool) == 2
    assert all(w.evaluate(BREAK_MOVES) is True for w in pool)
    answer = host.ok("project.import", {"name": "in place"}, body)["result"]
    assert answer["files"] == len(files)
    pid = answer["project"]["id"]
    assert sorted(host.page.evaluate(RAW_FILES, pid)) == sorted(files)
    walked = host.ok("file.walk", {"project": pid})["result"]["files"]
    assert {f["path"]: f["size"] for f in walked} == {p: len(d) for p, d in files.items()}


def test_a_failed_writers_shard_rolls_back_every_file_of_the_import(served: HostPage) -> None:
    host = served
    files, body = zip_of(400)
    first = host.ok("project.import", {"name": "starts the writers"}, body)["result"]
    assert first["files"] == len(files)
    pool = writers(host)
    assert len(pool) == 2
    assert pool[1].evaluate(BREAK_SYNC_WRITES) is True  # the second shard's writer fails
    before = host.page.evaluate(PROJECT_FOLDERS)
    listed = host.ok("project.list")["result"]["projects"]
    refusal = host.refused("project.import", {"name": "half fails"}, body)
    assert refusal["code"].startswith("storage-"), refusal
    # the first writer's shard was written; the refusal took it back with the staged project
    assert host.page.evaluate(PROJECT_FOLDERS) == before
    assert host.ok("project.list")["result"]["projects"] == listed
    # the pool is still usable: the healthy writer's and the host's state are unharmed
    assert pool[1].evaluate("() => true") is True


def test_cancel_stops_an_upload_written_by_the_writers_within_a_second(
    served: HostPage, tmp_path: Path
) -> None:
    # the upload e2e's Cancel journey (e2e/test_upload_many.py), on a page whose batches the
    # writers write: Cancel still stops within 1 s, every file written stays whole and counted
    cancel_journey(served, tmp_path)
    assert len(writers(served)) == 2


CRASH_AFTER_MOVES = """
(after) => {
  // this writer dies mid-shard: once `after` of its files are moved into place, an uncaught
  // error ends it (the host sees its worker's error event) and every later step of it hangs,
  // so it writes nothing more; the temporaries it had open are left where they are
  const hang = () => new Promise(() => {});
  let moved = 0;
  const move = FileSystemFileHandle.prototype.move;
  FileSystemFileHandle.prototype.move = async function (...args) {
    if (moved >= after) return hang();
    await move.apply(this, args);
    moved += 1;
    if (moved === after) {
      const open = FileSystemFileHandle.prototype.createSyncAccessHandle;
      FileSystemFileHandle.prototype.createSyncAccessHandle = function () {
        return moved >= after ? hang() : open.call(this);
      };
      setTimeout(() => { throw new Error("the writer crashed (injected by the test)"); });
    }
  };
  return true;
}
"""


def folder_of(parent: Path, top: str, count: int) -> dict[str, bytes]:
    """``count`` one-line files under ``parent/top`` in folders of 100; path → bytes."""
    files = {}
    for n in range(count):
        rel = f"{top}/d{n // 100:03d}/f{n:05d}.txt"
        (parent / rel).parent.mkdir(parents=True, exist_ok=True)
        (parent / rel).write_bytes(f"{top} line {n}\n".encode())
        files[rel] = f"{top} line {n}\n".encode()
    return files


def test_an_upload_whose_writer_dies_mid_shard_keeps_and_counts_every_file_written(
    served: HostPage, tmp_path: Path
) -> None:
    """Issue 34, stop 42: a writer worker that dies while writing its shard of an UPLOAD
    batch. What it had moved into place is kept AND listed (the answer, the audit record and
    the summary count it), what it had not written is not said to be written, no temporary is
    left in the project, and a later upload starts new writers."""
    host = served
    page = host.page
    project = open_project(host, "writer dies")
    first = folder_of(tmp_path, "warm", 100)  # a batch of 100: starts the two writers
    page.set_input_files("#upload-folder", str(tmp_path / "warm"))
    page.wait_for_selector("text=Uploaded 100 files")
    pool = writers(host)
    assert len(pool) == 2
    crash_after = 20
    assert pool[1].evaluate(CRASH_AFTER_MOVES, crash_after) is True  # each batch's 2nd half
    second = folder_of(tmp_path, "cut", 1000)
    page.set_input_files("#upload-folder", str(tmp_path / "cut"))
    page.wait_for_selector("text=Stopped: uploaded", timeout=60_000)
    summary = page.text_content("#files-status") or ""
    done = walked(host, project)
    kept = {p: s for p, s in done.items() if p.startswith("cut/")}
    # the first batch's first shard (100 files) whole, and what the dying writer moved in
    assert 100 + crash_after <= len(kept) < 200, (len(kept), summary)
    for path, size in kept.items():
        assert size == len(second[path])
    assert f"Stopped: uploaded {len(kept)} of 1000 files" in summary, summary
    assert f"; {200 - len(kept)} not written" in summary, summary
    # no temporary left anywhere in the project: storage holds exactly the files listed
    assert sorted(page.evaluate(RAW_FILES, project)) == sorted(done)
    assert set(done) == set(first) | set(kept)
    records = batch_records(host)
    assert sum(r["details"]["files"] for r in records) == len(done)
    assert host.ok("audit.verify")["result"]["ok"] is True
    # the pool was ended with the dead writer; the next upload starts new writers
    again = folder_of(tmp_path, "after", 100)
    page.set_input_files("#upload-folder", str(tmp_path / "after"))
    page.wait_for_selector("text=Uploaded 100 files")
    assert {p for p in walked(host, project) if p.startswith("after/")} == set(again)
    assert len([w for w in writers(host) if w not in pool]) == 2
    crashed = [e for e in host.console_errors if "injected by the test" not in e]
    assert crashed == [], crashed
