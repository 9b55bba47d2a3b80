"""Serving ``dist/`` to Chromium with no server: Playwright routing fulfils every request.

The site is mounted at ``https://app.test/vbx/`` — a secure context (OPFS works) and a
sub-path (proving relative URLs). Every request the browser makes is recorded; anything for
another origin is aborted and kept in :attr:`SiteRouter.foreign` so tests can assert there was
none. The worker script gets the same CSP header our ``serve`` command sends.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from playwright.sync_api import BrowserContext, Route

from worker.sitebuild.serve import headers_for

ORIGIN = "https://app.test"
MOUNT = "/vbx/"
BASE_URL = ORIGIN + MOUNT

mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("application/wasm", ".wasm")


@dataclass
class SiteRouter:
    """Fulfils ``https://app.test/vbx/*`` from ``dist``; aborts and records everything else."""

    dist: Path
    requests: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    blocked: set[str] = field(default_factory=set)
    offline: bool = False

    def install(self, context: BrowserContext) -> None:
        """Route every request of ``context`` through this router."""
        context.route("**/*", self._handle)

    def _handle(self, route: Route) -> None:
        url = route.request.url
        self.requests.append(url)
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != ORIGIN:
            self.foreign.append(url)
            route.abort("blockedbyclient")
            return
        if self.offline:
            route.abort("internetdisconnected")
            return
        path = unquote(parts.path)
        if not path.startswith(MOUNT):
            route.fulfill(status=404, body="not found")
            return
        rel = path[len(MOUNT) :] or "index.html"
        file = (self.dist / rel).resolve()
        if rel in self.blocked or not file.is_file() or self.dist.resolve() not in file.parents:
            route.fulfill(status=404, body="not found")
            return
        ctype = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        route.fulfill(
            status=200, body=file.read_bytes(), headers={"Content-Type": ctype, **headers_for(rel)}
        )
