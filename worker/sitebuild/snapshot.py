"""The Python memory snapshot every boot restores (issue 18, cold boot; SPEC §2).

Starting CPython in Pyodide — initialising the interpreter and importing the standard library
the host needs — took ≈ 4.8 s of CPU on this 2-core machine in every first boot, most of the
bare Pyodide boot. The build does it once instead: ``worker/sitebuild/snapshot.mjs`` starts
the pinned runtime under Node in snapshot mode, imports ``PRELOAD`` (``worker/snapshot.mjs``)
and writes the Wasm memory; this module gzips it (fixed header, no time) into
``pyodide/python-snapshot.bin.gz``, pinned by sha256 in ``site-manifest.json`` like every
other file. The worker fetches it with browser SRI, inflates it with the browser's
``DecompressionStream`` and restores it (``worker/boot.mjs``). The snapshot holds no wheel (a
snapshot cannot hold a loaded shared library, and pydantic-core is one), no host code, no
storage and nothing secret. The output is reproducible: the same runtime gives the same bytes.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import tempfile
from pathlib import Path

from worker.sitebuild.wheels import SOURCE_DATE_EPOCH, BuildError

__all__ = ["SNAPSHOT_NAME", "make_snapshot"]

SNAPSHOT_NAME = "python-snapshot.bin.gz"


def make_snapshot(root: Path, pyodide_dir: Path) -> Path:
    """Write ``pyodide_dir/python-snapshot.bin.gz`` from the runtime in ``pyodide_dir``;
    return its path. Raises :class:`BuildError` when Node is missing or the snapshot fails."""
    node = shutil.which("node")
    if node is None:
        raise BuildError("node is needed to make the Python snapshot (apt-get install nodejs)")
    out = pyodide_dir / SNAPSHOT_NAME
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "snapshot.bin"
        done = subprocess.run(
            [
                node,
                str(root / "worker" / "sitebuild" / "snapshot.mjs"),
                f"{pyodide_dir}/",
                str(raw),
                SOURCE_DATE_EPOCH,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not raw.exists():
            raise BuildError(f"making the Python snapshot failed:\n{done.stdout}\n{done.stderr}")
        out.write_bytes(gzip.compress(raw.read_bytes(), compresslevel=9, mtime=0))
    return out
