"""The answer shown for a kept listing is kept with it (issue 18, round seven;
core/projects/listing_cache.py, "The answer kept beside it"): made once while the listing stays
kept, made again after any change drops the listing (the host's own, a watch's report), never
kept for a listing that is not kept; through the host, ``file.list`` stays true after changes."""

from __future__ import annotations

from collections.abc import Sequence

from core.memory.adapters import MemoryProjectFiles, MemoryWatcher
from core.paths import ProjectPath
from core.ports import Entry
from core.projects.listing_cache import CachedListings, ListingCache
from tests.support import HostHarness, run


class Maker:
    """``make`` for :meth:`CachedListings.shown` that counts its calls."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self, entries: Sequence[Entry]) -> tuple[tuple[str, ...], int]:
        self.made += 1
        return (tuple(e.name for e in entries), self.made)


def _files(watcher: MemoryWatcher, **cache: int) -> tuple[MemoryProjectFiles, CachedListings]:
    storage = MemoryProjectFiles()
    run(storage.write(ProjectPath(("a.txt",)), b"a"))
    return storage, CachedListings(storage, ListingCache(watcher, **cache), "p1")


def test_a_kept_listing_is_answered_with_the_answer_made_when_first_shown() -> None:
    _, files = _files(MemoryWatcher())
    make = Maker()
    first = run(files.shown((), make))
    assert first == (("a.txt",), 1)
    assert run(files.shown((), make)) is first
    assert run(files.shown((), make)) is first
    assert make.made == 1


def test_the_hosts_own_change_makes_the_answer_again() -> None:
    _, files = _files(MemoryWatcher())
    make = Maker()
    run(files.shown((), make))
    run(files.write(ProjectPath(("b.txt",)), b"b"))
    assert run(files.shown((), make)) == (("a.txt", "b.txt"), 2)


def test_a_reported_change_makes_the_answer_again() -> None:
    watcher = MemoryWatcher()
    storage, files = _files(watcher)
    make = Maker()
    run(files.shown((), make))
    run(storage.write(ProjectPath(("planted.txt",)), b"p"))  # another program, not reported yet
    assert run(files.shown((), make))[0] == ("a.txt",)
    watcher.deliver()
    assert run(files.shown((), make)) == (("a.txt", "planted.txt"), 2)


def test_a_listing_that_is_not_kept_is_answered_afresh_every_time() -> None:
    _, files = _files(MemoryWatcher(begin_active=False))
    make = Maker()
    run(files.shown((), make))
    run(files.shown((), make))
    assert make.made == 2


def test_a_listing_let_go_by_the_bound_takes_its_answer_with_it() -> None:
    storage, files = _files(MemoryWatcher(), max_entries=1)
    run(storage.write(ProjectPath(("d1", "x.txt")), b"x"))
    run(storage.write(ProjectPath(("d2", "y.txt")), b"y"))
    make = Maker()
    run(files.shown(("d1",), make))
    run(files.shown(("d2",), make))
    run(files.shown(("d2",), make))
    assert make.made == 2  # d2 kept with its answer
    run(files.shown(("d1",), make))  # the first in, let go: listed and made again
    assert make.made == 3


def test_file_list_stays_true_after_answering_from_a_kept_answer() -> None:
    h = HostHarness(watcher=MemoryWatcher())
    pid = h.ok("project.create", name="shown")["project"]["id"]
    h.ok("file.write", b"a", project=pid, path="a.txt")
    first = h.ok("file.list", project=pid)
    assert h.ok("file.list", project=pid) == first
    h.ok("file.write", b"bb", project=pid, path="b.txt")
    after = h.ok("file.list", project=pid)["entries"]
    assert [(e["name"], e.get("size")) for e in after] == [("a.txt", 1), ("b.txt", 2)]
    h.ok("file.write", b"aaa", project=pid, path="a.txt")
    again = h.ok("file.list", project=pid)["entries"]
    assert [(e["name"], e.get("size")) for e in again] == [("a.txt", 3), ("b.txt", 2)]
