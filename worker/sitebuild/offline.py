"""The offline cache's service worker, stamped for one build (SPEC §2).

``page/sw.js`` is a template: the build replaces its ``BUILD`` placeholder with the site
manifest's build hash, its ``FILES`` marker with every pinned file (``[path, sha256]``), and
its ``WORKER_CSP`` / ``WORKER_SCRIPTS`` markers with the CSP it gives worker scripts served
without one and the scripts it gives it to — both from :mod:`worker.sitebuild.serve`, the one
place the workers' CSP is written (issue 29 item 12) —, its ``SANDBOXED_FRAMES`` marker with
the frame pages it answers with a ``sandbox`` CSP (the same table the server uses; issue 32),
and writes the result to the site's
root folder (a service worker's scope is its own folder). A new build therefore ships a
different ``sw.js``; the browser installs it, it precaches the new files and deletes the old
caches.

The build hash covers every file of the site except ``sw.js`` itself and
``site-manifest.json`` (which would make it depend on itself); ``sw.js`` is listed in the
manifest with its size and sha256 like every other file, and is not precached (the browser
keeps the service worker script itself).
"""

from __future__ import annotations

import json
from pathlib import Path

from worker.sitebuild.serve import SANDBOXED_FRAMES, WORKER_SCRIPTS, service_worker_worker_csp

__all__ = [
    "BUILD_MARK",
    "FILES_MARK",
    "SANDBOXED_FRAMES_MARK",
    "SW_NAME",
    "WORKER_CSP_MARK",
    "WORKER_SCRIPTS_MARK",
    "stamp_service_worker",
]

SW_NAME = "sw.js"
BUILD_MARK = '"__VOICEBOX_BUILD__"'
FILES_MARK = "/*__VOICEBOX_FILES__*/ []"
WORKER_CSP_MARK = '"__VOICEBOX_WORKER_CSP__"'
WORKER_SCRIPTS_MARK = "/*__VOICEBOX_WORKER_SCRIPTS__*/ []"
SANDBOXED_FRAMES_MARK = "/*__VOICEBOX_SANDBOXED_FRAMES__*/ {}"


class StampError(ValueError):
    """The template lacks a placeholder (the build refuses to ship an unstamped worker)."""


def stamp_service_worker(template: Path, dest: Path, build: str, files: list[dict]) -> Path:
    """Write ``dest/sw.js`` from ``template`` for ``build`` and ``files`` (manifest entries
    ``{path, size, sha256}``); return its path. Raises :class:`StampError` if a placeholder
    is missing."""
    text = template.read_text(encoding="utf-8")
    marks = (BUILD_MARK, FILES_MARK, WORKER_CSP_MARK, WORKER_SCRIPTS_MARK, SANDBOXED_FRAMES_MARK)
    for mark in marks:
        if text.count(mark) != 1:
            raise StampError(f"{template}: expected exactly one {mark}")
    pinned = [[f["path"], f["sha256"]] for f in files if f["path"] != SW_NAME]
    text = (
        text.replace(BUILD_MARK, json.dumps(build))
        .replace(FILES_MARK, json.dumps(pinned, separators=(",", ":")))
        .replace(WORKER_CSP_MARK, json.dumps(service_worker_worker_csp()))
        .replace(WORKER_SCRIPTS_MARK, json.dumps(list(WORKER_SCRIPTS)))
        .replace(SANDBOXED_FRAMES_MARK, json.dumps(SANDBOXED_FRAMES))
    )
    out = dest / SW_NAME
    out.write_text(text, encoding="utf-8")
    return out
