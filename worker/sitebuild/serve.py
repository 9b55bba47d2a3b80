"""Serve ``dist/`` on 127.0.0.1 with the recommended headers (SPEC §2).

The site works from any static host with no special headers; this server adds the ones that
harden it, which a host that can set headers should copy (see docs/operations.md):

- worker scripts get their own CSP — a worker's CSP can only come from its response header:
  ``default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; worker-src
  'self'`` (Pyodide needs ``'wasm-unsafe-eval'``, nothing needs ``'unsafe-eval'``);
- the service worker (``sw.js``, the offline cache) gets ``default-src 'self'; script-src
  'self'; connect-src 'self'`` (it only reads this site's own files into its cache);
- every response: ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``;
- HTML: ``frame-ancestors 'none'`` (only possible as a header).

``python -m worker.sitebuild.serve [--port 8000] [--dir dist]``
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import socketserver
from pathlib import Path

__all__ = ["SERVICE_WORKER_CSP", "WORKER_CSP", "headers_for", "serve"]

WORKER_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; "
    "worker-src 'self'"
)
WORKER_SCRIPTS = ("worker/host.mjs", "worker/peer.mjs")
SERVICE_WORKER_CSP = "default-src 'self'; script-src 'self'; connect-src 'self'"


def headers_for(path: str) -> dict[str, str]:
    """The extra response headers for the site-relative ``path`` (no leading slash)."""
    out = {
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    if path.endswith(WORKER_SCRIPTS):
        out["Content-Security-Policy"] = WORKER_CSP
    if path == "sw.js":
        out["Content-Security-Policy"] = SERVICE_WORKER_CSP
    if path == "" or path.endswith(".html"):
        # the sandbox page is framed by our own page; nothing else is ever framed
        ancestors = "'self'" if path.endswith("tools/sandbox.html") else "'none'"
        out["Content-Security-Policy"] = f"frame-ancestors {ancestors}"
    return out


class _Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        rel = self.path.split("?", 1)[0].lstrip("/")
        for key, value in headers_for(rel).items():
            self.send_header(key, value)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _PlainHandler(http.server.SimpleHTTPRequestHandler):
    """A static host that sends no header of ours (tests: what holds without them)."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def make_server(
    directory: Path, port: int = 0, host: str = "127.0.0.1", *, headers: bool = True
) -> _Server:
    """A server for ``directory`` bound to ``host:port`` (0 = any free port), not started.

    ``headers=False`` serves like a plain static host: none of the recommended headers."""
    base = _Handler if headers else _PlainHandler
    handler = functools.partial(base, directory=str(directory))
    return _Server((host, port), handler)


def serve(directory: Path, port: int) -> None:
    """Serve until interrupted, printing the URL."""
    with make_server(directory, port) as server:
        host, bound = server.server_address[:2]
        print(f"Serving {directory} at http://{host}:{bound}/  (Ctrl+C to stop)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m worker.sitebuild.serve")
    parser.add_argument("--dir", type=Path, default=Path("dist"))
    parser.add_argument("--port", type=int, default=8000)
    ns = parser.parse_args()
    serve(ns.dir, ns.port)
