"""What code in the workers can reach (issue 13, finding 8; SPEC §2, §12; docs/operations.md,
"What the workers can reach").

The site is served the way a plain static host serves it — with none of our headers, so the
workers run without their CSP — from a real server on 127.0.0.1 (nested workers are not routed
by Playwright). A loopback observer on another port (another origin) records every request
that reaches it. Code run in the host worker, in an environment-server worker and in an export
reader lane (worker/byte-lane.mjs; through Playwright's ``worker.evaluate``, in the worker's own
global scope) tries every way out it has: it must reach nothing. ``import()`` cannot be wrapped from JavaScript: without the header it
is stopped by the service worker once that controls the site; with the header, by the CSP.
"""

from __future__ import annotations

import http.server
import socketserver
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Worker

from e2e.hostpage import HostPage
from worker.sitebuild.serve import make_server

MAX_SEEN = 200
GRACE_S = 1.5

TRY_EVERY_WAY_OUT = """
async (foreign) => {
  const site = new URL("../", self.location.href).href;
  const own = new URL("site-manifest.json", site).href;
  const out = {};
  const attempt = async (name, go) => {
    try { out[name] = `sent: ${await go()}`; } catch (err) { out[name] = `refused: ${err.message}`; }
  };
  const settle = (target, open, fail) => new Promise((resolve) => {
    target[open] = () => resolve("opened");
    target[fail] = () => resolve("error event");
    setTimeout(() => resolve("no answer"), 2000);
  });
  const wait = (promise) => Promise.race([promise, new Promise((r) => setTimeout(() => r("no answer"), 2000))]);
  // the crafted object of the finding: its url is this site, its text another origin
  await attempt("fetch-crafted", () => fetch({ url: own, toString: () => `${foreign}/fetch-crafted` }).then((r) => r.status));
  await attempt("fetch", () => fetch(`${foreign}/fetch`).then((r) => r.status));
  await attempt("fetch-request", () => fetch(new Request(`${foreign}/fetch-request`)).then((r) => r.status));
  await attempt("fetch-post", () => fetch(`${foreign}/fetch-post`, { method: "POST", body: "x" }).then((r) => r.status));
  // the original on the prototype that defines it (WorkerGlobalScope.prototype), not the global's own
  for (let o = Object.getPrototypeOf(self), i = 0; o !== null; o = Object.getPrototypeOf(o), i++) {
    if (Object.prototype.hasOwnProperty.call(o, "fetch")) {
      await attempt(`fetch-prototype-${i}`, () => o.fetch.call(self, `${foreign}/fetch-prototype-${i}`).then((r) => r.status));
    }
  }
  await attempt("xhr", () => new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("GET", `${foreign}/xhr`);
    xhr.onloadend = () => resolve(xhr.status);
    xhr.send();
  }));
  let reads = 0;
  const flipping = { toString: () => (reads++ === 0 ? own : `${foreign}/xhr-crafted`) };
  await attempt("xhr-crafted", () => new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("GET", flipping);
    xhr.onloadend = () => resolve(xhr.status);
    xhr.send();
  }));
  await attempt("websocket", () => settle(new WebSocket(`${foreign.replace("http", "ws")}/websocket`), "onopen", "onerror"));
  await attempt("websocketstream", () => wait(new WebSocketStream(`${foreign.replace("http", "ws")}/websocketstream`).opened));
  await attempt("eventsource", () => settle(new EventSource(`${foreign}/eventsource`), "onopen", "onerror"));
  await attempt("webtransport", () => wait(new WebTransport(`${foreign.replace("http", "https")}/webtransport`).ready));
  await attempt("fontface", () => wait(new FontFace("probe", `url(${foreign}/fontface)`).load()));
  await attempt("cache-add", () => caches.open("egress-probe").then((c) => c.add(`${foreign}/cache-add`)));
  await attempt("cache-addall", () => caches.open("egress-probe").then((c) => c.addAll([`${foreign}/cache-addall`])));
  const escape = (where) => `fetch(${JSON.stringify(`${foreign}/${where}`)}).then(() => postMessage("sent"), () => postMessage("failed"))`;
  const fromWorker = (url) => new Promise((resolve) => {
    const worker = new Worker(url);
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = () => resolve("error event");
    setTimeout(() => resolve("no answer"), 3000);
  });
  await attempt("blob-worker", () => fromWorker(URL.createObjectURL(new Blob([escape("blob-worker")], { type: "text/javascript" }))));
  await attempt("data-worker", () => fromWorker(`data:text/javascript,${encodeURIComponent(escape("data-worker"))}`));
  await attempt("importscripts", () => { importScripts(`${foreign}/importscripts`); return "ran"; });
  await attempt("notification", () => { new Notification("probe", { icon: `${foreign}/notification` }); return "made"; });
  // this site still works
  out.own = await fetch({ toString: () => own }).then((r) => r.status, (err) => err.message);
  return out;
}
"""

IMPORT = """
async (url) => import(url).then(() => "sent: loaded", (err) => `refused: ${err.message}`)
"""

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""


class Observer:
    """A loopback HTTP server that records every request line reaching it (at most
    :data:`MAX_SEEN`) and answers anything — even as a script a cross-origin import accepts."""

    def __init__(self) -> None:
        seen: list[str] = []
        self.seen = seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                if len(seen) < MAX_SEEN:
                    seen.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Type", "text/javascript")
                self.end_headers()
                self.wfile.write(b"export const reached = true;\n")

            do_GET = do_POST = do_PUT = do_OPTIONS = _any

            def log_message(self, format: str, *args: object) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Observer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def observer() -> Iterator[Observer]:
    """The loopback observer, stopped after the test."""
    with Observer() as running:
        yield running


@pytest.fixture(scope="module", params=["no-headers", "recommended-headers"])
def served(request: pytest.FixtureRequest, dist: Path) -> Iterator[tuple[str, str]]:
    """``dist/`` on 127.0.0.1 as a plain static host (no header of ours) or with the
    recommended headers: ``(how, url)``."""
    server = make_server(dist, 0, headers=request.param == "recommended-headers")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield request.param, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _worker(page: Page, script: str) -> Worker:
    found = [w for w in page.workers if w.url.endswith(f"worker/{script}")]
    # the export's reader lanes are alike: any one of them
    assert len(found) == 1 or (found and script == "byte-lane.mjs"), [w.url for w in page.workers]
    return found[0]


def _start_workers(host: HostPage) -> None:
    """Start the host's nested workers: an environment server, and the export's reader lanes
    (started by an export)."""
    host.ok("env.create", {"name": "studio"}, human=True)
    pid = host.ok("project.create", {"name": "lanes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "a.txt"}, b"a file to export")
    host.page.evaluate(
        "async (pid) => (await window.voicebox.host.call('project.export', { project: pid })).stream.size",
        pid,
    )


def _open(browser: Browser, url: str) -> HostPage:
    context = browser.new_context()
    host = HostPage(context.new_page())
    host.open(url)
    return host


def _assert_reaches_nothing(worker: Worker, observer: Observer, who: str) -> None:
    outcomes = worker.evaluate(TRY_EVERY_WAY_OUT, f"{observer.url}/{who}")
    time.sleep(GRACE_S)  # a request still on its way
    assert observer.seen == [], (observer.seen, outcomes)
    assert outcomes.pop("own") == 200, "the worker still reaches its own site"
    # read once, checked, and that text sent: the site's own file, never the second reading
    assert outcomes.pop("xhr-crafted") == "sent: 200"
    assert any(name.startswith("fetch-prototype-") for name in outcomes), outcomes
    leaked = {name: why for name, why in outcomes.items() if not why.startswith("refused")}
    assert leaked == {}, leaked


def test_worker_code_reaches_no_other_origin_by_any_api_even_without_the_worker_csp_header(
    browser: Browser, served: tuple[str, str], observer: Observer
) -> None:
    how, url = served
    worker_csp = urllib.request.urlopen(f"{url}worker/host.mjs").headers["Content-Security-Policy"]
    assert (worker_csp is None) == (how == "no-headers")
    lane_csp = urllib.request.urlopen(f"{url}worker/byte-lane.mjs").headers
    assert lane_csp["Content-Security-Policy"] == worker_csp  # the lanes get the workers' CSP
    host = _open(browser, url)
    try:
        _start_workers(host)
        _assert_reaches_nothing(_worker(host.page, "host.mjs"), observer, "host")
        _assert_reaches_nothing(_worker(host.page, "peer.mjs"), observer, "peer")
        _assert_reaches_nothing(_worker(host.page, "byte-lane.mjs"), observer, "lane")
        host.assert_custody()
        assert host.page_errors == [] and host.dialogs == []
    finally:
        host.page.context.close()


def test_import_from_worker_code_reaches_no_other_origin_once_the_site_is_controlled(
    browser: Browser, served: tuple[str, str], observer: Observer
) -> None:
    """``import()`` cannot be wrapped: without the header the service worker refuses every
    other origin once it controls the site (the first visit it does not — docs/operations.md);
    with the header the CSP refuses it from the first load."""
    how, url = served
    host = _open(browser, url)
    try:
        if how == "no-headers":
            host.page.wait_for_function(CONTROLLED, timeout=60_000)
            host.reload()  # this load's workers start controlled
        _start_workers(host)
        for script in ("host.mjs", "peer.mjs", "byte-lane.mjs"):
            outcome = _worker(host.page, script).evaluate(IMPORT, f"{observer.url}/{script}.mjs")
            time.sleep(GRACE_S)
            assert observer.seen == [], (script, outcome)
            assert outcome.startswith("refused"), (script, outcome)
        host.assert_custody()
        assert host.page_errors == [] and host.dialogs == []
    finally:
        host.page.context.close()


DATA_IMPORT = """
async () => import("data:text/javascript,export default 1").then(() => "ran", (err) => `refused: ${err.message}`)
"""

WORKER_SCRIPT_CSP = """
async () => (await fetch("worker/host.mjs", { cache: "no-store" })).headers.get("content-security-policy")
"""


@pytest.fixture
def plain(dist: Path) -> Iterator[str]:
    """``dist/`` on 127.0.0.1 as a plain static host: no header of ours."""
    server = make_server(dist, 0, headers=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _controlled_then_reloaded(browser: Browser, url: str) -> HostPage:
    host = _open(browser, url)
    host.page.wait_for_function(CONTROLLED, timeout=60_000)
    host.reload()  # this load's workers start controlled
    return host


def test_worker_scripts_get_the_workers_csp_from_the_service_worker_on_a_plain_host(
    browser: Browser, plain: str
) -> None:
    """The one CSP (worker/sitebuild/serve.py), stamped into sw.js, is the worker scripts'
    header once the service worker serves them — and the host worker runs under it: even an
    import of a ``data:`` module, which no request shows the service worker, is refused."""
    from worker.sitebuild.serve import service_worker_worker_csp

    assert (
        urllib.request.urlopen(f"{plain}worker/host.mjs").headers["Content-Security-Policy"] is None
    )
    host = _controlled_then_reloaded(browser, plain)
    try:
        assert host.page.evaluate(WORKER_SCRIPT_CSP) == service_worker_worker_csp()
        outcome = _worker(host.page, "host.mjs").evaluate(DATA_IMPORT)
        assert outcome.startswith("refused"), outcome
        host.ok("project.create", {"name": "still works"})
        assert host.page_errors == [] and host.dialogs == []
    finally:
        host.page.context.close()


def test_import_from_the_host_worker_reaches_no_other_origin_after_a_hard_reload(
    browser: Browser, plain: str, observer: Observer
) -> None:
    """A hard reload loads the page without its service worker; the page has it claim the page
    before the host worker starts, so ``import()`` of another origin is still refused."""
    host = _controlled_then_reloaded(browser, plain)
    try:
        cdp = host.page.context.new_cdp_session(host.page)
        cdp.send("Page.reload", {"ignoreCache": True})
        host.wait_ready()
        outcome = _worker(host.page, "host.mjs").evaluate(IMPORT, f"{observer.url}/hard.mjs")
        time.sleep(GRACE_S)  # a request still on its way
        assert observer.seen == [], outcome
        assert outcome.startswith("refused"), outcome
        assert host.page.evaluate("navigator.serviceWorker.controller !== null")
        assert host.page_errors == [] and host.dialogs == []
    finally:
        host.page.context.close()
