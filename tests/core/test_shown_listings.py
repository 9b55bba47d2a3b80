"""The ``file.list`` answers of kept listings are kept beside them (issue 18, the open row;
core/host/shown_listings.py): the same kept tuple gives the very same answer without making it
again; a new tuple (the listing changed), a listing read from storage, or one over the bounds
is made afresh; the kept answers stay bounded."""

from __future__ import annotations

from collections.abc import Sequence

from core.host.shown_listings import ShownListings
from core.memory.adapters import MemoryWatcher
from core.ports import Entry
from tests.support import HostHarness


class Maker:
    """``make`` for :class:`ShownListings` that counts its calls."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self, entries: Sequence[Entry], folder: tuple[str, ...]) -> tuple:
        self.made += 1
        return ("/".join(folder), tuple(e.name for e in entries), self.made)


def _entries(*names: str) -> tuple[Entry, ...]:
    return tuple(Entry(name=n, kind="file", size=1) for n in names)


def test_the_same_kept_tuple_gives_the_same_answer_made_once() -> None:
    make = Maker()
    shown = ShownListings(make)
    kept = _entries("a.txt", "b.txt")
    first = shown.shown(kept, ("docs",))
    assert shown.shown(kept, ("docs",)) is first
    assert (make.made, shown.hits) == (1, 1)
    assert first[:2] == ("docs", ("a.txt", "b.txt"))


def test_a_new_tuple_with_other_entries_is_answered_afresh() -> None:
    make = Maker()
    shown = ShownListings(make)
    old = shown.shown(_entries("a.txt"), ())
    new = shown.shown(_entries("a.txt", "late.txt"), ())
    assert new[1] == ("a.txt", "late.txt") and new is not old
    assert make.made == 2


def test_the_same_tuple_in_another_folder_is_another_answer() -> None:
    make = Maker()
    shown = ShownListings(make)
    kept = _entries("a.txt")
    assert shown.shown(kept, ("x",))[0] == "x"
    assert shown.shown(kept, ("y",))[0] == "y"
    assert make.made == 2


def test_a_list_read_from_storage_is_never_kept() -> None:
    make = Maker()
    shown = ShownListings(make)
    read = list(_entries("a.txt"))
    shown.shown(read, ())
    shown.shown(read, ())
    assert (make.made, shown.hits) == (2, 0)


def test_kept_answers_are_bounded_by_count_and_entries() -> None:
    make = Maker()
    shown = ShownListings(make, max_shown=3, max_entries=10)
    tuples = [_entries(f"{i}.txt") for i in range(5)]
    for t in tuples:
        shown.shown(t, ())
    assert shown.shown(tuples[4], ()) and shown.hits == 1  # the newest is kept
    shown.shown(tuples[0], ())  # the oldest was let go: made again
    assert make.made == 6
    big = _entries(*(f"{i}.md" for i in range(11)))
    shown.shown(big, ())
    shown.shown(big, ())
    assert make.made == 8  # over max_entries: never kept
    nine = _entries(*(f"{i}.md" for i in range(9)))
    shown.shown(nine, ())
    shown.shown(tuples[4], ())  # the nine entries pushed the others out
    assert make.made == 10


def test_file_list_shows_a_change_after_answering_from_a_kept_answer() -> None:
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
