"""Serve ``dist/`` on 127.0.0.1 with the recommended headers (SPEC §2).

The site works from any static host with no special headers; this server adds the ones that
harden it, which a host that can set headers should copy (see docs/operations.md):

- worker scripts get their own CSP — a worker's CSP can only come from its response header:
  ``default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; worker-src
  'self'`` (Pyodide needs ``'wasm-unsafe-eval'``, nothing needs ``'unsafe-eval'``);
- ``--peer-origin ORIGIN`` (repeatable; ``nox -s serve -- --peer-origin https://box:8765``)
  adds a remote environment server's origin, and its ``ws(s)`` form, to the worker scripts'
  ``connect-src``: a static header cannot list origins paired later, so the operator names the
  servers they mean to pair with; the worker's egress guard is the real allow-list (only the
  origins actually paired, decided in Python — docs/security.md, "Remote environments");
- on a host that sends none of these headers, the service worker gives the worker scripts
  :func:`service_worker_worker_csp` when it serves them (stamped into ``sw.js`` by the build,
  :mod:`worker.sitebuild.offline`; issue 29 item 12): this CSP with ``connect-src`` open to
  any http(s)/ws(s) origin, because a build cannot know the remote environments a person will
  pair — the egress guard decides those — while ``import()`` and every other load from another
  origin is closed;
- the service worker (``sw.js``, the offline cache) gets ``default-src 'self'; script-src
  'self'; connect-src 'self'`` (it only reads this site's own files into its cache);
- every response: ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``;
- HTML: ``frame-ancestors 'none'`` (only possible as a header);
- the two sandboxed frames (:data:`SANDBOXED_FRAMES`: the Python runtime's and the plugin
  sandbox's): ``sandbox allow-scripts`` as well, so the document has an opaque origin however
  it is framed — the service worker sends the same header when it answers that frame from its
  cache, which is what lets Run and create-asset work offline (issue 32; docs/python.md,
  "Offline").

``--local-env DIR`` also starts an environment server and its runner for ``DIR`` on loopback,
with the worker's CSP naming that server, and prints a pairing code
(:func:`server_host.local_env.run_local`; issue 30, "One command to try it").

``python -m worker.sitebuild.serve [--port 8000] [--dir dist] [--local-env DIR]``
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import socketserver
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "SANDBOXED_FRAMES",
    "SERVICE_WORKER_CSP",
    "WORKER_CSP",
    "WORKER_SCRIPTS",
    "headers_for",
    "serve",
    "service_worker_worker_csp",
    "worker_csp",
]

WORKER_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; "
    "worker-src 'self'"
)
WORKER_SCRIPTS = (
    "worker/host.mjs",
    "worker/peer.mjs",
    "worker/byte-lane.mjs",
    "worker/write-lane.mjs",
    "worker/broker.mjs",
)
SERVICE_WORKER_CSP = "default-src 'self'; script-src 'self'; connect-src 'self'"
SANDBOXED_FRAMES: dict[str, str] = {
    "runtime/python.html": "sandbox allow-scripts; frame-ancestors 'self'",
    "tools/sandbox.html": "sandbox allow-scripts; frame-ancestors 'self'",
}
"""Frame pages that must be sandboxed whatever frames them, with the header CSP each gets — from
this server and from the service worker, which stamps this table (:mod:`worker.sitebuild.
offline`) and puts the CSP on its cached answer (issue 32). ``sandbox`` without
``allow-same-origin`` gives the document an opaque origin exactly as the ``<iframe sandbox>``
attribute does; unlike the attribute it leaves the navigation to the service worker, which
Chromium never consults for a frame sandboxed by its attribute."""


def worker_csp(peer_origins: tuple[str, ...] = ()) -> str:
    """The worker scripts' CSP: :data:`WORKER_CSP`, with each of ``peer_origins`` (and its
    ``ws(s)`` form) added to ``connect-src``."""
    if not peer_origins:
        return WORKER_CSP
    extra = []
    for origin in peer_origins:
        ws = ("wss" if origin.startswith("https:") else "ws") + origin[origin.index(":") :]
        extra += [origin, ws]
    return WORKER_CSP.replace("connect-src 'self'", "connect-src 'self' " + " ".join(extra))


def service_worker_worker_csp() -> str:
    """The CSP the service worker (``page/sw.js``) puts on a worker script that arrives without
    one — a static host that sends no headers (issue 29 item 12; docs/operations.md, "What the
    workers can reach"). It is :data:`WORKER_CSP` (script, worker and every other load: this
    site only, so ``import()`` of another origin is refused by the browser) with ``connect-src``
    widened to any ``http(s)``/``ws(s)`` origin: the build cannot list the remote environments
    a person pairs later, and connections are what the worker's egress guard already allows
    only to the paired origins (``worker/egress-guard.mjs``; without a header there was no CSP
    at all). A response that carries the host's own CSP keeps it."""
    return worker_csp(("http:", "https:"))


def headers_for(path: str, peer_origins: tuple[str, ...] = ()) -> dict[str, str]:
    """The extra response headers for the site-relative ``path`` (no leading slash);
    ``peer_origins`` as :func:`worker_csp`."""
    out = {
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    if path.endswith(WORKER_SCRIPTS):
        out["Content-Security-Policy"] = worker_csp(peer_origins)
    if path == "sw.js":
        out["Content-Security-Policy"] = SERVICE_WORKER_CSP
    sandboxed = next((csp for frame, csp in SANDBOXED_FRAMES.items() if path.endswith(frame)), None)
    if sandboxed is not None:
        out["Content-Security-Policy"] = sandboxed
    elif path == "" or path.endswith(".html"):
        # only the sandboxed frames above are ever framed
        out["Content-Security-Policy"] = "frame-ancestors 'none'"
    return out


class _Handler(http.server.SimpleHTTPRequestHandler):
    peer_origins: tuple[str, ...] = ()

    def end_headers(self) -> None:
        rel = self.path.split("?", 1)[0].lstrip("/")
        for key, value in headers_for(rel, self.peer_origins).items():
            self.send_header(key, value)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a reload during a download: a broken pipe or
        a reset) is no error of the server's and prints nothing; anything else is printed as
        ``socketserver`` does."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _PlainHandler(http.server.SimpleHTTPRequestHandler):
    """A static host that sends no header of ours (tests: what holds without them)."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def make_server(
    directory: Path,
    port: int = 0,
    host: str = "127.0.0.1",
    *,
    headers: bool = True,
    peer_origins: tuple[str, ...] = (),
) -> _Server:
    """A server for ``directory`` bound to ``host:port`` (0 = any free port), not started.

    ``headers=False`` serves like a plain static host: none of the recommended headers.
    ``peer_origins``: remote environment servers the worker may connect to (:func:`worker_csp`).
    """
    base: type[http.server.SimpleHTTPRequestHandler] = _PlainHandler
    if headers:
        base = type("_PeerHandler", (_Handler,), {"peer_origins": tuple(peer_origins)})
    handler = functools.partial(base, directory=str(directory))
    return _Server((host, port), handler)


def serve(directory: Path, port: int, peer_origins: tuple[str, ...] = ()) -> None:
    """Serve until interrupted, printing the URL."""
    with make_server(directory, port, peer_origins=peer_origins) as server:
        host, bound = server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        print(f"Serving {directory} at http://{host}:{bound}/  (Ctrl+C to stop)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m worker.sitebuild.serve")
    parser.add_argument("--dir", type=Path, default=Path("dist"))
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--peer-origin",
        action="append",
        default=[],
        help="a remote environment server's origin the worker may connect to (repeatable)",
    )
    parser.add_argument(
        "--local-env",
        type=Path,
        metavar="DIR",
        help="also run an environment server and its runner for DIR on loopback (initialised "
        "with a demo project and runner if new) and print a pairing code",
    )
    parser.add_argument(
        "--env-port",
        type=int,
        default=8765,
        help="the --local-env server's port (8765, stable so a pairing survives a restart; "
        "0: a free one)",
    )
    ns = parser.parse_args()
    if ns.local_env is not None:
        from server_host.local_env import run_local

        raise SystemExit(run_local(ns.dir, ns.port, ns.local_env, ns.env_port))
    serve(ns.dir, ns.port, tuple(ns.peer_origin))
