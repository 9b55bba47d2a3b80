"""The worker's zip reader (``worker/zip-entries.mjs`` over the pinned fflate; issue 34, cold
boot): the wheels' bytecode is read by JavaScript while Python starts and written into
site-packages, so it must give exactly the files Python's ``zipfile`` would, and refuse what it
does not take rather than write something else. Run under Node, the module beside the vendor
bundle the build makes (``vendor/fflate.mjs``), as in ``dist/``.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from worker.sitebuild.bundle import bundle_unzip

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``worker/zip-entries.mjs`` and ``vendor/fflate.mjs`` laid out as the build lays them."""
    root = tmp_path_factory.mktemp("site")
    (root / "worker").mkdir()
    shutil.copy2(ROOT / "worker" / "zip-entries.mjs", root / "worker" / "zip-entries.mjs")
    assert bundle_unzip(ROOT, root / "vendor") == ["fflate"]
    return root


READ = """
import { readFileSync } from "node:fs";
import { zipEntries, writeEntries } from "%(site)s/worker/zip-entries.mjs";
const raw = readFileSync("%(archive)s");
const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
try {
  const entries = await zipEntries(buffer);
  const written = {};
  const folders = [];
  const fs = {
    mkdirTree: (path) => folders.push(path),
    writeFile: (path, bytes) => { written[path] = Buffer.from(bytes).toString("hex"); },
  };
  writeEntries(fs, "/site", entries);
  console.log(JSON.stringify({ written, folders }));
} catch (err) {
  console.log(JSON.stringify({ refused: String(err.message) }));
}
"""


def _read(site: Path, tmp_path: Path, archive: bytes) -> dict:
    path = tmp_path / "archive.zip"
    path.write_bytes(archive)
    script = tmp_path / "read.mjs"
    script.write_text(READ % {"site": site, "archive": path}, encoding="utf-8")
    done = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def _zip(files: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        zf.writestr(zipfile.ZipInfo("pkg/"), b"")  # a folder entry: nothing written for it
        for name, data in files.items():
            zf.writestr(name, data)
    return out.getvalue()


FILES = {
    "top.pyc": b"\x00" * 3,
    "pkg/__pycache__/mod.cpython-314.pyc": bytes(range(256)) * 40,
    "pkg/sub/empty.pyc": b"",
}


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_every_file_is_written_with_its_bytes_under_the_root(
    site: Path, tmp_path: Path, method: int
) -> None:
    got = _read(site, tmp_path, _zip(FILES, method))
    assert got["written"] == {f"/site/{name}": data.hex() for name, data in FILES.items()}
    assert set(got["folders"]) == {"/site", "/site/pkg/__pycache__", "/site/pkg/sub"}


def test_the_shipped_form_a_gzipped_stored_zip_reads_once_inflated(
    site: Path, tmp_path: Path
) -> None:
    shipped = gzip.compress(_zip(FILES), mtime=0)
    assert _read(site, tmp_path, gzip.decompress(shipped))["written"]["/site/top.pyc"] == "000000"


@pytest.mark.parametrize("name", ["../escape.pyc", "/abs.pyc", "pkg/../../x.pyc", "a\\b.pyc"])
def test_a_path_that_leaves_the_root_is_refused(site: Path, tmp_path: Path, name: str) -> None:
    got = _read(site, tmp_path, _zip({name: b"x"}))
    assert "not a plain relative path" in got["refused"]


def test_a_damaged_archive_is_refused_not_half_read(site: Path, tmp_path: Path) -> None:
    assert "a damaged archive" in _read(site, tmp_path, _zip(FILES)[:-30])["refused"]


def test_an_entry_of_another_compression_is_refused(site: Path, tmp_path: Path) -> None:
    got = _read(site, tmp_path, _zip({"a.pyc": b"x" * 100}, zipfile.ZIP_BZIP2))
    assert "compression method 12" in got["refused"]
