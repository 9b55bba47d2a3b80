"""Files' bytes kept between searches, bounded (issue 33: a search completes within 2 s).

A search in files reads every selected file, and in the browser a cold read of 10,000 small
files costs about as much as the platform's best bare read of them — above the issue's 2 s on
its own (docs/search.md, "Speed"). So the bytes a search reads are kept here, and the next
search (or one after a warm-up, ``file.search_warm``) reads them from memory.

This module is only the store: bounded, least recently used out first, indexed by folder so a
change at a path drops exactly the files at and below it. *When* bytes may be kept and *what
drops them* is :class:`core.projects.listing_cache.ListingCache`'s rule — the same one that
keeps its listings true (the host is the one writer of its OPFS projects, every change it makes
passes through :class:`~core.projects.listing_cache.CachedListings`, and anyone else's change
is reported by the project's watch). A picked folder is never wrapped there, so never kept.

**Bounded.** At most :data:`MAX_KEPT_BYTES` bytes over every project, and no file larger than
:data:`MAX_KEPT_FILE` bytes is kept: the host's memory for kept bytes is a fixed bound, not a
share of the projects' size (SPEC §3: memory does not grow with project bytes past it).
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["MAX_KEPT_BYTES", "MAX_KEPT_FILE", "KeptTexts"]

MAX_KEPT_BYTES = 64 << 20
"""The most bytes kept over every project (64 MiB; the bench's 10,000-file project is 10 MB)."""
MAX_KEPT_FILE = 1 << 20
"""The largest file kept (1 MiB): a larger one is read from storage every time."""

Folder = tuple[str, ...]
_Key = tuple[str, Folder, str]  # (project key, folder, name)


class KeptTexts:
    """The bytes of files of many projects (module docstring), keyed by project key and path
    (a tuple of names). :attr:`bytes` is the total kept, :attr:`hits` the reads answered here.

    ``max_bytes`` and ``max_file`` are in bytes (defaults :data:`MAX_KEPT_BYTES`,
    :data:`MAX_KEPT_FILE`). Never refuses: what does not fit is simply not kept."""

    def __init__(self, *, max_bytes: int = MAX_KEPT_BYTES, max_file: int = MAX_KEPT_FILE) -> None:
        self.max_bytes = max_bytes
        self.max_file = min(max_file, max_bytes)
        self._lru: OrderedDict[_Key, bytes] = OrderedDict()  # oldest first
        self._folders: dict[str, dict[Folder, set[str]]] = {}  # key -> folder -> names kept
        self.bytes = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def full(self) -> bool:
        """True when keeping one more file of :attr:`max_file` bytes would evict another."""
        return self.bytes + self.max_file > self.max_bytes

    def get(self, key: str, path: Folder) -> bytes | None:
        """The kept bytes of ``path`` in project ``key`` (now the most recently used), or
        ``None``."""
        if not path:
            return None
        entry = (key, path[:-1], path[-1])
        data = self._lru.get(entry)
        if data is None:
            return None
        self._lru.move_to_end(entry)
        self.hits += 1
        return data

    def put(self, key: str, path: Folder, data: bytes) -> bool:
        """Keep ``data`` as the bytes of ``path`` in project ``key`` (replacing what was kept),
        then let the least recently used files go until :attr:`max_bytes` holds. False (and
        nothing kept, the old bytes dropped) when the file is larger than :attr:`max_file`."""
        if not path:
            return False
        self._drop_file(key, path[:-1], path[-1])
        if len(data) > self.max_file:
            return False
        entry = (key, path[:-1], path[-1])
        self._lru[entry] = data
        self._folders.setdefault(key, {}).setdefault(entry[1], set()).add(entry[2])
        self.bytes += len(data)
        while self.bytes > self.max_bytes:
            old_key, old_folder, old_name = next(iter(self._lru))
            self._drop_file(old_key, old_folder, old_name)
        return True

    def drop_at(self, key: str, path: Folder) -> None:
        """Drop the file ``path`` of project ``key`` and every file below ``path`` (a folder
        written, moved or removed); ``()`` drops the whole project."""
        folders = self._folders.get(key)
        if not folders:
            return
        if not path:
            self.drop_project(key)
            return
        self._drop_file(key, path[:-1], path[-1])
        n = len(path)
        for folder in [f for f in folders if f[:n] == path]:
            for name in list(folders.get(folder, ())):
                self._drop_file(key, folder, name)

    def drop_project(self, key: str) -> None:
        """Drop every kept file of project ``key``."""
        folders = self._folders.get(key)
        if not folders:
            return
        for folder, names in list(folders.items()):
            for name in list(names):
                self._drop_file(key, folder, name)

    def project_bytes(self, key: str) -> int:
        """The bytes kept for project ``key`` (tests and figures)."""
        folders = self._folders.get(key, {})
        return sum(len(self._lru[(key, f, n)]) for f, names in folders.items() for n in names)

    def _drop_file(self, key: str, folder: Folder, name: str) -> None:
        data = self._lru.pop((key, folder, name), None)
        if data is None:
            return
        self.bytes -= len(data)
        folders = self._folders[key]
        names = folders[folder]
        names.discard(name)
        if not names:
            del folders[folder]
        if not folders:
            del self._folders[key]
