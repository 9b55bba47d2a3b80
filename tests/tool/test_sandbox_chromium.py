"""The create-asset sandbox in headless Chromium (SPEC §8, issue 5).

A static server on 127.0.0.1 serves the built ``sandbox.html``, the shipped module, the
test-only modules and a harness page (tests/tool/sandbox_harness/) that plays the page's part:
it opens ``<iframe sandbox="allow-scripts">`` and hands over a MessagePort — directly, or to a
module worker standing in for the host worker. The server records every request, so a test can
say that nothing left the sandbox.

Debian's Chromium at /usr/bin/chromium, driven by Playwright (never ``playwright install``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Frame, Page, sync_playwright

from core.refusals import Code, Refused
from core.tools.asset_check import CreateAssetArgs, check_png
from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.tool.wasm_runner import run_create
from wasm_tools.build import build_sandbox

HARNESS = Path(__file__).parent / "sandbox_harness"
ICON = CreateAssetArgs(path="icon.png", width=96, height=64, seed=7, pattern="identicon")
ARGS = list(ICON.module_input())


class Site:
    """A threaded static server over one folder that records every request path."""

    def __init__(self, root: Path) -> None:
        self.requests: list[str] = []
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                site.requests.append(self.path)

        handler = functools.partial(Handler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, module_path: Path, test_modules: dict[str, Path]
) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("site")
    build_sandbox(root)
    shutil.copy(module_path, root / "create_asset.wasm")
    for name, path in test_modules.items():
        shutil.copy(path, root / f"{name}.wasm")
    for file in HARNESS.iterdir():
        shutil.copy(file, root / file.name)
    served = Site(root)
    yield served
    served.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.goto(f"{site.base}/index.html")
    yield opened
    context.close()


def open_sandbox(page: Page, sandbox: str | None = "allow-scripts") -> int:
    return page.evaluate("(s) => harness.open(s)", sandbox)


def connected(page: Page) -> int:
    index = open_sandbox(page)
    ready = page.evaluate("(i) => harness.connect(i)", index)
    assert ready is not None
    assert ready["type"] == "ready"
    return index


def run(
    page: Page, index: int, module: str, args: list[int] = ARGS, *, port: int = 0, **extra: int
) -> dict:
    """Run ``module`` in sandbox ``index`` (over its ``port``-th port); the answer, with
    ``elapsedMs`` added. ``extra`` goes into the request (``timeMs``, ``maxOutputBytes``)."""
    result = page.evaluate(
        "([i, m, a, e, p]) => harness.run(i, m, a, e, {portIndex: p})",
        [index, f"{module}.wasm", args, extra, port],
    )
    answer = result["answer"]
    assert answer is not None, f"{module}: no answer"
    assert answer["id"] == result["sentId"]
    return {**answer, "elapsedMs": result["elapsedMs"]}


def png_of(answer: dict) -> bytes:
    assert answer["ok"] is True, answer
    return base64.b64decode(answer["bytes"])


def sandbox_frame(page: Page, index: int) -> Frame:
    frame = page.query_selector_all("iframe")[index].content_frame()
    assert frame is not None
    return frame


# --- it works --------------------------------------------------------------------------------


def test_the_sandbox_returns_the_modules_png(page: Page, module_bytes: bytes) -> None:
    index = connected(page)
    first = png_of(run(page, index, "create_asset"))
    second = png_of(run(page, index, "create_asset"))
    info = check_png(first, width=96, height=64)
    assert (info.width, info.height) == (96, 64)
    # same arguments, same bytes: twice in Chromium, and the same as wasmtime in CPython
    assert hashlib.sha256(second).hexdigest() == info.sha256
    assert first == run_create(module_bytes, ICON.module_input())


def test_the_port_works_from_a_module_worker(page: Page) -> None:
    index = open_sandbox(page)
    seen = page.evaluate("([i, a]) => harness.viaWorker(i, 'create_asset.wasm', a)", [index, ARGS])
    assert seen["hello"]["type"] == "ready"
    assert seen["result"]["id"] == "via-worker"
    assert check_png(png_of(seen["result"]), width=96, height=64)


def test_the_shipped_module_imports_nothing_in_chromium(page: Page) -> None:
    assert page.evaluate("() => harness.moduleImports('create_asset.wasm')") == []


def test_a_large_image_fits_every_bound(page: Page) -> None:
    index = connected(page)
    args = CreateAssetArgs(path="n.png", width=1024, height=1024, pattern="noise")
    answer = run(page, index, "create_asset", list(args.module_input()))
    assert check_png(png_of(answer), width=1024, height=1024)


# --- bounds ----------------------------------------------------------------------------------


def test_a_runaway_module_is_stopped_while_the_page_stays_responsive(page: Page) -> None:
    index = connected(page)
    page.evaluate("([i, a]) => harness.start(i, 'runaway.wasm', a, {timeMs: 1000})", [index, ARGS])
    ticks_before = page.evaluate("window.ticks")
    time.sleep(0.2)
    page.click("#tick")
    other = run(page, index, "create_asset")  # another call, answered during the loop
    result = page.evaluate("harness.settle()")
    ticks_after = page.evaluate("window.ticks")

    answer = result["answer"]
    assert answer["code"] == "tool-timeout"
    assert 1000 <= result["elapsedMs"] < 2000  # the limit + 1 s
    assert page.evaluate("window.clicks.length") == 1
    assert ticks_after - ticks_before >= 25  # a 20 ms timer kept running through ~1 s
    assert other["ok"] is True
    assert other["elapsedMs"] < 800
    assert run(page, index, "create_asset")["ok"] is True  # the sandbox still works after


@pytest.mark.parametrize("module", ["memory_hog", "no_max_memory", "max_memory_too_large"])
def test_memory_past_the_cap_is_refused(page: Page, module: str) -> None:
    answer = run(page, connected(page), module)
    assert answer["ok"] is False
    assert answer["code"] == "tool-memory-exceeded"


@pytest.mark.parametrize("module", ["oversize_output", "out_of_bounds", "traps", "needs_import"])
def test_misbehaving_output_is_refused(page: Page, module: str) -> None:
    answer = run(page, connected(page), module)
    assert answer["ok"] is False
    assert answer["code"] == "tool-output-invalid"
    assert "bytes" not in answer


def test_malformed_bytes_pass_the_sandbox_but_not_the_host(page: Page) -> None:
    data = png_of(run(page, connected(page), "malformed"))
    with pytest.raises(Refused) as caught:
        check_png(data, width=96, height=64)
    assert caught.value.code is Code.TOOL_OUTPUT_INVALID


def test_the_output_cap_can_be_lowered_per_request(page: Page) -> None:
    answer = run(page, connected(page), "create_asset", maxOutputBytes=100)
    assert answer["code"] == "tool-output-invalid"


@pytest.mark.parametrize(
    "request_js",
    [
        "{wasm: new ArrayBuffer(8), args: new Uint8Array(1)}",
        "{id: 'x', wasm: 'not bytes', args: new Uint8Array(1)}",
        "{id: 'x', wasm: new ArrayBuffer(8), args: new Uint8Array(5000)}",
        "{id: 'x', wasm: new ArrayBuffer(2 * 1024 * 1024), args: new Uint8Array(1)}",
        "{id: 'x', wasm: new ArrayBuffer(8), args: new Uint8Array(1), timeMs: 60000}",
        "{id: 'x', wasm: new ArrayBuffer(8), args: new Uint8Array(1), maxOutputBytes: 2**30}",
    ],
)
def test_a_malformed_request_is_answered_not_dropped(page: Page, request_js: str) -> None:
    index = connected(page)
    answer = page.evaluate(
        f"(i) => {{ const r = {request_js}; r.id = r.id ?? null; return harness.call(i, r); }}",
        index,
    )
    assert answer is not None
    assert answer["ok"] is False
    assert answer["code"] == "message-malformed"


def test_too_many_runs_at_once_are_refused(page: Page) -> None:
    index = connected(page)
    results = page.evaluate(
        """([i, a]) => Promise.all([0, 1, 2, 3, 4].map(
             () => harness.run(i, 'runaway.wasm', a, {timeMs: 700})))""",
        [index, ARGS],
    )
    codes = sorted(r["answer"]["code"] for r in results)
    assert codes == ["sandbox-unavailable"] + ["tool-timeout"] * 4


# --- the connection --------------------------------------------------------------------------


def test_only_the_first_proper_port_from_the_parent_connects(page: Page) -> None:
    index = open_sandbox(page)
    connect = "([i, d, n]) => harness.connect(i, d, n, 500)"
    proper = {"type": "voicebox-sandbox-connect"}
    # the harness keeps the first port of each attempt: ports[0], [1], [2], [3]
    assert page.evaluate(connect, [index, {"type": "something-else"}, 1]) is None  # [0]
    assert page.evaluate(connect, [index, proper, 0]) is None
    assert page.evaluate(connect, [index, proper, 2]) is None  # [1]
    assert page.evaluate(connect, [index, proper, 1])["type"] == "ready"  # [2]
    assert page.evaluate(connect, [index, proper, 1]) is None  # [3], a later port: ignored
    on_ignored_port = page.evaluate(
        """(i) => harness.call(i, {id: 'late', wasm: new ArrayBuffer(8), args: new Uint8Array(1)},
                               {waitMs: 800, portIndex: 3})""",
        index,
    )
    assert on_ignored_port is None
    on_ignored_earlier = page.evaluate(
        """(i) => harness.call(i, {id: 'early', wasm: new ArrayBuffer(8), args: new Uint8Array(1)},
                               {waitMs: 800, portIndex: 0})""",
        index,
    )
    assert on_ignored_earlier is None
    assert run(page, index, "create_asset", port=2)["ok"] is True


@pytest.mark.parametrize("sandbox", [None, "allow-scripts allow-same-origin"])
def test_the_sandbox_refuses_to_work_with_a_real_origin(page: Page, sandbox: str | None) -> None:
    index = open_sandbox(page, sandbox)
    assert page.evaluate("(i) => harness.connect(i, undefined, 1, 800)", index) is None


# --- what the sandbox cannot do --------------------------------------------------------------

EGRESS_PROBES = """async (base) => {
  const seen = {};
  const attempt = async (name, act) => {
    try { seen[name] = await act(); } catch (err) { seen[name] = `blocked: ${err.name}`; }
  };
  const settles = (make) => new Promise((resolve) => {
    const it = make();
    it.onload = it.onopen = () => resolve("open");
    it.onerror = () => { if (it.close) it.close(); resolve("blocked: error"); };
  });
  await attempt("fetch", async () => { await fetch(`${base}/probe/fetch`); return "open"; });
  await attempt("xhr", () => settles(() => {
    const x = new XMLHttpRequest(); x.open("GET", `${base}/probe/xhr`); x.send(); return x; }));
  await attempt("websocket", () => settles(
    () => new WebSocket(`${base.replace("http", "ws")}/probe/ws`)));
  await attempt("eventsource", () => settles(() => new EventSource(`${base}/probe/es`)));
  const violations = [];
  document.addEventListener("securitypolicyviolation", (e) => violations.push(e.blockedURI));
  await attempt("beacon", async () => {
    // sendBeacon only queues (it returns true); CSP then blocks the request itself
    navigator.sendBeacon(`${base}/probe/beacon`, "x");
    await new Promise((resolve) => setTimeout(resolve, 300));
    return violations.some((uri) => uri.endsWith("/probe/beacon")) ? "blocked: csp" : "open";
  });
  await attempt("rtc", () => typeof RTCPeerConnection === "undefined" &&
    typeof webkitRTCPeerConnection === "undefined" &&
    typeof RTCDataChannel === "undefined" ? "blocked: undefined" : "open");
  await attempt("rtc-restore", () => {
    window.RTCPeerConnection = function () {};
    return typeof RTCPeerConnection === "undefined" ? "blocked: frozen" : "open";
  });
  await attempt("child-frame-rtc", async () => {
    // a fresh realm would have its own RTCPeerConnection: a child frame is another opaque origin
    const child = document.createElement("iframe");
    document.body.appendChild(child);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return typeof child.contentWindow.RTCPeerConnection === "function" ? "open" : "blocked: no";
  });
  await attempt("tt-policy", () => {
    trustedTypes.createPolicy("probe", { createScriptURL: (url) => url }); return "open"; });
  await attempt("import", async () => { await import(`${base}/probe/import.js`); return "open"; });
  await attempt("opfs", async () => { await navigator.storage.getDirectory(); return "open"; });
  await attempt("indexeddb", () => new Promise((resolve) => {
    const q = indexedDB.open("probe");
    q.onsuccess = () => resolve("open");
    q.onerror = () => resolve("blocked: error");
  }));
  await attempt("cookie", () => {
    document.cookie = "probe=1";
    return document.cookie.includes("probe") ? "open" : "blocked: empty";
  });
  await attempt("localstorage", () => { localStorage.setItem("probe", "1"); return "open"; });
  await attempt("parent", () => { void parent.document.title; return "open"; });
  await attempt("worker-url", () => { new Worker(`${base}/probe/worker.js`); return "open"; });
  await attempt("image", () => settles(() => {
    const img = new Image(); img.src = `${base}/probe/img.png`; return img; }));
  await attempt("popup", () => window.open(`${base}/probe/popup`) ? "open" : "blocked: null");
  await attempt("innerhtml", () => { document.body.innerHTML = "<b>x</b>"; return "open"; });
  await new Promise((resolve) => setTimeout(resolve, 300));
  return seen;
}"""


def test_every_egress_and_storage_path_fails_inside_the_sandbox(page: Page, site: Site) -> None:
    index = connected(page)
    before = len(site.requests)
    seen = sandbox_frame(page, index).evaluate(EGRESS_PROBES, site.base)
    assert set(seen) == {
        "fetch",
        "xhr",
        "websocket",
        "eventsource",
        "beacon",
        "rtc",
        "rtc-restore",
        "child-frame-rtc",
        "tt-policy",
        "import",
        "opfs",
        "indexeddb",
        "cookie",
        "localstorage",
        "parent",
        "worker-url",
        "image",
        "popup",
        "innerhtml",
    }
    opened = {name: how for name, how in seen.items() if not how.startswith("blocked")}
    assert opened == {}
    time.sleep(0.3)
    assert [p for p in site.requests[before:] if "probe" in p] == []


def test_a_run_sends_no_request_from_the_sandbox(page: Page, site: Site) -> None:
    index = connected(page)
    modules = ("create_asset", "malformed", "memory_hog", "traps")
    for module in modules:  # the page (host) fetches the modules first, as the host will
        page.evaluate("(m) => harness.preload(m)", f"{module}.wasm")
    before = len(site.requests)
    for module in modules:
        run(page, index, module)
    time.sleep(0.3)
    assert site.requests[before:] == []
