"""The site the benchmark drives: a temporary copy of ``dist/`` plus bench-only pages and data.

Nothing here is shipped. :class:`BenchSite` copies the built site into a temporary folder,
adds ``bench/`` (the pages in ``bench/pages/``: a bare Pyodide boot, the populate and audit
tools) and ``bench-data/`` (generated project contents), and serves the folder on
``127.0.0.1`` with the same response headers as ``nox -s serve``
(:func:`worker.sitebuild.serve.make_server`). The bench pages load the site's own
``pyodide/`` files, so "bare Pyodide" and the host start from the same bytes.

Project contents cross to the browser as one blob per project: ``bench-data/<name>.bin`` (the
files' bytes, concatenated) and ``bench-data/<name>.json`` (``[[path, offset, size], ...]``);
the populate worker writes them into OPFS ``projects/<id>/`` directly, so a 10,000-file project
is in place in seconds instead of 10,000 host calls.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from worker.sitebuild.serve import make_server

__all__ = ["BenchSite", "layout_files"]

PAGES = Path(__file__).resolve().parent / "pages"


def layout_files(count: int, total_bytes: int, seed: int = 7) -> Iterable[tuple[str, bytes]]:
    """``count`` files of about ``total_bytes`` in all, laid out like a source tree.

    The root holds ``README.md`` and folders ``d000/``, ``d001/``, ... of at most 100 files
    each (so the root listing of a 10,000-file project has 101 entries). Contents are
    pseudo-random bytes (incompressible), deterministic for ``seed``.
    """
    rng = random.Random(seed)
    size = max(1, total_bytes // max(count, 1))
    block = rng.randbytes(max(size, 1) + 4096)
    for i in range(count):
        name = "README.md" if i == 0 else f"d{(i - 1) // 100:03d}/f{(i - 1) % 100:02d}.bin"
        start = rng.randrange(0, 4096)
        yield name, block[start : start + size]


class BenchSite:
    """A served temporary copy of ``dist`` with the bench pages and data (see module doc)."""

    def __init__(self, dist: Path, workdir: Path | None = None) -> None:
        self._own = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="vbx-bench-")) if workdir is None else workdir
        self.root = self.workdir / "site"
        if self.root.exists():
            shutil.rmtree(self.root)
        shutil.copytree(dist, self.root)
        shutil.copytree(PAGES, self.root / "bench")
        self.data = self.root / "bench-data"
        self.data.mkdir()
        self.manifest = json.loads((self.root / "site-manifest.json").read_text(encoding="utf-8"))
        self._server = None
        self.url = ""

    def start(self) -> str:
        """Serve the folder on 127.0.0.1 (a free port); return the site's base URL."""
        self._server = make_server(self.root, 0)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        return self.url

    def add_project(self, name: str, files: Iterable[tuple[str, bytes]]) -> dict[str, int]:
        """Write project ``name``'s blob and index; return ``{"files", "bytes"}``."""
        index = []
        offset = 0
        with (self.data / f"{name}.bin").open("wb") as blob:
            for path, data in files:
                blob.write(data)
                index.append([path, offset, len(data)])
                offset += len(data)
        (self.data / f"{name}.json").write_text(json.dumps(index), encoding="utf-8")
        return {"files": len(index), "bytes": offset}

    def project_files(self, name: str) -> Iterable[tuple[str, bytes]]:
        """Read project ``name`` back as ``(path, bytes)`` pairs (for the CPython baseline)."""
        index = json.loads((self.data / f"{name}.json").read_text(encoding="utf-8"))
        with (self.data / f"{name}.bin").open("rb") as blob:
            for path, offset, size in index:
                blob.seek(offset)
                yield path, blob.read(size)

    def close(self) -> None:
        """Stop serving and remove the temporary folder (if this object made it)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._own:
            shutil.rmtree(self.workdir, ignore_errors=True)
