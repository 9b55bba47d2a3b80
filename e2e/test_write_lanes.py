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
