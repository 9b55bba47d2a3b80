"""Listings kept between calls, for the listings a person is shown (issue 18, the open row).

Opening a project lists its root folder, and in the browser a listing costs the folder's
enumeration — about 45 µs an entry, paid again on every listing (docs/operations.md). So the
listings ``file.list`` shows are kept (:class:`ListingCache`) and stay true in two ways:

- **This host's own changes** go through :class:`CachedListings`: every write, folder,
  delete and move drops the listings it can have changed when it ends (whether it succeeded
  or not), before the call is answered. The host is the one writer of its OPFS projects (its
  Web Lock), so its next listing shows its own change at once.
- **Anyone else's changes** (another same-origin context: DevTools, a test that plants files
  straight into OPFS) are reported by a watch of the project's root folder
  (:class:`~core.ports.WatchesFolders`; the browser's ``FileSystemObserver``). A report drops
  the listings it touches. Until the report arrives, a kept listing may not show such a change:
  that delay is the staleness window, measured in docs/operations.md. A watch that says it
  lost track (``"lost"``: the browser's ``errored`` or ``unknown`` records) drops every listing
  of that project, and a new watch is started by the next listing. A project whose folder
  cannot be watched is never cached: each listing reads storage, as before.

A listing is kept only when its project's watch was active when it began and nothing changed
in that project while it ran (a per-project generation, moved by every change and report).

**What a change drops.** A change at ``path`` (``"changed"``: written, created, resized) drops
the listing of its folder and of ``path`` itself, and the listing of any folder above that does
not already show the next folder down (a folder made on the way). A removal (``"removed"``)
drops the listing of its folder and every kept listing at or below ``path``. A batch of more
than :data:`MAX_BATCH` changes, or a removal in a project with more than :data:`SCAN_FOLDERS`
kept folders, drops the whole project's listings instead of looking one by one.

**Bounded.** At most :data:`MAX_ENTRIES` entries are kept over every project (an empty folder
counts as one), least recently used folder first out, and at most :data:`MAX_ROOTS` projects
are watched (least recently listed first out: its listings dropped, its watch stopped). A
folder of more than :data:`MAX_ENTRIES` entries is not kept. Memory follows the number of
entries kept, never the projects' content bytes.

**The answer kept beside it** (issue 18, round seven). Turning a kept listing into what
``file.list`` answers — the entries shown, one validated model each — cost about 2 µs an entry
on CPython and several times that in Pyodide, on every listing. A kept listing is an immutable
tuple, so the answer made from it stays true as long as it is kept: :meth:`CachedListings.shown`
keeps that answer in the listing's own record, and it goes with the listing (a change, a
report, the bounds). The one caller (``file.list``) makes the same answer from the same entries
every time; each kept listing holds at most one answer, about as much memory again as its
entries.

**Files' bytes, kept by the same rule** (issue 33, a search within 2 s). A search's reads
(:meth:`CachedListings.read_many`) keep the bytes they read in :attr:`ListingCache.texts`
(:class:`~core.projects.kept_texts.KeptTexts`: at most
:data:`~core.projects.kept_texts.MAX_KEPT_BYTES` over every project, no file over
:data:`~core.projects.kept_texts.MAX_KEPT_FILE`, least recently used out first) and answer
from them next time. They stay true exactly as the listings do: bytes are kept only while the
project's watch is active and when nothing changed in the project while they were read (the
generation); every change — this host's own write, batch write, folder, delete or move, as it
ends, and every report of the watch — drops the kept bytes at and below its path (a removal of
a folder, a folder moved away, a project removed: all of its files); a lost watch, a batch of
more than :data:`MAX_BATCH` changes or a project forgotten drops all of the project's. Only
``read_many`` (the search and its warm-up) answers from kept bytes: ``read`` — the editor's
open, a save's conflict check, every decision — always reads storage.

Only :meth:`CachedListings.list_dir_cached` and :meth:`CachedListings.shown`
(:class:`~core.ports.CachesListings`) answer from kept listings;
:meth:`~core.ports.ProjectFiles.list_dir` always reads storage, so decisions — a move's survey,
an export's walk, the trash, the mailbox — never act on a kept listing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.paths import ProjectPath
from core.ports import (
    CachesListings,
    Entry,
    FolderChange,
    FolderWatch,
    ManyRead,
    ProjectFiles,
    ProjectRoots,
    WatchesFolders,
    WrittenMany,
)
from core.projects.kept_texts import KeptTexts
from core.projects.many_reads import read_many
from core.projects.read_through import ReadThrough
from core.projects.write_many import write_many

__all__ = [
    "MAX_BATCH",
    "MAX_ENTRIES",
    "MAX_ROOTS",
    "SCAN_FOLDERS",
    "CachedListings",
    "CachedRoots",
    "ListingCache",
    "cached_lister",
]

MAX_ENTRIES = 20_000
"""The most entries kept over every project (an empty folder counts as one entry)."""
MAX_ROOTS = 8
"""The most projects watched and cached at once."""
MAX_BATCH = 256
"""A report of more changes than this drops the project's listings as a whole."""
SCAN_FOLDERS = 512
"""A removal in a project with more kept folders than this drops them all (no scan)."""

Folder = tuple[str, ...]
Answer = TypeVar("Answer")


@dataclass
class _Kept:
    """One kept listing: its entries (never changed) and the answer made from them, once made
    (:meth:`CachedListings.shown`)."""

    entries: tuple[Entry, ...]
    answer: Any = None


@dataclass
class _Root:
    """One project's kept state: its watch (``unwatchable`` once the watcher said it cannot
    watch it), its generation and its kept folders."""

    watch: FolderWatch | None = None
    unwatchable: bool = False
    generation: int = 0
    folders: set[Folder] = field(default_factory=set)


class ListingCache:
    """The kept listings of every project of one host (module docstring), keyed by project id.

    ``watcher`` watches each cached project's root folder. :attr:`entries` counts the entries
    kept, :attr:`hits` the listings answered from them, :attr:`reports` the batches of changes
    watches reported (:meth:`figures`, for ``host.info``). :attr:`texts` holds the files'
    bytes kept by the same rule (module docstring; ``texts``: a store of other bounds, tests).
    """

    def __init__(
        self,
        watcher: WatchesFolders,
        *,
        max_entries: int = MAX_ENTRIES,
        max_roots: int = MAX_ROOTS,
        texts: KeptTexts | None = None,
    ) -> None:
        self.texts = texts if texts is not None else KeptTexts()
        self._watcher = watcher
        self._max_entries = max_entries
        self._max_roots = max_roots
        self._roots: OrderedDict[str, _Root] = OrderedDict()
        self._kept: OrderedDict[tuple[str, Folder], _Kept] = OrderedDict()
        self.entries = 0
        self.hits = 0
        self.reports = 0

    def figures(self) -> dict[str, int]:
        """``{entries, folders, watched, hits, reports}``: counts for ``host.info``."""
        watched = sum(1 for r in self._roots.values() if r.watch is not None and r.watch.active)
        return {
            "entries": self.entries,
            "folders": len(self._kept),
            "watched": watched,
            "hits": self.hits,
            "reports": self.reports,
        }

    # ---- reading --------------------------------------------------------------------------

    def lookup(self, key: str, folder: Folder) -> _Kept | None:
        """The kept listing of ``folder`` in project ``key``, or ``None``."""
        root = self._roots.get(key)
        if root is None or root.watch is None or not root.watch.active:
            return None
        kept = self._kept.get((key, folder))
        if kept is None:
            return None
        self._kept.move_to_end((key, folder))
        self._roots.move_to_end(key)
        self.hits += 1
        return kept

    def kept_bytes(self, key: str, path: Folder) -> bytes | None:
        """The kept bytes of the file ``path`` in project ``key`` while its watch is active,
        or ``None`` (read storage)."""
        root = self._roots.get(key)
        if root is None or root.watch is None or not root.watch.active:
            return None
        return self.texts.get(key, path)

    def keep_bytes(self, key: str, path: Folder, data: bytes, generation: int) -> bool:
        """Keep ``data`` as the bytes of ``path`` in project ``key`` when ``generation`` (from
        :meth:`begin`, taken before the read) is still its generation and its watch still
        active; True when kept (bounds: :class:`~core.projects.kept_texts.KeptTexts`)."""
        root = self._roots.get(key)
        if root is None or root.generation != generation:
            return False
        if root.watch is None or not root.watch.active:
            return False
        return self.texts.put(key, path, data)

    def begin(self, key: str, files: ProjectFiles) -> int | None:
        """Before listing storage for project ``key`` (whose files are ``files``): its
        generation when the listing may be kept — its watch is active — else ``None``
        (and its watch is started when it has none; a project the watcher cannot watch is
        not asked again until it is forgotten)."""
        root = self._roots.get(key)
        if root is None:
            root = self._roots[key] = _Root()
            while len(self._roots) > self._max_roots:
                self.forget(next(iter(self._roots)))
        self._roots.move_to_end(key)
        if root.watch is None and not root.unwatchable:
            root.watch = self._watcher.watch(files, lambda changes: self.report(key, changes))
            root.unwatchable = root.watch is None
        if root.watch is None or not root.watch.active:
            return None
        return root.generation

    def store(
        self, key: str, folder: Folder, entries: Sequence[Entry], generation: int
    ) -> _Kept | None:
        """Keep ``entries`` as the listing of ``folder`` in project ``key`` when ``generation``
        (from :meth:`begin`) is still its generation and its watch still active; then let
        the least recently used listings go until :data:`MAX_ENTRIES` hold. Returns what was
        kept (as :meth:`lookup` will), or ``None`` when nothing was."""
        root = self._roots.get(key)
        if root is None or root.generation != generation:
            return None
        if root.watch is None or not root.watch.active:
            return None
        size = max(1, len(entries))
        if size > self._max_entries:
            return None
        self._drop(key, root, folder)
        kept = self._kept[(key, folder)] = _Kept(tuple(entries))
        root.folders.add(folder)
        self.entries += size
        while self.entries > self._max_entries:
            (old_key, old_folder), _ = next(iter(self._kept.items()))
            self._drop(old_key, self._roots[old_key], old_folder)
        return kept

    # ---- changes ----------------------------------------------------------------------------

    def changed(self, key: str, changes: Sequence[FolderChange]) -> None:
        """``changes`` happened in project ``key`` (this host's, or reported by its watch):
        drop what they can have changed (module docstring, "What a change drops")."""
        self._drop_texts(key, changes)
        root = self._roots.get(key)
        if root is None:
            return
        root.generation += 1
        if any(c.kind == "lost" for c in changes):
            self._lose(key, root)
            return
        if len(changes) > MAX_BATCH:
            self._drop_all(key, root)
            return
        for change in changes:
            if not root.folders:
                return
            if change.kind == "removed" and len(root.folders) > SCAN_FOLDERS:
                self._drop_all(key, root)
                return
            self._apply(key, root, change)

    def report(self, key: str, changes: Sequence[FolderChange]) -> None:
        """What a watch calls: :meth:`changed`, counted in :attr:`reports`."""
        self.reports += 1
        self.changed(key, changes)

    def forget(self, key: str) -> None:
        """Drop project ``key`` entirely and stop its watch (its project is removed, or it is
        the least recently listed of more than :data:`MAX_ROOTS`)."""
        self.texts.drop_project(key)
        root = self._roots.pop(key, None)
        if root is None:
            return
        root.generation += 1
        self._drop_all(key, root)
        if root.watch is not None:
            root.watch.stop()
            root.watch = None

    # ---- inside -----------------------------------------------------------------------------

    def _drop_texts(self, key: str, changes: Sequence[FolderChange]) -> None:
        """Drop the kept bytes ``changes`` can have changed: at and below each path; all of the
        project's for a lost watch or a batch of more than :data:`MAX_BATCH`."""
        if len(changes) > MAX_BATCH or any(c.kind == "lost" for c in changes):
            self.texts.drop_project(key)
            return
        for change in changes:
            self.texts.drop_at(key, change.path)

    def _apply(self, key: str, root: _Root, change: FolderChange) -> None:
        path = change.path
        if not path:
            self._drop_all(key, root)
            return
        self._drop(key, root, path[:-1])
        if change.kind == "removed":
            self._drop_below(key, root, path)
        else:
            self._drop(key, root, path)
        for depth in range(len(path) - 1):
            above = path[:depth]
            kept = self._kept.get((key, above))
            if kept is not None and not _shows_folder(kept.entries, path[depth]):
                self._drop(key, root, above)

    def _drop(self, key: str, root: _Root, folder: Folder) -> None:
        kept = self._kept.pop((key, folder), None)
        if kept is not None:
            root.folders.discard(folder)
            self.entries -= max(1, len(kept.entries))

    def _drop_below(self, key: str, root: _Root, path: Folder) -> None:
        n = len(path)
        for folder in [f for f in root.folders if f[:n] == path]:
            self._drop(key, root, folder)

    def _drop_all(self, key: str, root: _Root) -> None:
        for folder in list(root.folders):
            self._drop(key, root, folder)

    def _lose(self, key: str, root: _Root) -> None:
        """The watch lost track: drop every listing and the watch (the next listing starts
        another)."""
        self._drop_all(key, root)
        if root.watch is not None:
            root.watch.stop()
            root.watch = None


def _shows_folder(entries: Sequence[Entry], name: str) -> bool:
    return any(e.name == name and e.kind == "dir" for e in entries)


class CachedListings(ReadThrough):
    """:class:`~core.ports.ProjectFiles` of project ``key`` whose shown listings are kept in
    ``cache`` (:class:`~core.ports.CachesListings`). Reads and :meth:`list_dir` pass through
    to ``files`` unchanged; every write, folder, delete and move passes through and then drops
    what it can have changed, also when it failed part-way (module docstring)."""

    def __init__(self, files: ProjectFiles, cache: ListingCache, key: str) -> None:
        super().__init__(files)
        self._cache = cache
        self._key = key

    async def list_dir_cached(self, folder: Folder) -> Sequence[Entry]:
        """See :meth:`core.ports.CachesListings.list_dir_cached`."""
        listed = await self._listed(folder)
        return listed if not isinstance(listed, _Kept) else listed.entries

    async def shown(self, folder: Folder, make: Callable[[Sequence[Entry]], Answer]) -> Answer:
        """See :meth:`core.ports.CachesListings.shown`: the answer kept with the kept listing,
        made by ``make`` the first time it is shown (module docstring)."""
        listed = await self._listed(folder)
        if not isinstance(listed, _Kept):
            return make(listed)
        if listed.answer is None:
            listed.answer = make(listed.entries)
        answer: Answer = listed.answer
        return answer

    async def _listed(self, folder: Folder) -> _Kept | list[Entry]:
        """The kept listing of ``folder`` (kept now if it may be), else the entries read."""
        kept = self._cache.lookup(self._key, folder)
        if kept is not None:
            return kept
        generation = self._cache.begin(self._key, self._files)
        entries = await self._files.list_dir(folder)
        if generation is not None:
            kept = self._cache.store(self._key, folder, entries, generation)
            if kept is not None:
                return kept
        return entries

    @property
    def key(self) -> str:
        """The project key its listings and bytes are kept under (the project id)."""
        return self._key

    def keeps_bytes(self) -> bool:
        """Whether bytes read now may be kept: the project's watch is active (asking starts
        the watch when it has none; a browser watch becomes active a few ms later)."""
        return self._cache.begin(self._key, self._files) is not None

    async def read_many(self, paths: Sequence[ProjectPath], max_bytes: int) -> list[ManyRead]:
        """See :meth:`core.ports.ReadsMany.read_many`: the files whose bytes are kept are
        answered from :attr:`ListingCache.texts`, the others read from storage in one call
        (:func:`core.projects.many_reads.read_many`) and kept when they may be (module
        docstring, "Files' bytes"). Issue 33."""
        out: list[ManyRead | None] = [None] * len(paths)
        missing: list[int] = []
        for i, path in enumerate(paths):
            data = self._cache.kept_bytes(self._key, path.parts)
            if data is not None and len(data) <= max_bytes:
                out[i] = data
            else:
                missing.append(i)
        if missing:
            generation = self._cache.begin(self._key, self._files)
            got = await read_many(self._files, [paths[i] for i in missing], max_bytes)
            for i, read in zip(missing, got, strict=True):
                out[i] = read
                if generation is not None and isinstance(read, bytes):
                    self._cache.keep_bytes(self._key, paths[i].parts, read, generation)
        return [read for read in out if read is not None]

    def _changed(self, *changes: FolderChange) -> None:
        self._cache.changed(self._key, changes)

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write`."""
        try:
            await self._files.write(path, data)
        finally:
            self._changed(FolderChange("changed", path.parts))

    async def write_many(
        self, items: Sequence[tuple[ProjectPath, int]], body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        """See :meth:`core.ports.WritesMany.write_many` (through the files' own, else file by
        file: :func:`core.projects.write_many.write_many`); every folder written into is
        dropped, also when the batch failed part-way."""
        try:
            return await write_many(self._files, items, body, in_place=in_place)
        finally:
            self._changed(*(FolderChange("changed", path.parts) for path, _ in items))

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`."""
        try:
            await self._files.mkdir(path)
        finally:
            self._changed(FolderChange("changed", path.parts))

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete`."""
        try:
            await self._files.delete(path, recursive=recursive)
        finally:
            self._changed(FolderChange("removed", path.parts))

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move`."""
        try:
            await self._files.move(src, dst)
        finally:
            self._changed(FolderChange("removed", src.parts), FolderChange("changed", dst.parts))


class CachedRoots:
    """:class:`~core.ports.ProjectRoots` whose projects' files are :class:`CachedListings`
    over one :class:`ListingCache`; removing a project forgets it (and stops its watch) before
    its folder is removed."""

    def __init__(self, roots: ProjectRoots, cache: ListingCache) -> None:
        self._roots = roots
        self._cache = cache

    async def create(self, project_id: str) -> ProjectFiles:
        """See :meth:`core.ports.ProjectRoots.create`."""
        self._cache.forget(project_id)
        return CachedListings(await self._roots.create(project_id), self._cache, project_id)

    async def open(self, project_id: str) -> ProjectFiles:
        """See :meth:`core.ports.ProjectRoots.open`."""
        return CachedListings(await self._roots.open(project_id), self._cache, project_id)

    async def remove(self, project_id: str) -> None:
        """See :meth:`core.ports.ProjectRoots.remove`."""
        self._cache.forget(project_id)
        try:
            await self._roots.remove(project_id)
        finally:
            self._cache.forget(project_id)

    async def list_ids(self) -> list[str]:
        """See :meth:`core.ports.ProjectRoots.list_ids`."""
        return await self._roots.list_ids()


def cached_lister(files: ProjectFiles) -> CachesListings | None:
    """The :class:`~core.ports.CachesListings` under ``files``' read-through wrappers (a
    picked folder's case guard wraps its files; writes pass through every wrapper), or
    ``None`` when the project's listings are not kept (a picked folder)."""
    while True:
        if isinstance(files, CachesListings):
            return files
        if not isinstance(files, ReadThrough):
            return None
        files = files.reads_from
