"""Precompiled bytecode for the site's wheels (boot speed; SPEC §2).

Pyodide ships the standard library compiled, but wheels hold only ``.py`` sources, so every
boot compiled ~200 modules (pydantic, jinja2, our own core) before the host could start. The
build compiles them once with the pinned Pyodide's own CPython under Node
(``worker/sitebuild/bytecode.mjs``) into ``pyodide/site-bytecode.zip.gz`` (a zip of stored
entries, gzipped whole); the worker fetches it with browser SRI (its sha256 from
``site-manifest.json``) and inflates it while Python starts, and writes its files into
site-packages after the wheels (``worker/zip-entries.mjs``). The ``.pyc`` files are
``CHECKED_HASH``: Python uses one only when its source's hash matches, so a stale one is
ignored, never run. The output is reproducible (sorted names, fixed times, no time in the
gzip header), so it is pinned like every other file.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from worker.sitebuild.wheels import BuildError

__all__ = ["BYTECODE_NAME", "compile_bytecode"]

BYTECODE_NAME = "site-bytecode.zip.gz"


def compile_bytecode(root: Path, pyodide_dir: Path) -> Path:
    """Write ``pyodide_dir/site-bytecode.zip.gz`` from the wheels of ``pyodide_dir``'s lock; return
    its path. Raises :class:`BuildError` when Node is missing or compiling fails."""
    node = shutil.which("node")
    if node is None:
        raise BuildError("node is needed to compile the wheels' bytecode (apt-get install nodejs)")
    out = pyodide_dir / BYTECODE_NAME
    done = subprocess.run(
        [node, str(root / "worker" / "sitebuild" / "bytecode.mjs"), f"{pyodide_dir}/", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not out.exists():
        raise BuildError(f"compiling the wheels' bytecode failed:\n{done.stdout}\n{done.stderr}")
    return out
