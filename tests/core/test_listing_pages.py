"""A folder's listing comes in pages (issue 34: a 10,000-entry folder opens to a usable tree as
fast as a 10-entry one): ``file.list`` with ``limit`` answers at most that many entries from
``offset`` in the listing's name order, says the folder's ``total`` and where the ``next`` page
starts; the pages, read in turn, are the whole listing, each entry once; without ``limit`` the
whole listing comes in one answer, as before; a page larger than ``MAX_LISTING_PAGE`` is
refused."""

from __future__ import annotations

from core.host.file_ops import LISTING_PAGE, MAX_LISTING_PAGE
from core.memory.adapters import MemoryWatcher
from tests.support import HostHarness

FILES = 23


def _project(h: HostHarness) -> str:
    pid = h.ok("project.create", name="paged")["project"]["id"]
    for i in range(FILES):
        h.ok("file.write", f"{i}".encode(), project=pid, path=f"f{i:02d}.txt")
    h.ok("file.mkdir", project=pid, path="sub")
    return pid


def test_a_listing_read_page_by_page_is_the_whole_listing_each_entry_once() -> None:
    for watcher in (MemoryWatcher(), None):  # a kept listing, and one read from storage
        h = HostHarness(watcher=watcher) if watcher else HostHarness()
        pid = _project(h)
        whole = h.ok("file.list", project=pid)
        assert whole["total"] == FILES + 1 and whole.get("next") is None
        names = [e["name"] for e in whole["entries"]]
        assert names == sorted([f"f{i:02d}.txt" for i in range(FILES)] + ["sub"])
        seen, offset, pages = [], 0, 0
        while offset is not None:
            page = h.ok("file.list", project=pid, offset=offset, limit=10)
            assert page["total"] == FILES + 1 and len(page["entries"]) <= 10
            seen += [e["name"] for e in page["entries"]]
            offset = page.get("next")
            pages += 1
        assert seen == names and pages == 3
        last = h.ok("file.list", project=pid, offset=20, limit=10)
        assert [e["name"] for e in last["entries"]] == names[20:] and last.get("next") is None
        assert h.ok("file.list", project=pid, offset=0, limit=10)["next"] == 10


def test_a_page_larger_than_the_bound_is_refused() -> None:
    h = HostHarness()
    pid = _project(h)
    assert LISTING_PAGE <= MAX_LISTING_PAGE
    assert h.ok("file.list", project=pid, limit=MAX_LISTING_PAGE)["total"] == FILES + 1
    too_many = h.refused("file.list", project=pid, limit=MAX_LISTING_PAGE + 1)
    assert too_many["code"] == "message-malformed"
    assert h.refused("file.list", project=pid, offset=-1, limit=5)["code"] == "message-malformed"
