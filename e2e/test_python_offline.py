"""Running Python with the network gone (issue 32; docs/python.md, "Offline"): after one load
the service worker answers the runtime's frame from its cache with the header CSP ``sandbox
allow-scripts`` (an opaque origin, as the iframe attribute gives), so Run works with every
request aborted, and imports a package the site ships for the runtime."""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from e2e.files_kit import open_file, wait_editor
from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""

HELLO = """\
import js
import micropip
print("hello offline from", __name__, "micropip", micropip.__version__)
print("origin", js.self.origin)
try:
    js.indexedDB.open("x")
    print("indexedDB opened")
except Exception as e:
    print("indexedDB refused:", type(e).__name__)
"""

RUNTIME_BOOT_MS = 120_000


def _wait_status(host: HostPage, text: str) -> str:
    host.page.wait_for_function(
        "(t) => document.getElementById('python-status')?.textContent.includes(t)",
        arg=text,
        timeout=RUNTIME_BOOT_MS,
    )
    return host.page.text_content("#python-status") or ""


def test_run_works_offline_in_an_opaque_origin_served_by_the_service_worker(
    site_context: BrowserContext, router: SiteRouter
) -> None:
    host = HostPage(site_context.new_page())
    host.open()
    pid = host.ok("project.create", {"name": "py"}, human=True)["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "hello.py"}, body=HELLO.encode(), human=True)
    host.page.wait_for_function(CONTROLLED, timeout=120_000)

    router.offline = True
    seen_online = len(router.requests)
    host.reload()
    host.page.click("nav >> text=Projects")
    host.page.click("button.project-open:text-is('py')")
    host.page.wait_for_selector("#file-tree")
    open_file(host.page, "hello.py")
    wait_editor(host.page)
    host.page.click("#python-run")
    status = _wait_status(host, "Exited with status")
    output = host.page.text_content("#python-output") or ""
    assert "status 0" in status, (status, output)
    assert "hello offline from __main__ micropip 0.11.1" in output
    # the runtime's realm has an opaque origin and no storage, as with the sandbox attribute
    assert "origin null" in output and "indexedDB refused" in output, output
    frame = host.page.locator("iframe[src='runtime/python.html']")
    assert frame.count() == 1 and frame.get_attribute("sandbox") is None
    assert (
        host.page.evaluate(
            "() => document.querySelector(\"iframe[src='runtime/python.html']\").contentDocument"
        )
        is None
    )
    # nothing reached the (failing) network but the create-asset sandbox frame, which is still
    # framed by the attribute (docs/python.md)
    after = sorted(u[len(BASE_URL) :] for u in router.requests[seen_online:])
    assert after == ["tools/sandbox.html"], after
    assert host.csp_violations() == []
    assert host.page_errors == []
