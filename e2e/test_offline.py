"""Offline after one load (SPEC §2; issue 9): the service worker precaches exactly the pinned
files, and with every network request failing the site boots, opens a project and shows its
files.

Also records what Playwright routing sees of a service worker in this Chromium 156 with
Playwright 1.65 (PLATFORM.md did not say): the registration's script fetch and the worker's own
precache fetches both reach ``context.route`` (the router serves them, and ``request.
service_worker`` names the worker), and once the worker controls the page its cached answers
never reach the router at all. Requests that still go to the network offline:
none. Chromium never lets a service worker answer the navigation of a frame sandboxed by its
attribute without ``allow-same-origin`` (an opaque origin), so both sandboxed frames — the
plugin sandbox that runs create-asset and the Python runtime's (issue 32) — are sandboxed by
their header CSP instead, which the service worker sends with its cached answer: create-asset
runs offline here, Run in ``e2e/test_python_offline.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""

CACHES = """
async () => {
  const out = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    out[name] = (await cache.keys()).map((r) => r.url);
  }
  return out;
}
"""


def _pinned(dist: Path) -> tuple[str, set[str]]:
    manifest = json.loads((dist / "site-manifest.json").read_text(encoding="utf-8"))
    paths = {f["path"] for f in manifest["files"]} - {"sw.js"}
    return manifest["build"], paths | {"site-manifest.json"}


def _open_in_ui(host: HostPage, name: str) -> None:
    host.page.click("nav >> text=Projects")
    host.page.click(f"button.project-open:text-is('{name}')")
    host.page.wait_for_selector("#file-tree")


def test_after_one_load_the_site_boots_and_opens_a_project_with_the_network_gone(
    site_context: BrowserContext, router: SiteRouter, dist: Path
) -> None:
    from_worker: list[str] = []
    site_context.on("request", lambda r: from_worker.append(r.url) if r.service_worker else None)
    host = HostPage(site_context.new_page())
    host.open()
    project = host.ok("project.create", {"name": "Field notes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": project, "path": "notes/day-1.txt"}, b"written online\n")
    host.page.wait_for_function(CONTROLLED, timeout=120_000)

    # the cache holds exactly the pinned files of this build (and the manifest)
    build, pinned = _pinned(dist)
    caches = host.page.evaluate(CACHES)
    assert f"voicebox-site-{build}" in caches
    cached = {url[len(BASE_URL) :] for url in caches[f"voicebox-site-{build}"]}
    assert cached == pinned
    # what routing saw: the script, and each file twice (the host's boot, then the precache)
    served = [url[len(BASE_URL) :] for url in router.requests]
    assert "sw.js" in served
    assert served.count("pyodide/pyodide.asm.wasm") == 2
    assert router.foreign == []

    router.offline = True
    seen_online = len(router.requests)
    host.reload()
    assert host.ok("project.open", {"project": project})["result"]["project"]["name"] == (
        "Field notes"
    )
    _open_in_ui(host, "Field notes")
    host.page.click("#file-tree .tree-dir[data-path='notes'] > .tree-row")
    host.page.click("#file-tree .file-entry[data-path='notes/day-1.txt']")
    # the editor opens from the cache too (its bundle is one of the pinned files)
    host.page.wait_for_selector("#file-viewer #editor >> text=written online")
    answer = host.ok("file.read", {"project": project, "path": "notes/day-1.txt"})
    assert answer["body"] == b"written online\n"
    # after the reload nothing reached the (failing) network: the plugin sandbox frame is
    # sandboxed by its header CSP and answered from the cache (the Python runtime's frame,
    # issue 32, is made only when a .py file needs it)
    host.page.wait_for_function(
        "() => document.querySelectorAll('iframe.sandbox-frame').length === 1"
    )
    frame = host.page.locator("iframe[src='tools/sandbox.html']")
    assert frame.count() == 1 and frame.get_attribute("sandbox") is None
    assert (
        host.page.evaluate(
            "() => document.querySelector(\"iframe[src='tools/sandbox.html']\").contentDocument"
        )
        is None
    )
    assert router.requests[seen_online:] == []
    # …so create-asset runs offline, in its opaque-origin sandbox
    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    descriptor = next(t["descriptorId"] for t in tools if t["name"] == "create-asset")
    args = {
        "project": project,
        "path": "mark.png",
        "width": 32,
        "height": 32,
        "seed": 1,
        "pattern": "identicon",
    }
    call = {"envKey": local, "tool": "create-asset", "descriptorId": descriptor, "args": args}
    made = host.call("tool.call", call)
    assert made["ok"], made
    png = host.ok("file.read", {"project": project, "path": "mark.png"})["body"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert host.csp_violations() == []
    assert host.page_errors == []
    # Playwright names the service worker as the requester of its own fetches
    assert {u[len(BASE_URL) :] for u in from_worker} >= pinned
