"""The listings the page is shown are kept, and stay true (issue 18, the open row;
core/projects/listing_cache.py, browser_host/watch.py; docs/operations.md, "Round five").

The host keeps an OPFS project's ``file.list`` answers once a ``FileSystemObserver`` watches the
project's folder. These journeys check, in the browser:

- a kept listing really answers (``host.info`` counts it), and each change the host itself
  makes — a write, a folder, a move, a delete — shows in the very next listing, with no wait;
- a file planted straight into OPFS by another context (the page itself, as this suite's fault
  tests and DevTools do), a folder planted below the root and a file removed so are shown once
  the observer has reported them (its reports counted in ``host.info``), never the kept
  listing for good;
- a picked folder's listings are never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.test_folders import PICKED, PICKER_STUB

WAIT_MS = 15_000  # a bound on waiting for an event the test needs, never a timing assertion

# Put a file (with `text`) straight into OPFS under the folders `dirs`, or remove `name` there.
RAW_PUT = """async ([dirs, name, text]) => {
  let dir = await navigator.storage.getDirectory();
  for (const d of dirs) dir = await dir.getDirectoryHandle(d, { create: true });
  if (text === null) { await dir.removeEntry(name, { recursive: true }); return; }
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(new TextEncoder().encode(text));
  await w.close();
}"""


def _project(host: HostPage, name: str) -> str:
    return host.ok("project.create", {"name": name})["result"]["project"]["id"]


def _names(host: HostPage, project: str, folder: str = "") -> list[str]:
    listing = host.ok("file.list", {"project": project, "folder": folder})["result"]
    return [e["name"] for e in listing["entries"]]


def _listings(host: HostPage) -> dict[str, Any]:
    figures = host.ok("host.info")["result"]["listings"]
    assert figures is not None, "this host keeps no listings"
    return figures


def _until(host: HostPage, what: str, done: Callable[[], bool]) -> None:
    waited = 0
    while not done():
        assert waited < WAIT_MS, f"still waiting for {what}"
        host.page.wait_for_timeout(50)
        waited += 50


def _shows(host: HostPage, project: str, folder: str, names: list[str]) -> Callable[[], bool]:
    return lambda: _names(host, project, folder) == names


def _kept(host: HostPage, project: str, folder: str = "") -> list[str]:
    """List ``folder`` until its listing is answered from a kept one (the project's watch
    begins a moment after its first listing); returns the names."""
    names: list[str] = []

    def answered_from_kept() -> bool:
        nonlocal names
        before = _listings(host)["hits"]
        names = _names(host, project, folder)
        return _listings(host)["hits"] > before

    _until(host, "a kept listing", answered_from_kept)
    return names


def test_the_hosts_own_changes_show_in_the_next_listing(host: HostPage) -> None:
    project = _project(host, "kept listings")
    host.ok("file.write", {"project": project, "path": "a.txt"}, b"alpha")
    host.ok("file.write", {"project": project, "path": "box/b.txt"}, b"beta")
    assert _kept(host, project) == ["a.txt", "box"]
    assert _kept(host, project, "box") == ["b.txt"]
    host.ok("file.write", {"project": project, "path": "c.txt"}, b"gamma")
    assert _names(host, project) == ["a.txt", "box", "c.txt"]
    host.ok("file.write", {"project": project, "path": "a.txt"}, b"alpha, longer")
    sizes = {
        e["name"]: e["size"]
        for e in host.ok("file.list", {"project": project})["result"]["entries"]
    }
    assert sizes["a.txt"] == len(b"alpha, longer")
    host.ok("file.write", {"project": project, "path": "new/deep/d.txt"}, b"delta")
    assert _names(host, project) == ["a.txt", "box", "c.txt", "new"]
    host.ok("file.mkdir", {"project": project, "path": "box/inner"})
    assert _names(host, project, "box") == ["b.txt", "inner"]
    host.ok("file.move", {"project": project, "src": "box/b.txt", "dst": "b.txt"})
    assert _names(host, project) == ["a.txt", "b.txt", "box", "c.txt", "new"]
    assert _names(host, project, "box") == ["inner"]
    host.ok("file.delete", {"project": project, "path": "c.txt"})
    host.ok("file.delete", {"project": project, "path": "box", "recursive": True})
    assert _names(host, project) == ["a.txt", "b.txt", "new"]
    assert host.refused("file.list", {"project": project, "folder": "box"})["code"] == (
        "file-not-found"
    )
    host.assert_clean()


def test_a_change_planted_straight_into_opfs_shows_once_the_observer_reports_it(
    host: HostPage,
) -> None:
    project = _project(host, "planted")
    host.ok("file.write", {"project": project, "path": "a.txt"}, b"alpha")
    host.ok("file.write", {"project": project, "path": "sub/s.txt"}, b"sigma")
    assert _kept(host, project) == ["a.txt", "sub"]
    assert _kept(host, project, "sub") == ["s.txt"]
    steps: list[tuple[list[str], str, str | None, str, list[str]]] = [
        (
            ["projects", project],
            "planted.txt",
            "from another context",
            "",
            ["a.txt", "planted.txt", "sub"],
        ),
        (["projects", project, "sub"], "p.txt", "nested", "sub", ["p.txt", "s.txt"]),
        (
            ["projects", project, "made", "on", "the", "way"],
            "w.txt",
            "deep",
            "",
            ["a.txt", "made", "planted.txt", "sub"],
        ),
        (["projects", project], "a.txt", None, "", ["made", "planted.txt", "sub"]),
        (["projects", project, "sub"], "s.txt", None, "sub", ["p.txt"]),
    ]
    for dirs, name, text, folder, after in steps:
        reports = _listings(host)["reports"]
        host.page.evaluate(RAW_PUT, [dirs, name, text])
        _until(
            host, f"the listing of '{folder}' to show {after}", _shows(host, project, folder, after)
        )
        assert _listings(host)["reports"] > reports  # shown because the observer reported it
        assert _kept(host, project, folder) == after  # and kept again afterwards
    host.assert_clean()


def test_a_picked_folders_listings_are_never_kept(site_context: BrowserContext) -> None:
    site_context.add_init_script(PICKER_STUB)
    host = HostPage(site_context.new_page())
    host.open()
    host.page.evaluate(RAW_PUT, [[PICKED], "p.txt", "picked"])
    host.page.click("#open-folder")
    host.page.wait_for_selector("#project-title")  # the picked folder is adopted and opened
    project = next(
        p["id"] for p in host.ok("project.list")["result"]["projects"] if p["kind"] == "directory"
    )
    for _ in range(3):
        assert _names(host, project) == ["p.txt"]
    assert _listings(host)["hits"] == 0
    host.assert_clean()
