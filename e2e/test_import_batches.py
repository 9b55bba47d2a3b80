"""An import in the browser hands storage a batch at a time (issue 34; docs/archives.md §6):
a zip of more files than one batch holds comes back whole — every file with its bytes, stored
and deflated entries alike, an empty one included — and no write temporary is left in the
project's OPFS folders."""

from __future__ import annotations

import hashlib
import io
import zipfile

from core.archive.apply import IMPORT_BATCH_FILES
from e2e.hostpage import HostPage

RAW_NAMES = """
async ([pid, folders]) => {
  const root = await navigator.storage.getDirectory();
  let dir = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(pid);
  const out = {};
  for (const folder of folders) {
    let d = dir;
    for (const seg of folder.split("/")) d = await d.getDirectoryHandle(seg);
    out[folder] = [];
    for await (const name of d.keys()) out[folder].push(name);
  }
  return out;
}
"""


def test_a_zip_of_more_files_than_a_batch_imports_whole_and_leaves_no_temporary(
    host: HostPage,
) -> None:
    count = IMPORT_BATCH_FILES + 150
    files = {f"d{n // 100:02d}/f{n:05d}.txt": f"line {n}\n".encode() for n in range(count)}
    files["d00/empty.txt"] = b""
    files["deflated/big.txt"] = b"a compressible line\n" * 20_000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in files.items():
            kind = zipfile.ZIP_DEFLATED if name.startswith("deflated/") else zipfile.ZIP_STORED
            archive.writestr(name, data, compress_type=kind)
    answer = host.ok("project.import", {"name": "batched"}, buf.getvalue())["result"]
    assert answer["files"] == len(files)
    pid = answer["project"]["id"]
    walked = host.ok("file.walk", {"project": pid})["result"]["files"]
    assert {f["path"]: f["size"] for f in walked} == {p: len(d) for p, d in files.items()}
    for path in ("d00/f00000.txt", "d11/f01149.txt", "d00/empty.txt", "deflated/big.txt"):
        read = host.ok("file.read", {"project": pid, "path": path})
        assert hashlib.sha256(read["body"] or b"").digest() == hashlib.sha256(files[path]).digest()
    folders = sorted({p.rsplit("/", 1)[0] for p in files})
    raw = host.page.evaluate(RAW_NAMES, [pid, folders])
    for folder in folders:
        expected = sorted(p.rsplit("/", 1)[1] for p in files if p.rsplit("/", 1)[0] == folder)
        assert sorted(raw[folder]) == expected, folder  # nothing else: no temporary left
    host.assert_clean()
