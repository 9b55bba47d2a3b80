"""The listings a person is shown are kept between calls, and stay true (issue 18, the open row;
core/projects/listing_cache.py): this host's own changes show at once, anyone else's once the
folder's watch has reported them; nothing is kept without a watch; decisions never read a kept
listing; the kept entries and watched projects are bounded."""

from __future__ import annotations

from typing import Any

from core.memory.adapters import MemoryProjectFiles, MemoryWatcher
from core.paths import ProjectPath
from core.ports import Entry, FolderChange
from core.projects.listing_cache import (
    MAX_ENTRIES,
    MAX_ROOTS,
    CachedListings,
    ListingCache,
)
from tests.support import HostHarness, run


def _names(h: HostHarness, pid: str, folder: str = "") -> list[str]:
    return [e["name"] for e in h.ok("file.list", project=pid, folder=folder)["entries"]]


def _storage(h: HostHarness, pid: str) -> MemoryProjectFiles:
    return h.roots.roots[pid]


def _count_listings(files: MemoryProjectFiles) -> list[tuple[str, ...]]:
    """Every folder ``files`` is asked to list from now on (the storage's own listings)."""
    asked: list[tuple[str, ...]] = []
    original = files.list_dir

    async def counting(folder: tuple[str, ...]) -> list[Entry]:
        asked.append(folder)
        return await original(folder)

    files.list_dir = counting  # type: ignore[method-assign]
    return asked


def _project(h: HostHarness, name: str = "kept") -> str:
    pid = h.ok("project.create", name=name)["project"]["id"]
    h.ok("file.write", b"a", project=pid, path="a.txt")
    h.ok("file.write", b"b", project=pid, path="docs/b.md")
    return pid


def _listing_figures(h: HostHarness) -> dict[str, Any]:
    return h.ok("host.info")["listings"]


def test_a_listing_shown_again_is_not_read_from_storage_again() -> None:
    h = HostHarness(watcher=MemoryWatcher())
    pid = _project(h)
    asked = _count_listings(_storage(h, pid))
    first = h.ok("file.list", project=pid)
    for _ in range(3):
        assert h.ok("file.list", project=pid) == first
    assert asked == [()]
    assert _listing_figures(h)["hits"] == 3


def test_the_hosts_own_changes_show_at_once() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    assert _names(h, pid) == ["a.txt", "docs"]
    assert _names(h, pid, "docs") == ["b.md"]
    assert _names(h, pid) == ["a.txt", "docs"]
    assert _listing_figures(h)["hits"] == 1  # kept
    # nothing is delivered by the watch in this test: each change shows by the host's own drop
    h.ok("file.write", b"c", project=pid, path="c.txt")
    assert _names(h, pid) == ["a.txt", "c.txt", "docs"]
    h.ok("file.write", b"longer", project=pid, path="a.txt")
    sizes = {e["name"]: e["size"] for e in h.ok("file.list", project=pid)["entries"]}
    assert sizes["a.txt"] == 6
    h.ok("file.write", b"z", project=pid, path="x/y/z.txt")  # two folders made on the way
    assert _names(h, pid) == ["a.txt", "c.txt", "docs", "x"]
    h.ok("file.mkdir", project=pid, path="docs/new")
    assert _names(h, pid, "docs") == ["b.md", "new"]
    h.ok("file.move", project=pid, src="docs/b.md", dst="moved.md")
    assert _names(h, pid) == ["a.txt", "c.txt", "docs", "moved.md", "x"]
    assert _names(h, pid, "docs") == ["new"]
    h.ok("file.delete", project=pid, path="c.txt")
    assert _names(h, pid) == ["a.txt", "docs", "moved.md", "x"]
    h.ok("file.delete", project=pid, path="docs", recursive=True)
    assert _names(h, pid) == ["a.txt", "moved.md", "x"]
    assert h.refused("file.list", project=pid, folder="docs")["code"] == "file-not-found"


def test_another_programs_change_shows_once_the_watch_reports_it() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    assert _names(h, pid) == ["a.txt", "docs"]
    run(_storage(h, pid).write(ProjectPath(("planted.txt",)), b"p"))  # not through the host
    assert _names(h, pid) == ["a.txt", "docs"]  # kept: the watch has not reported it yet
    watcher.deliver()
    assert _names(h, pid) == ["a.txt", "docs", "planted.txt"]
    assert _listing_figures(h)["reports"] >= 1


def test_a_folder_made_by_another_program_shows_in_the_folder_above() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    assert _names(h, pid) == ["a.txt", "docs"]
    # the memory watch reports the file only, not the two folders made on its way
    run(_storage(h, pid).write(ProjectPath(("p", "q", "r.txt")), b"r"))
    watcher.deliver()
    assert _names(h, pid) == ["a.txt", "docs", "p"]


def test_a_removed_folder_drops_every_kept_listing_below_it() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    h.ok("file.write", b"d", project=pid, path="docs/deep/d.txt")
    assert _names(h, pid, "docs/deep") == ["d.txt"]
    assert _names(h, pid, "docs") == ["b.md", "deep"]
    run(_storage(h, pid).delete(ProjectPath(("docs",)), recursive=True))
    watcher.deliver()
    assert _names(h, pid) == ["a.txt"]
    assert h.refused("file.list", project=pid, folder="docs/deep")["code"] == "file-not-found"


def test_a_folder_that_cannot_be_watched_is_never_kept() -> None:
    h = HostHarness(watcher=MemoryWatcher(available=False))
    pid = _project(h)
    asked = _count_listings(_storage(h, pid))
    for _ in range(3):
        h.ok("file.list", project=pid)
    assert asked == [(), (), ()]
    assert _listing_figures(h)["hits"] == 0


def test_a_host_without_a_watcher_keeps_no_listing() -> None:
    h = HostHarness()
    pid = _project(h)
    asked = _count_listings(_storage(h, pid))
    h.ok("file.list", project=pid)
    h.ok("file.list", project=pid)
    assert asked == [(), ()]
    assert h.ok("host.info")["listings"] is None


def test_nothing_is_kept_before_the_watch_has_begun() -> None:
    watcher = MemoryWatcher(begin_active=False)
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    asked = _count_listings(_storage(h, pid))
    h.ok("file.list", project=pid)
    h.ok("file.list", project=pid)
    assert asked == [(), ()]
    watcher.begin()
    h.ok("file.list", project=pid)
    h.ok("file.list", project=pid)
    assert asked == [(), (), ()]
    assert len(watcher.started) == 1  # one watch per project, not one per listing


def test_a_lost_watch_drops_the_listings_and_the_next_listing_watches_again() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    assert _names(h, pid) == ["a.txt", "docs"]
    run(_storage(h, pid).write(ProjectPath(("planted.txt",)), b"p"))
    watcher.lose()  # the browser's errored / unknown: what changed is not known
    assert _names(h, pid) == ["a.txt", "docs", "planted.txt"]
    assert len(watcher.started) == 2
    asked = _count_listings(_storage(h, pid))
    h.ok("file.list", project=pid)
    assert asked == []  # kept again under the new watch


def test_a_listing_read_while_its_project_changed_is_not_kept() -> None:
    watcher = MemoryWatcher()
    cache = ListingCache(watcher)
    storage = MemoryProjectFiles()
    run(storage.write(ProjectPath(("a.txt",)), b"a"))
    files = CachedListings(storage, cache, "p1")
    original = storage.list_dir

    async def listing_then_a_change(folder: tuple[str, ...]) -> list[Entry]:
        entries = await original(folder)
        # another program writes after the folder was read, and its report arrives
        # before the listing is back: the listing read is already stale
        await MemoryProjectFiles.write(storage, ProjectPath(("late.txt",)), b"l")
        watcher.deliver()
        return entries

    storage.list_dir = listing_then_a_change  # type: ignore[method-assign]
    assert [e.name for e in run(files.list_dir_cached(()))] == ["a.txt"]
    storage.list_dir = original  # type: ignore[method-assign]
    assert [e.name for e in run(files.list_dir_cached(()))] == ["a.txt", "late.txt"]


def test_a_host_change_while_a_listing_is_read_is_not_lost() -> None:
    cache = ListingCache(MemoryWatcher())
    storage = MemoryProjectFiles()
    files = CachedListings(storage, cache, "p1")
    original = storage.list_dir

    async def listing_then_a_write(folder: tuple[str, ...]) -> list[Entry]:
        entries = await original(folder)
        await files.write(ProjectPath(("mine.txt",)), b"m")  # the host's own, beside it
        return entries

    storage.list_dir = listing_then_a_write  # type: ignore[method-assign]
    assert run(files.list_dir_cached(())) == []
    storage.list_dir = original  # type: ignore[method-assign]
    assert [e.name for e in run(files.list_dir_cached(()))] == ["mine.txt"]


def test_decisions_read_storage_never_a_kept_listing() -> None:
    cache = ListingCache(MemoryWatcher())
    storage = MemoryProjectFiles()
    files = CachedListings(storage, cache, "p1")
    run(files.list_dir_cached(()))
    run(storage.write(ProjectPath(("planted.txt",)), b"p"))  # not reported yet
    assert [e.name for e in run(files.list_dir(()))] == ["planted.txt"]


def test_kept_entries_stay_bounded_over_a_project_of_10000_folders() -> None:
    cache = ListingCache(MemoryWatcher())
    storage = MemoryProjectFiles()
    for i in range(10_000):
        storage.tree[f"d{i:05d}"] = {"a.bin": b"x" * 1000, "b.bin": b"y" * 1000, "c": {}}
    files = CachedListings(storage, cache, "p1")
    asked = _count_listings(storage)
    for i in range(10_000):
        run(files.list_dir_cached((f"d{i:05d}",)))
    figures = cache.figures()
    assert figures["entries"] <= MAX_ENTRIES
    assert figures["folders"] <= MAX_ENTRIES // 3 + 1
    run(files.list_dir_cached(("d09999",)))  # the most recent is kept
    run(files.list_dir_cached(("d00000",)))  # the oldest was let go: read again
    assert asked[-1] == ("d00000",) and asked.count(("d09999",)) == 1


def test_a_folder_larger_than_the_bound_is_not_kept() -> None:
    cache = ListingCache(MemoryWatcher(), max_entries=10)
    storage = MemoryProjectFiles()
    storage.tree.update({f"f{i:02d}": b"" for i in range(11)})
    files = CachedListings(storage, cache, "p1")
    run(files.list_dir_cached(()))
    assert cache.figures()["entries"] == 0


def test_at_most_max_roots_projects_are_watched() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pids = [_project(h, f"p{i}") for i in range(MAX_ROOTS + 1)]
    for pid in pids:
        h.ok("file.list", project=pid)
    assert _listing_figures(h)["watched"] == MAX_ROOTS
    assert watcher.started[0].ended and not watcher.started[-1].ended
    asked = _count_listings(_storage(h, pids[0]))
    h.ok("file.list", project=pids[0])  # let go with its watch: read again
    assert asked == [()]


def test_deleting_a_project_stops_its_watch_and_drops_its_listings() -> None:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = _project(h)
    h.ok("file.list", project=pid)
    assert _listing_figures(h)["entries"] == 3  # .voicebox, a.txt, docs
    h.ok("project.delete", project=pid)
    assert watcher.started[0].ended
    figures = _listing_figures(h)
    assert (figures["entries"], figures["folders"], figures["watched"]) == (0, 0, 0)


def test_a_report_of_a_change_elsewhere_keeps_unrelated_listings() -> None:
    cache = ListingCache(MemoryWatcher())
    storage = MemoryProjectFiles()
    run(storage.write(ProjectPath(("a", "x.txt")), b"x"))
    run(storage.write(ProjectPath(("b", "y.txt")), b"y"))
    files = CachedListings(storage, cache, "p1")
    for folder in [(), ("a",), ("b",)]:
        run(files.list_dir_cached(folder))
    cache.changed("p1", [FolderChange("changed", ("a", "x.txt"))])
    assert cache.lookup("p1", ("a",)) is None
    assert cache.lookup("p1", ("b",)) is not None
    assert cache.lookup("p1", ()) is not None  # it shows "a" already
