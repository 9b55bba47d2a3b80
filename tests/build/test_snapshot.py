"""The Python memory snapshot the build ships (issue 18, cold boot; worker/sitebuild/snapshot.py).

It is made from the pinned runtime under Node, so it must be the same bytes on every build,
hold nothing of the machine that made it, and — since everyone restores the same bytes — give
every restored Python its own randomness: ``os.urandom``/``secrets`` reach the CSPRNG, and
``random`` is reseeded (``AFTER_RESTORE_CODE``, worker/snapshot.mjs).
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from worker.sitebuild.site import PYODIDE_FILES
from worker.sitebuild.snapshot import SNAPSHOT_NAME, make_snapshot

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "node_modules" / "pyodide"

RESTORE = """
import { loadPyodide } from "%(index)spyodide.mjs";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { AFTER_RESTORE_CODE } from "%(root)s/worker/snapshot.mjs";
const bytes = new Uint8Array(gunzipSync(readFileSync("%(snapshot)s")));
const pyodide = await loadPyodide({
  indexURL: "%(index)s", _loadSnapshot: bytes, stdout: () => {},
});
pyodide.runPython(AFTER_RESTORE_CODE);
console.log(pyodide.runPython(`
import json, os, random, secrets, sys
json.dumps({"urandom": os.urandom(16).hex(), "token": secrets.token_hex(16),
            "random": random.random(), "environ": dict(os.environ),
            "preloaded": all(m in sys.modules for m in ("json", "zipfile", "zoneinfo"))})
`));
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (RUNTIME / "package.json").exists():
        pytest.fail("node_modules/pyodide is missing: run `npm ci` (nox does)")
    folder = tmp_path_factory.mktemp("pyodide")
    for name in (*PYODIDE_FILES, "pyodide-lock.json"):
        shutil.copy2(RUNTIME / name, folder / name)
    return folder


def _restore(runtime: Path, snapshot: Path, tmp_path: Path) -> dict:
    script = tmp_path / "restore.mjs"
    script.write_text(
        RESTORE % {"index": f"{runtime}/", "root": ROOT, "snapshot": snapshot}, encoding="utf-8"
    )
    done = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_snapshot_is_reproducible_and_holds_nothing_of_the_build_machine(
    runtime: Path, tmp_path: Path
) -> None:
    first = make_snapshot(ROOT, runtime).read_bytes()
    again = make_snapshot(ROOT, runtime).read_bytes()
    assert first == again
    assert first[:2] == b"\x1f\x8b" and first[4:8] == b"\0\0\0\0"  # gzip, no time in it
    memory = gzip.decompress(first)
    assert len(memory) > 10_000_000
    for trace in (str(runtime).encode(), str(ROOT).encode(), b"/tmp/pytest"):
        assert trace not in memory  # no path of the machine or the checkout that made it


def test_each_restored_python_draws_its_own_randomness(runtime: Path, tmp_path: Path) -> None:
    snapshot = runtime / SNAPSHOT_NAME
    if not snapshot.exists():
        make_snapshot(ROOT, runtime)
    one = _restore(runtime, snapshot, tmp_path)
    two = _restore(runtime, snapshot, tmp_path)
    assert one["preloaded"] and two["preloaded"]
    assert one["urandom"] != two["urandom"]
    assert one["token"] != two["token"]
    assert one["random"] != two["random"]
    assert "PYTHONHASHSEED" not in one["environ"]
    assert one["environ"]["_"] == "./this.program"  # as a browser's own start says
