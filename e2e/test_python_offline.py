"""Running Python with the network gone (issue 32; docs/python.md, "Offline"): after one load
the service worker answers the runtime's frame from its cache with the header CSP ``sandbox
allow-scripts`` (an opaque origin, as the iframe attribute gives), so Run works with every
request aborted; a project's requirements.txt loads the packages the runtime's offline set
covers (with progress), and a name it does not cover is said with why."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import BrowserContext

from e2e.files_kit import open_file, wait_editor
from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter
from worker.sitebuild.wheels import load_lock

ROOT = Path(__file__).resolve().parents[1]

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""

HELLO = """\
import js
import micropip
from dateutil.relativedelta import relativedelta
from tabulate import tabulate
print("hello offline from", __name__, "micropip", micropip.__version__)
print(tabulate([["months", relativedelta(months=+14).normalized().years]], tablefmt="plain"))


def shift(months):
    return relativedelta(months=months)


print("origin", js.self.origin)
try:
    js.indexedDB.open("x")
    print("indexedDB opened")
except Exception as e:
    print("indexedDB refused:", type(e).__name__)
"""

REQUIREMENTS = b"tabulate>=0.8  # tables\npython-dateutil\nrequests==2.32.0\n"

RUNTIME_BOOT_MS = 120_000


def _wait_status(host: HostPage, text: str) -> str:
    host.page.wait_for_function(
        "(t) => document.getElementById('python-status')?.textContent.includes(t)",
        arg=text,
        timeout=RUNTIME_BOOT_MS,
    )
    return host.page.text_content("#python-status") or ""


def test_run_works_offline_and_loads_the_requirements_the_offline_set_covers(
    site_context: BrowserContext, router: SiteRouter
) -> None:
    host = HostPage(site_context.new_page())
    host.open()
    pid = host.ok("project.create", {"name": "py"}, human=True)["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "hello.py"}, body=HELLO.encode(), human=True)
    host.ok(
        "file.write", {"project": pid, "path": "requirements.txt"}, body=REQUIREMENTS, human=True
    )
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
    # requirements.txt: the offline set's packages (and six, dateutil's dependency) installed
    # first, each said; requests is not in the set, and the output says why
    for line in (
        "Installed tabulate 0.9.0 from the offline set",
        "Installed six 1.17.0 from the offline set",
        "Installed python-dateutil 2.9.0.post0 from the offline set",
    ):
        assert line in output, output
    assert output.index("Installed six") < output.index("Installed python-dateutil")
    assert "months  1" in output, output
    assert "'requests' is not in the offline set" in output
    assert "network installs are off" in output
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
    # nothing reached the (failing) network: both sandboxed frames came from the cache
    after = sorted(u[len(BASE_URL) :] for u in router.requests[seen_online:])
    assert after == [], after
    assert host.csp_violations() == []
    assert host.page_errors == []
    # a second run installs nothing again (the packages stay until Python restarts)
    host.page.click("#python-run")
    _wait_status(host, "Exited with status 0")
    again = host.page.text_content("#python-output") or ""
    assert "months  1" in again and "Installed" not in again, again
    # a traceback starts at the person's own frames: the console input, then hello.py, then
    # the library's; none of the runtime's wrapper ("<exec>", _pyodide)
    console = host.page.locator("#python-console-input")
    console.fill("shift(1.5)")
    console.press("Enter")
    _wait_status(host, "Exited with status 1")
    text = host.page.text_content("#python-output") or ""
    trace = text[text.index("Traceback (most recent call last):") :]
    frames = [line.strip() for line in trace.splitlines() if line.strip().startswith("File ")]
    assert frames[0].startswith('File "<console>", line 1'), trace
    assert frames[1].startswith('File "hello.py"') and "in shift" in frames[1], trace
    assert "dateutil" in frames[2], trace
    assert "<exec>" not in trace and "_pyodide" not in trace, trace
    assert "ValueError" in trace


def test_the_offline_set_is_pinned_and_shipped_to_the_runtime_only(dist: Path) -> None:
    """issue 32: the offline set's wheels are runtime wheels pinned by version and sha256, in the
    site manifest under runtime/wheels/ with their pins, described by offline-set.json (with
    each one's dependencies), and never in the host's lock."""
    lock = load_lock(ROOT)
    offline = [w for w in lock.runtime_wheels if w.offline_set]
    assert {w.name for w in offline} >= {"tabulate", "python-dateutil", "six"}
    manifest = json.loads((dist / "site-manifest.json").read_text(encoding="utf-8"))
    pins = {f["path"]: f["sha256"] for f in manifest["files"]}
    for wheel in offline:
        assert pins[f"runtime/wheels/{wheel.file}"] == wheel.sha256
        assert all(w.name != wheel.name for w in lock.wheels)
    index = json.loads((dist / "runtime/wheels/offline-set.json").read_text(encoding="utf-8"))
    assert "runtime/wheels/offline-set.json" in pins
    described = {p["name"]: p for p in index["packages"]}
    assert set(described) == {w.name for w in offline}
    assert described["python-dateutil"]["depends"] == ["six"]
    host_lock = json.loads((dist / "pyodide" / "pyodide-lock.json").read_text(encoding="utf-8"))
    assert not set(described) & set(host_lock["packages"])
