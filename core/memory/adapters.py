"""In-memory implementations of every port (real implementations, not mocks) — STYLE §1.

The test suite runs the whole core over these on CPython and inside Pyodide. They keep the
same promises as the browser adapters: atomic writes (a write replaces the bytes in one step),
listings sorted by name, refusals with the same codes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Union

from core.paths import ProjectPath
from core.ports import Clock, Entry, FolderChange, FolderEntry, ProjectFiles, StoredAuditRecord
from core.projects.read_through import ReadThrough
from core.refusals import Code, Refused

__all__ = [
    "FixedClock",
    "MemoryAuditKey",
    "MemoryAuditSink",
    "MemoryFolderProjects",
    "MemoryHostState",
    "MemoryPeerChannel",
    "MemoryProjectFiles",
    "MemoryProjectRoots",
    "MemoryWatch",
    "MemoryWatcher",
    "SeededRandomness",
    "memory_channel_pair",
]

Node = Union[bytes, "dict[str, Node]"]


class MemoryProjectFiles:
    """:class:`~core.ports.ProjectFiles` over nested dicts (folder = dict, file = bytes).

    ``quota`` (bytes, optional) makes writes past the total refuse ``storage-quota-exceeded``
    with nothing changed, like the browser's quota. ``fold_case`` makes it behave like a
    case-insensitive, case-preserving disk (macOS APFS, Windows NTFS — where picked folders
    live): a name finds the entry whose letter-case-folded spelling matches, and an existing
    entry keeps its spelling when it is written again under another one.
    """

    def __init__(
        self, quota: int | None = None, clock: Clock | None = None, *, fold_case: bool = False
    ) -> None:
        self.tree: dict[str, Node] = {}
        self.quota = quota
        self.clock = clock
        self.fold_case = fold_case
        self.modified: dict[tuple[str, ...], int] = {}
        self.watches: list[MemoryWatch] = []

    def _note(self, *changes: FolderChange) -> None:
        """Queue ``changes`` for every active watch of this folder (:class:`MemoryWatcher`)."""
        for watch in self.watches:
            if watch.active:
                watch.pending.extend(changes)

    def _key(self, node: dict[str, Node], name: str) -> str:
        """The key ``name`` finds in ``node``: itself, or on a folding disk the entry spelled
        differently whose folded spelling is the same."""
        if not self.fold_case or name in node:
            return name
        folded = unicodedata.normalize("NFC", name).casefold()
        for key in node:
            if unicodedata.normalize("NFC", key).casefold() == folded:
                return key
        return name

    def _folder(self, parts: tuple[str, ...], *, create: bool = False) -> dict[str, Node]:
        node: dict[str, Node] = self.tree
        for seg in parts:
            seg = self._key(node, seg)
            child = node.get(seg)
            if child is None:
                if not create:
                    raise Refused(Code.FILE_NOT_FOUND, f"No folder '{'/'.join(parts)}'.")
                child = node[seg] = {}
            if isinstance(child, bytes):
                raise Refused(Code.NOT_A_DIRECTORY, f"'{seg}' is a file, not a folder.")
            node = child
        return node

    def _used(self, node: dict[str, Node] | None = None) -> int:
        node = self.tree if node is None else node
        return sum(len(v) if isinstance(v, bytes) else self._used(v) for v in node.values())

    async def read(self, path: ProjectPath) -> bytes:
        """See :meth:`core.ports.ProjectFiles.read`."""
        folder = self._folder(path.parent)
        value = folder.get(self._key(folder, path.name))
        if value is None:
            raise Refused(Code.FILE_NOT_FOUND, f"No file '{path}'.")
        if not isinstance(value, bytes):
            raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.")
        return value

    async def read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_ranges`."""
        data = await self.read(path)
        return [data[offset : offset + max(0, length)] for offset, length in spans]

    async def read_chunks(
        self, path: ProjectPath, chunk_size: int = 1 << 20
    ) -> AsyncIterator[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_chunks`."""
        data = await self.read(path)
        for start in range(0, len(data), chunk_size):
            yield data[start : start + chunk_size]

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write`."""
        if self.quota is not None:
            old = await self.stat(path)
            growth = len(data) - (old.size or 0 if old and old.kind == "file" else 0)
            if self._used() + growth > self.quota:
                raise Refused(Code.STORAGE_QUOTA_EXCEEDED)
        folder = self._folder(path.parent, create=True)
        name = self._key(folder, path.name)
        if isinstance(folder.get(name), dict):
            raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.")
        folder[name] = bytes(data)
        self.modified[(*path.parent, name)] = self.clock.now_ms() if self.clock is not None else 0
        self._note(FolderChange("changed", (*path.parent, name)))

    async def stat(self, path: ProjectPath) -> Entry | None:
        """See :meth:`core.ports.ProjectFiles.stat`."""
        try:
            folder = self._folder(path.parent)
        except Refused:
            return None
        value = folder.get(self._key(folder, path.name))
        if value is None:
            return None
        if isinstance(value, bytes):
            return Entry(path.name, "file", len(value))
        return Entry(path.name, "dir")

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        """See :meth:`core.ports.ProjectFiles.list_dir`."""
        node = self._folder(folder)
        return [
            Entry(k, "file", len(v), self.modified.get((*folder, k), 0))
            if isinstance(v, bytes)
            else Entry(k, "dir")
            for k, v in sorted(node.items())
        ]

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        """See :meth:`core.ports.ProjectFiles.names`."""
        return sorted(self._folder(folder))

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`."""
        self._folder(path.parts, create=True)
        self._note(FolderChange("changed", path.parts))

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete`."""
        folder = self._folder(path.parent)
        name = self._key(folder, path.name)
        value = folder.get(name)
        if value is None:
            raise Refused(Code.FILE_NOT_FOUND, f"No file or folder '{path}'.")
        if isinstance(value, dict) and value and not recursive:
            raise Refused(Code.DIRECTORY_NOT_EMPTY, f"'{path}' is not empty.")
        del folder[name]
        self._note(FolderChange("removed", (*path.parent, name)))

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move`."""
        data = await self.read(src)
        if await self.stat(dst) is not None:
            raise Refused(Code.ALREADY_EXISTS, f"'{dst}' already exists.")
        target = self._folder(dst.parent, create=True)
        target[self._key(target, dst.name)] = data
        source = self._folder(src.parent)
        del source[self._key(source, src.name)]
        self._note(FolderChange("removed", src.parts), FolderChange("changed", dst.parts))


class MemoryWatch:
    """One watch of a :class:`MemoryProjectFiles` (:class:`~core.ports.FolderWatch`): the
    changes made since the last :meth:`MemoryWatcher.deliver` wait in ``pending``."""

    def __init__(self, report: Callable[[Sequence[FolderChange]], None], active: bool) -> None:
        self.report = report
        self.active = active
        self.ended = False
        self.pending: list[FolderChange] = []

    def stop(self) -> None:
        """See :meth:`core.ports.FolderWatch.stop`."""
        self.active = False
        self.ended = True
        self.pending.clear()


class MemoryWatcher:
    """:class:`~core.ports.WatchesFolders` over :class:`MemoryProjectFiles` (under any
    read-through wrappers): every change made to a watched folder — by the host, or straight
    into the folder by anyone — is reported, but only when :meth:`deliver` is called, as a
    browser's observer reports some time after the change. ``available=False`` plays a runtime
    without an observer (``watch`` answers ``None``); ``begin_active=False`` watches that have
    not begun yet (:meth:`begin` begins them)."""

    def __init__(self, *, available: bool = True, begin_active: bool = True) -> None:
        self.available = available
        self.begin_active = begin_active
        self.started: list[MemoryWatch] = []

    def watch(
        self, files: ProjectFiles, report: Callable[[Sequence[FolderChange]], None]
    ) -> MemoryWatch | None:
        """See :meth:`core.ports.WatchesFolders.watch`."""
        while isinstance(files, ReadThrough):
            files = files.reads_from
        if not self.available or not isinstance(files, MemoryProjectFiles):
            return None
        watch = MemoryWatch(report, self.begin_active)
        files.watches.append(watch)
        self.started.append(watch)
        return watch

    def begin(self) -> None:
        """Every watch started so far begins (becomes active)."""
        for watch in self.started:
            watch.active = not watch.ended

    def deliver(self) -> None:
        """Report every active watch's pending changes, one batch per watch."""
        for watch in self.started:
            if watch.active and watch.pending:
                batch, watch.pending = watch.pending, []
                watch.report(batch)

    def lose(self) -> None:
        """Every active watch reports ``lost`` and ends (the browser's ``errored``)."""
        for watch in self.started:
            if watch.active:
                watch.pending.clear()
                watch.active = False
                watch.ended = True
                watch.report([FolderChange("lost")])


class MemoryProjectRoots:
    """:class:`~core.ports.ProjectRoots` holding :class:`MemoryProjectFiles` by id."""

    def __init__(self) -> None:
        self.roots: dict[str, MemoryProjectFiles] = {}

    async def create(self, project_id: str) -> MemoryProjectFiles:
        """See :meth:`core.ports.ProjectRoots.create`."""
        if project_id in self.roots:
            raise Refused(Code.ALREADY_EXISTS, "That project id exists.")
        root = self.roots[project_id] = MemoryProjectFiles()
        return root

    async def open(self, project_id: str) -> MemoryProjectFiles:
        """See :meth:`core.ports.ProjectRoots.open`."""
        try:
            return self.roots[project_id]
        except KeyError:
            raise Refused(Code.PROJECT_NOT_FOUND) from None

    async def remove(self, project_id: str) -> None:
        """See :meth:`core.ports.ProjectRoots.remove`."""
        if self.roots.pop(project_id, None) is None:
            raise Refused(Code.PROJECT_NOT_FOUND)

    async def list_ids(self) -> list[str]:
        """See :meth:`core.ports.ProjectRoots.list_ids`."""
        return sorted(self.roots)


class MemoryFolderProjects:
    """:class:`~core.ports.FolderProjects` whose "handles" are :class:`MemoryProjectFiles`.

    ``permission[project_id]`` plays the browser's permission state: ``"granted"``,
    ``"prompt"`` or ``"denied"`` (default granted).
    """

    def __init__(self) -> None:
        self.folders: dict[str, tuple[str, MemoryProjectFiles, int]] = {}
        self.permission: dict[str, str] = {}

    async def add(self, project_id: str, name: str, handle: object, now_ms: int) -> None:
        """See :meth:`core.ports.FolderProjects.add`."""
        if not isinstance(handle, MemoryProjectFiles):
            raise Refused(Code.MESSAGE_MALFORMED, "That is not a folder handle.")
        self.folders[project_id] = (name, handle, now_ms)

    async def entries(self) -> list[FolderEntry]:
        """See :meth:`core.ports.FolderProjects.entries`."""
        return [FolderEntry(pid, name, at) for pid, (name, _, at) in sorted(self.folders.items())]

    def _get(self, project_id: str) -> tuple[str, MemoryProjectFiles, int]:
        try:
            return self.folders[project_id]
        except KeyError:
            raise Refused(Code.PROJECT_NOT_FOUND) from None

    async def open(self, project_id: str) -> MemoryProjectFiles:
        """See :meth:`core.ports.FolderProjects.open`."""
        _, files, _ = self._get(project_id)
        state = self.permission.get(project_id, "granted")
        if state == "denied":
            raise Refused(Code.PERMISSION_DENIED)
        if state != "granted":
            raise Refused(Code.PERMISSION_REQUIRED)
        return files

    async def handle(self, project_id: str) -> object:
        """See :meth:`core.ports.FolderProjects.handle`."""
        return self._get(project_id)[1]

    async def rename(self, project_id: str, name: str) -> None:
        """See :meth:`core.ports.FolderProjects.rename`."""
        _, files, at = self._get(project_id)
        self.folders[project_id] = (name, files, at)

    async def forget(self, project_id: str) -> None:
        """See :meth:`core.ports.FolderProjects.forget`."""
        self._get(project_id)
        del self.folders[project_id]


class MemoryHostState:
    """:class:`~core.ports.HostState` over a dict of named documents."""

    def __init__(self) -> None:
        self.docs: dict[str, bytes] = {}

    async def load(self, name: str) -> bytes | None:
        """See :meth:`core.ports.HostState.load`."""
        return self.docs.get(name)

    async def store(self, name: str, data: bytes) -> None:
        """See :meth:`core.ports.HostState.store`."""
        self.docs[name] = bytes(data)


class MemoryAuditKey:
    """:class:`~core.ports.AuditKey` over a secret held in memory (stdlib ``hmac``).

    ``secret`` defaults to 32 fresh bytes from the OS's CSPRNG; two instances made with the
    same secret are the same key (a host restarted over the same key file).
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secrets.token_bytes(32) if secret is None else bytes(secret)

    def __repr__(self) -> str:
        return "MemoryAuditKey(<secret>)"

    async def mac(self, data: bytes) -> str:
        """See :meth:`core.ports.AuditKey.mac`."""
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    async def mac_many(self, items: list[bytes]) -> list[str]:
        """See :meth:`core.ports.AuditKey.mac_many`."""
        return [hmac.new(self._secret, item, hashlib.sha256).hexdigest() for item in items]


class MemoryAuditSink:
    """:class:`~core.ports.AuditSink` over a dict keyed by sequence number."""

    def __init__(self) -> None:
        self.records: dict[int, dict[str, object]] = {}

    async def append(self, seq: int, record: dict[str, object]) -> None:
        """See :meth:`core.ports.AuditSink.append`."""
        if seq in self.records:
            raise Refused(Code.STORAGE_FAILED, "That audit sequence number is taken.")
        self.records[seq] = dict(record)

    async def last(self) -> StoredAuditRecord | None:
        """See :meth:`core.ports.AuditSink.last`."""
        if not self.records:
            return None
        seq = max(self.records)
        return StoredAuditRecord(seq, self.records[seq])

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        """See :meth:`core.ports.AuditSink.range`."""
        return [
            StoredAuditRecord(s, self.records[s])
            for s in sorted(self.records)
            if first <= s <= last
        ]


class FixedClock:
    """:class:`~core.ports.Clock` that stands still until told to move (``advance``)."""

    def __init__(self, now_ms: int = 1_767_225_600_000) -> None:
        self.ms = now_ms

    def now_ms(self) -> int:
        """The current fixed time."""
        return self.ms

    def advance(self, ms: int) -> None:
        """Move the clock forward by ``ms`` milliseconds."""
        self.ms += ms


class SeededRandomness:
    """:class:`~core.ports.Randomness` that is deterministic (tests only: NOT a CSPRNG)."""

    def __init__(self, seed: int = 7) -> None:
        import random

        self._rng = random.Random(seed)

    def token_bytes(self, n: int) -> bytes:
        """``n`` pseudo-random bytes from the seed."""
        return self._rng.randbytes(n)


class MemoryPeerChannel:
    """:class:`~core.ports.PeerChannel` end whose frames land in the other end's ``inbox``.

    Build two connected ends with :func:`memory_channel_pair`. ``closed`` is ``(code, reason)``
    once either end closed; both ends see the same close, and sending after it refuses
    ``environment-unreachable``. A peer that never reads its inbox is a silent peer.
    """

    def __init__(self) -> None:
        self.inbox: list[str] = []
        self.data: list[tuple[str, bytes]] = []
        self.closed: tuple[int, str] | None = None
        self.other: MemoryPeerChannel | None = None

    async def send(self, frame: str) -> None:
        """See :meth:`core.ports.PeerChannel.send`."""
        if self.closed is not None or self.other is None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        self.other.inbox.append(str(frame))

    async def close(self, code: int, reason: str) -> None:
        """See :meth:`core.ports.PeerChannel.close`."""
        if self.closed is None:
            self.closed = (code, reason)
            if self.other is not None and self.other.closed is None:
                self.other.closed = (code, reason)

    async def send_data(self, request_id: str, data: bytes) -> None:
        """See :meth:`core.ports.PeerChannel.send_data` (lands in the other end's ``data``)."""
        if self.closed is not None or self.other is None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        self.other.data.append((request_id, bytes(data)))

    def take(self) -> list[str]:
        """Remove and return every frame received so far, oldest first."""
        frames, self.inbox = self.inbox, []
        return frames


def memory_channel_pair() -> tuple[MemoryPeerChannel, MemoryPeerChannel]:
    """Two connected :class:`MemoryPeerChannel` ends (caller end, peer end)."""
    a, b = MemoryPeerChannel(), MemoryPeerChannel()
    a.other, b.other = b, a
    return a, b
