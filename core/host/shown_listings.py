"""The ``file.list`` answers made from kept listings, kept beside them (issue 18, the open row).

A kept listing (:mod:`core.projects.listing_cache`) saves the folder's enumeration, but turning
its entries into the answer — leaving out ``.voicebox`` at the root and validating one
``EntryInfo`` per entry — still cost about 2 µs an entry on CPython and a few times that in
Pyodide, paid on every listing: most of what separated opening a 10,000-file project from a
10-file one (docs/operations.md, round seven). The answer is a frozen model made only from the
kept list and the folder, so the same kept list gives the same answer: :class:`ShownListings`
keeps the answers of the listings shown last, each beside the very list it was made from.

A kept list is never changed in place: a change drops it and a later listing keeps a new list
(:meth:`core.projects.listing_cache.ListingCache.store` copies what it keeps). So an answer is
reused only while its list is the one the cache hands out — compared by identity, the list held
here so that its identity cannot pass to another — and a dropped listing's answer is never
shown again. A listing read from storage (a picked folder's, never kept) is a new list on every
call and is made afresh each time.

Bounded: at most :data:`MAX_SHOWN` answers and :data:`MAX_SHOWN_ENTRIES` entries in them, the
least recently shown first out; a listing of more entries than that is not kept here.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from core.ports import Entry

__all__ = ["MAX_SHOWN", "MAX_SHOWN_ENTRIES", "ShownListings"]

MAX_SHOWN = 16
"""The most answers kept."""
MAX_SHOWN_ENTRIES = 20_000
"""The most entries over every kept answer (the listing cache's own bound)."""

Answer = TypeVar("Answer")
Folder = tuple[str, ...]


class ShownListings(Generic[Answer]):
    """Answers made by ``make(entries, folder)``, kept for kept listings (module docstring):
    reused while the tuple given is the same object. :attr:`hits` counts reused answers."""

    def __init__(
        self,
        make: Callable[[Sequence[Entry], Folder], Answer],
        *,
        max_shown: int = MAX_SHOWN,
        max_entries: int = MAX_SHOWN_ENTRIES,
    ) -> None:
        self._make = make
        self._max_shown = max_shown
        self._max_entries = max_entries
        self._kept: OrderedDict[tuple[int, Folder], tuple[tuple[Entry, ...], Answer]]
        self._kept = OrderedDict()
        self._entries = 0
        self.hits = 0

    def shown(self, entries: Sequence[Entry], folder: Folder) -> Answer:
        """The answer for ``entries``, a listing of ``folder``: for a kept listing (a tuple)
        the one made before from this very tuple, or a new one kept within the bounds; for a
        list (read from storage, not kept) always a new one."""
        if not isinstance(entries, tuple):
            return self._make(entries, folder)
        key = (id(entries), folder)
        found = self._kept.get(key)
        if found is not None and found[0] is entries:
            self._kept.move_to_end(key)
            self.hits += 1
            return found[1]
        answer = self._make(entries, folder)
        if len(entries) > self._max_entries:
            return answer
        if found is not None:  # a tuple let go whose id this one now has
            self._drop(key)
        self._kept[key] = (entries, answer)
        self._entries += len(entries)
        while len(self._kept) > self._max_shown or self._entries > self._max_entries:
            self._drop(next(iter(self._kept)))
        return answer

    def _drop(self, key: tuple[int, Folder]) -> None:
        entries, _ = self._kept.pop(key)
        self._entries -= len(entries)
