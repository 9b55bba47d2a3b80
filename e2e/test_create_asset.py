"""create-asset in the real site (issues 5 and 16; SPEC §7, §8): the host runs the pinned
WebAssembly module in the page's plugin sandbox frame (CSP connect-src 'none', opaque origin,
only the PDK kernel), checks the PNG, writes it itself and issues the receipt. Egress from the
frame fails; a runaway module is stopped while the page and the host keep answering."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Frame, Page

from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter
from tests.tool.pdk_host import SIGNATURES
from tests.tool.test_sandbox_chromium import EGRESS_PROBES
from wasm_tools.build import build_test_modules

ARGS = {
    "path": "art/mark.png",
    "width": 200,
    "height": 120,
    "seed": 2026,
    "pattern": "identicon",
    "palette": "dusk",
}


@pytest.fixture(scope="module")
def test_modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Test-only modules built from wasm_tools/testdata (never shipped)."""
    return build_test_modules(tmp_path_factory.mktemp("modules"))


def _sandbox(page: Page) -> Frame:
    """The page's own sandbox frame, once it exists and has loaded (its URL is set only when
    the navigation commits, so poll the frame list rather than taking it once)."""
    for _ in range(200):
        found = [f for f in page.frames if f.url.endswith("tools/sandbox.html")]
        if found:
            found[0].wait_for_load_state()
            return found[0]
        page.wait_for_timeout(50)
    raise AssertionError("the page never made its sandbox frame")


def _call_tool(host: HostPage, tool: str, args: dict) -> dict:
    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    descriptor = next(t["descriptorId"] for t in tools if t["name"] == tool)
    return host.call(
        "tool.call", {"envKey": local, "tool": tool, "descriptorId": descriptor, "args": args}
    )


def test_create_asset_writes_a_png_deterministically_with_a_receipt_matching_the_file(
    host: HostPage,
) -> None:
    _sandbox(host.page)
    pid = host.ok("project.create", {"name": "art"})["result"]["project"]["id"]
    first = _call_tool(host, "create-asset", {"project": pid, **ARGS})
    assert first["ok"], first
    data = host.ok("file.read", {"project": pid, "path": ARGS["path"]})["body"]
    assert Image.open(io.BytesIO(data)).size == (200, 120)
    receipt = first["result"]["receipt"]
    assert receipt["rung"] == "local-write"
    assert (
        receipt["sha256"] == hashlib.sha256(data).hexdigest() == first["result"]["result"]["sha256"]
    )
    assert receipt["size"] == len(data) and receipt["path"] == ARGS["path"]
    again = _call_tool(host, "create-asset", {"project": pid, **{**ARGS, "path": "art/again.png"}})
    assert again["result"]["result"]["sha256"] == receipt["sha256"]
    # the audit names the write the receipt's store version points at
    record = next(
        r
        for r in host.ok("audit.list", {"op": "tool.call"})["result"]["records"]
        if r["seq"] == first["logged"]
    )
    assert record["decision"] == "admitted"
    host.assert_clean()


def test_the_tools_surface_runs_create_asset_from_its_schema_and_shows_the_image(
    host: HostPage,
) -> None:
    page = host.page
    _sandbox(page)
    page.fill("#new-project-name", "Art")
    page.click("text=Create project")
    page.wait_for_selector("#project-title")
    page.click("nav >> text=Tools")
    page.click("button[aria-label='Run create-asset']")
    page.fill("#tool-arg-path", "art/mark.png")
    page.fill("#tool-arg-width", "160")
    page.fill("#tool-arg-height", "96")
    page.click("#run-tool")
    page.wait_for_selector("#tool-image")
    assert "local-write" in (page.text_content("#tool-receipt") or "")
    # the <img> is placed with its blob URL at once and decoded after: wait until it has
    # loaded (or failed), then read what it decoded to
    page.wait_for_function("() => document.getElementById('tool-image').complete")
    assert page.evaluate("() => document.getElementById('tool-image').naturalWidth") == 160
    # the same path again: the host refuses before the tool runs, the page asks (issue 17)
    pid = page.evaluate("() => voicebox.app.project.id")
    first = host.ok("file.read", {"project": pid, "path": "art/mark.png"})["result"]["sha256"]
    page.fill("#tool-arg-width", "80")
    page.click("#run-tool")
    page.wait_for_selector("#conflict-dialog[open]")
    page.click("#conflict-dialog .dialog-cancel")
    page.wait_for_selector("#conflict-dialog", state="detached")
    assert (
        host.ok("file.read", {"project": pid, "path": "art/mark.png"})["result"]["sha256"] == first
    )
    page.click("#run-tool")
    page.click("#conflict-dialog [data-choice='keep']")
    page.wait_for_function("() => document.getElementById('tool-image')?.naturalWidth === 80")
    kept = host.ok("file.read", {"project": pid, "path": "art/mark (2).png"})["result"]
    assert kept["sha256"] != first
    assert (
        host.ok("file.read", {"project": pid, "path": "art/mark.png"})["result"]["sha256"] == first
    )
    host.assert_clean()


def test_every_egress_and_storage_attempt_fails_inside_the_pages_sandbox_frame(
    host: HostPage, router: SiteRouter
) -> None:
    frame = _sandbox(host.page)
    before = len(router.requests)
    seen = frame.evaluate(EGRESS_PROBES, BASE_URL)
    for name in (
        "fetch",
        "xhr",
        "websocket",
        "eventsource",
        "beacon",
        "rtc",
        "import",
        "opfs",
        "indexeddb",
        "cookie",
    ):
        assert seen[name].startswith("blocked"), (name, seen[name])
    assert {n: how for n, how in seen.items() if not how.startswith("blocked")} == {}
    assert [u for u in router.requests[before:] if "probe" in u] == []


def test_the_shipped_module_imports_only_kernel_functions(host: HostPage) -> None:
    (worker,) = [w for w in host.page.workers if w.url.endswith("worker/host.mjs")]
    imports = worker.evaluate(
        """async () => WebAssembly.Module.imports(await WebAssembly.compile(
             await (await fetch(new URL("../tools/create_asset.wasm", location.href))).arrayBuffer()))"""
    )
    assert imports
    assert {(i["module"], i["kind"]) for i in imports} == {("extism:host/env", "function")}
    assert {i["name"] for i in imports} <= set(SIGNATURES)


RUN_IN_FRESH_SANDBOX = """
async (b64) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.src = "tools/sandbox.html";
  const loaded = new Promise((ok) => frame.addEventListener("load", ok, { once: true }));
  document.body.appendChild(frame);
  await loaded;
  const channel = new MessageChannel();
  const ready = new Promise((ok) => { channel.port1.onmessage = (e) => ok(e.data); });
  frame.contentWindow.postMessage({ type: "voicebox-sandbox-connect" }, "*", [channel.port2]);
  await ready;
  const wasm = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const input = new Uint8Array([1, 1, 1, 0, 16, 0, 16, 0, 7, 0, 0, 0]);
  const started = performance.now();
  window.__ticks = 0;
  const ticker = setInterval(() => { window.__ticks += 1; }, 20);
  const answer = new Promise((ok) => { channel.port1.onmessage = (e) => ok(e.data); });
  channel.port1.postMessage({ id: "runaway", wasm, entry: "create", input, timeMs: 3000 });
  window.__runaway = answer.then((a) => { clearInterval(ticker); return { ...a, ms: performance.now() - started }; });
  return true;
}
"""


def test_a_runaway_module_is_stopped_while_the_page_and_the_host_keep_answering(
    host: HostPage, test_modules: dict[str, Path]
) -> None:
    page = host.page
    runaway = base64.b64encode(test_modules["runaway"].read_bytes()).decode()
    page.evaluate(RUN_IN_FRESH_SANDBOX, runaway)
    page.wait_for_timeout(500)  # the module is spinning now
    page.click("nav >> text=Audit")  # a click handler of the page runs…
    page.wait_for_selector("#verify-audit")
    assert host.ok("host.info")["result"]["protocol"] == 1  # …and the host answers
    answer = page.evaluate("() => window.__runaway")
    assert (answer["ok"], answer["code"]) == (False, "tool-timeout")
    assert answer["ms"] <= 3000 + 1000
    assert page.evaluate("() => window.__ticks") > 50  # the page's timers never stopped
