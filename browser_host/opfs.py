"""Project and host-state storage over ``FileSystemDirectoryHandle`` (OPFS or a picked folder).

SPEC §3. Per-file access, never a mounted copy: listing walks one folder, reading reads one
file, so opening a project costs the same for 10 files as for 10,000, and memory does not grow
with project bytes. (``pyodide.mountNativeFS`` is deliberately not used: it copies the tree into
memory and its ``syncfs`` deletes what memory lacks — PLATFORM.md.)

Atomic writes: bytes go to a temporary sibling named ``.vbx-tmp-<marker>-<random>`` through
``createWritable()`` (itself committed only on ``close()``), then
``FileSystemFileHandle.move(name)`` replaces the target in one step. A tab closed mid-write
leaves the old file. The names, the marker and the names in flight are
:class:`core.projects.temporaries.Temporaries` — ONE object for the whole host, handed to every
adapter here (every project, every ``open`` of a picked folder), so a listing never mistakes another
call's live temporary for a leftover. A listing leaves this host's temporaries out and removes
those :meth:`~core.projects.temporaries.Temporaries.sweepable` says are leftovers; every other entry
— whatever its name — is listed and never removed.

A full disk (SPEC §3, §4): the write is refused ``storage-quota-exceeded`` (507) and nothing is
left — the temporary is removed, the target keeps its old bytes. Chromium reports it as
``QuotaExceededError``, or — for one large ``write()`` from a worker — as ``AbortError: Failed
to write data to data pipe``; an ``AbortError`` is therefore checked against the quota
(``canReserve`` in ``worker/opfs-io.mjs``: ``navigator.storage.estimate()``, then growing a
never-committed writable of the empty temporary — the estimate alone does not show every
limit, a DevTools override for one) before it is named. The write's steps run in JavaScript
(``writeAtomic`` in ``worker/opfs-io.mjs``: one wait), and every other browser promise here is
awaited through :func:`browser_host.jsutil.settle`: Pyodide 314 mishandles a ``QuotaExceededError``
rejection (the ``await`` never resumes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from pyodide.ffi import to_js

from browser_host.jsutil import JS_ERRORS, BrowserError, js_options, refusal_from_js, settle
from core.json_bound import parse_json
from core.paths import TEMP_PREFIX, ProjectPath
from core.ports import Entry, ManyRead, WrittenMany
from core.projects.temporaries import Temporaries
from core.refusals import Code, Refused

__all__ = [
    "WRITE_MANY_LANES",
    "HandleHostState",
    "HandleProjectFiles",
    "HandleProjectRoots",
    "subfolder",
]

WRITE_MANY_LANES = 16
"""Files in flight at once in one :meth:`HandleProjectFiles.write_many` (the import's and the
folder upload's one write path, issue 34; 16 in flight measured best, ``bench/write_lab.py``)."""

WRITE_MANY_WRITERS = 2
"""Writer workers one :meth:`HandleProjectFiles.write_many` of an OPFS project splits its files
among (``writeMany``'s pool in ``worker/opfs-io.mjs``, issue 34 stop 41: the sync handles'
per-file writes and closes run beside the host's thread; ``bench/write_lab.py`` measured two
writers 1.3–1.5× one, four no better than two on this 2-core machine). A picked folder's batch
is written on the host's thread (its handles give no sync access)."""

READ_MANY_FLIGHT = 16
"""Files :meth:`HandleProjectFiles.read_many` reads at a time (``getFile()``: each a wait on
the browser's storage; the best of the ways measured, issue 33, docs/search.md "Speed")."""
READ_GONE = -1
READ_LARGE = -2
"""What ``readMany`` (``worker/opfs-io.mjs``) reports for a file not read: gone or
unreadable, larger than the bound."""


async def subfolder(handle: Any, name: str, *, create: bool) -> Any:
    """The child folder ``name`` of ``handle`` (created if ``create``)."""
    return await settle(handle.getDirectoryHandle(name, js_options(create=create)))


def _io() -> Any:
    """The worker's ``voicebox_io`` module (``worker/opfs-io.mjs``), which both workers
    register before the host starts (``worker/host.mjs``, ``worker/peer.mjs``): every storage
    step has that one implementation (issue 35)."""
    import voicebox_io  # type: ignore[import-not-found]  # registered by the worker at run time

    return voicebox_io


async def _list_entries(handle: Any) -> list[dict[str, Any]]:
    """The children of the folder ``handle`` as ``{name, kind, size, lastModified}`` rows
    (``kind`` ``"file"`` or ``"directory"``; ``size`` in bytes, ``lastModified`` in ms), from
    ``listEntries`` in ``worker/opfs-io.mjs`` (registered by both workers), which hands them
    over as one JSON string."""
    return list(parse_json(str(await settle(_io().listEntries(handle))), what="A listing"))


async def _list_names(handle: Any) -> list[str]:
    """The names of the children of the folder ``handle``, nothing asked per child
    (``listNames`` in ``worker/opfs-io.mjs``)."""
    names = parse_json(str(await settle(_io().listNames(handle))), what="A listing")
    return [str(name) for name in names]


def _write_refusal(failure: Any, name: str) -> Refused:
    """The refusal for a write failure reported as facts by ``worker/opfs-io.mjs``
    (``{step, name, message, fits}``; see :func:`_write_atomic`)."""
    error = BrowserError(str(failure["name"]), str(failure["message"]))
    if failure["step"] == "write" and error.name == "AbortError" and failure["fits"] is False:
        error = BrowserError("QuotaExceededError", error.message)
    if failure["step"] == "folder":
        return refusal_from_js(
            error, f"No folder for '{name}'", TypeMismatchError=Code.NOT_A_DIRECTORY
        )
    if failure["step"] == "writer":  # a writer worker died mid-shard (writeMany's retire)
        return Refused(
            Code.STORAGE_FAILED,
            f"A writer stopped before '{name}' was written ({error.message}); what it had "
            "written is kept.",
        )
    if failure["step"] == "read":
        return Refused(Code.STORAGE_FAILED, f"'{name}' could not be read back: {error.name}")
    return refusal_from_js(
        error,
        f"Writing '{name}' failed",
        TypeMismatchError=Code.IS_A_DIRECTORY,
        InvalidModificationError=Code.IS_A_DIRECTORY,
    )


async def _write_atomic(folder: Any, name: str, data: bytes, tmp: str) -> None:
    """Write ``data`` as ``name`` in ``folder`` through the temporary ``tmp``:
    ``createWritable`` + ``move``.

    Refuses ``storage-quota-exceeded`` when the bytes do not fit, ``is-a-directory`` when
    ``name`` is a folder, ``storage-failed`` otherwise; in every case the temporary is gone and
    ``name`` keeps its old bytes. The steps run in ``worker/opfs-io.mjs`` in one wait
    (``writeAtomic``, issue 18), which reports a failure as facts — the
    step, the browser's name and message, whether the bytes would fit — and this function
    names it; a write that fails for lack of quota never settles when Python calls
    ``write()`` itself (checked, Pyodide 314 in Chromium 156).
    """
    failed = await settle(_io().writeAtomic(folder, name, to_js(data), tmp))
    if failed is None:
        return
    raise _write_refusal(parse_json(str(failed), what="A write failure report"), name)


@contextlib.asynccontextmanager
async def _handles_closed(cached: bool) -> AsyncIterator[None]:
    """Around a change under an OPFS project root: every cached sync access handle is closed
    first and none is kept until the change is over (``holdHandles`` in
    ``worker/opfs-io.mjs``: an open handle makes the browser refuse to replace, move or
    delete its file or a folder above it). Nothing to do when ``cached`` is false."""
    if not cached:
        yield
        return
    io = _io()
    wait = io.holdHandles()
    try:
        if wait is not None:
            await settle(wait)
        yield
    finally:
        io.releaseHandles()


class HandleProjectFiles:
    """:class:`core.ports.ProjectFiles` over one ``FileSystemDirectoryHandle`` (a project root).

    ``temporaries`` is the host's one :class:`~core.projects.temporaries.Temporaries` (never a fresh
    one per adapter: see the module docstring). ``cached_reads`` (OPFS projects only — a picked
    folder has no sync access handles): whole-file and ranged reads go through a sync access
    handle kept after the first read of a file (``readCached`` in ``worker/opfs-io.mjs``, no
    wait at all), and every write, move and delete closes the cached handles first (issue 18;
    docs/operations.md, "Reads")."""

    def __init__(self, root: Any, temporaries: Temporaries, *, cached_reads: bool = False) -> None:
        self._root = root
        self._temporaries = temporaries
        self._cached = cached_reads

    async def _dir(self, parts: tuple[str, ...], *, create: bool = False) -> Any:
        handle = self._root
        for i, seg in enumerate(parts):
            try:
                handle = await subfolder(handle, seg, create=create)
            except JS_ERRORS as exc:
                where = "/".join(parts[: i + 1])
                raise refusal_from_js(
                    exc, f"No folder '{where}'", TypeMismatchError=Code.NOT_A_DIRECTORY
                ) from None
        return handle

    async def _file(self, path: ProjectPath) -> Any:
        folder = await self._dir(path.parent)
        try:
            return await settle(folder.getFileHandle(path.name))
        except JS_ERRORS as exc:
            raise refusal_from_js(
                exc, f"No file '{path}'", TypeMismatchError=Code.IS_A_DIRECTORY
            ) from None

    async def _read_in_one(self, path: ProjectPath, spans: Any) -> Any:
        """``readFile`` of ``worker/opfs-io.mjs``: the file (or its ``spans``) in one wait,
        refused as :meth:`_file` and :meth:`read` would; with cached reads, the file's handle
        cached when it was not already (then no wait at all)."""
        io = _io()
        if self._cached:
            found = io.readCached(self._root, str(path), spans)
            if found is not None:
                return found
        folder = await self._dir(path.parent)
        cache_root, key = (self._root, str(path)) if self._cached else (None, None)
        try:
            return await settle(io.readFile(folder, path.name, spans, cache_root, key))
        except JS_ERRORS as exc:
            if str(getattr(exc, "message", "")).startswith("open: "):
                raise refusal_from_js(
                    exc, f"No file '{path}'", TypeMismatchError=Code.IS_A_DIRECTORY
                ) from None
            raise refusal_from_js(exc, f"Reading '{path}' failed") from None

    @property
    def overlaps_waits(self) -> bool:
        """See :class:`core.ports.OverlapsWaits`: every call here waits on the browser's
        storage, and several may be in flight at once (issue 34)."""
        return True

    @property
    def in_opfs(self) -> bool:
        """True for an OPFS project's root (made by :class:`HandleProjectRoots`, with cached
        reads), False for a picked folder."""
        return self._cached

    @property
    def root_handle(self) -> Any:
        """The root's ``FileSystemDirectoryHandle`` (the export's byte path reads files under it
        in JavaScript: ``browser_host/byte_path.py``)."""
        return self._root

    async def read(self, path: ProjectPath) -> bytes:
        """See :meth:`core.ports.ProjectFiles.read` (one wait on ``readFile`` in
        ``worker/opfs-io.mjs``)."""
        whole: bytes = (await self._read_in_one(path, None)).to_bytes()
        return whole

    async def read_many(self, paths: Sequence[ProjectPath], max_bytes: int) -> list[ManyRead]:
        """See :meth:`core.ports.ReadsMany.read_many` (issue 33): the whole list in one wait
        and one crossing of its bytes into Python (``readMany`` in ``worker/opfs-io.mjs``,
        :data:`READ_MANY_FLIGHT` files at a time through ``getFile()`` — for an OPFS project
        and a picked folder alike, so what another program changed is what is read). Which
        files and the bound are the caller's."""
        plan = to_js([list(path.parts) for path in paths])
        try:
            found = await settle(_io().readMany(self._root, plan, max_bytes, READ_MANY_FLIGHT))
        except JS_ERRORS as exc:
            raise refusal_from_js(exc, "Reading the project's files failed") from None
        data: bytes = found.data.to_bytes()
        sizes = memoryview(found.sizes.to_bytes()).cast("i").tolist()  # an Int32Array
        out: list[ManyRead] = []
        at = 0
        for size in sizes:
            if size == READ_LARGE:
                out.append("large")
            elif size < 0:
                out.append("unreadable")
            else:
                out.append(data[at : at + size])
                at += size
        return out

    async def read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_ranges` (one wait on ``readFile`` in
        ``worker/opfs-io.mjs``: the slices of one file, only those bytes crossing into
        Python)."""
        found = await self._read_in_one(path, to_js([list(span) for span in spans]))
        return [part.to_bytes() for part in found]

    async def read_chunks(
        self, path: ProjectPath, chunk_size: int = 1 << 20
    ) -> AsyncIterator[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_chunks` (one slice in memory at a time)."""
        handle = await self._file(path)
        blob = await settle(handle.getFile())
        size = int(blob.size)
        for start in range(0, size, chunk_size):
            part = blob.slice(start, min(size, start + chunk_size))
            yield (await settle(part.arrayBuffer())).to_bytes()

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write` (temporary + atomic move)."""
        folder = await self._dir(path.parent, create=True)
        with self._temporaries.writing() as tmp:
            async with _handles_closed(self._cached):
                await _write_atomic(folder, path.name, data, tmp)

    async def write_many(
        self, items: Sequence[tuple[ProjectPath, int]], body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        """See :meth:`core.ports.WritesMany.write_many`: one wait on ``writeMany`` in
        ``worker/opfs-io.mjs`` for the whole batch (issue 34) — in OPFS split among
        :data:`WRITE_MANY_WRITERS` writer workers, :data:`WRITE_MANY_LANES` files at a time in
        each, each as :meth:`write` writes it (through a temporary of this
        host's :class:`~core.projects.temporaries.Temporaries`, in flight until the call
        ends), each folder looked up (made when missing) once, each file read back from
        storage — in OPFS through the sync access handle it was written with, before its
        move; else ``getFile`` — and hashed by WebCrypto (issue 34); the cached handles are
        held closed once around the batch. ``in_place`` (a staged import's new files): no
        temporary and no move — each file is written under its own name (its row's temporary
        is ``""``), two waits on storage a file where there were three (issue 34, stop 43)."""
        rows = [["/".join(path.parent), path.name, "", size] for path, size in items]
        with contextlib.ExitStack() as temporaries:
            for row in rows if not in_place else ():
                row[2] = temporaries.enter_context(self._temporaries.writing())
            async with _handles_closed(self._cached):
                answer = await settle(
                    _io().writeMany(
                        self._root,
                        json.dumps(rows),
                        to_js(body),
                        WRITE_MANY_LANES,
                        WRITE_MANY_WRITERS if self._cached else 1,
                    )
                )
        report = parse_json(str(answer), what="A batch write report")
        read_back = tuple(None if d is None else str(d) for d in report["done"])
        failure = report["failure"]
        if failure is None:
            return WrittenMany(read_back, None)
        path = items[int(failure["index"])][0]
        return WrittenMany(read_back, _write_refusal(failure, str(path)))

    async def stat(self, path: ProjectPath) -> Entry | None:
        """See :meth:`core.ports.ProjectFiles.stat`."""
        try:
            folder = await self._dir(path.parent)
        except Refused:
            return None
        try:
            handle = await settle(folder.getFileHandle(path.name))
        except JS_ERRORS as exc:
            if getattr(exc, "name", "") == "TypeMismatchError":
                return Entry(path.name, "dir")
            if getattr(exc, "name", "") == "NotFoundError":
                return None
            raise refusal_from_js(exc, f"Reading '{path}' failed") from None
        blob = await settle(handle.getFile())
        return Entry(path.name, "file", int(blob.size))

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        """See :meth:`core.ports.ProjectFiles.list_dir`. Leaves this host's temporaries out and
        removes the leftover ones (never anything else). The sizes are asked in parallel by
        ``listEntries`` in ``worker/opfs-io.mjs``."""
        handle = await self._dir(folder)
        entries: list[Entry] = []
        stale: list[str] = []
        temporaries = self._temporaries
        for row in await _list_entries(handle):
            name = str(row["name"])
            kind: Literal["file", "dir"] = "dir" if row["kind"] == "directory" else "file"
            if temporaries.is_ours(name, kind):
                if temporaries.sweepable(name, kind):
                    stale.append(name)
            elif kind == "dir":
                entries.append(Entry(name, "dir"))
            else:
                entries.append(Entry(name, "file", int(row["size"]), int(row["lastModified"])))
        for name in stale:
            with contextlib.suppress(*JS_ERRORS):
                await settle(handle.removeEntry(name))
        return sorted(entries, key=lambda e: e.name)

    async def list_kinds(self, folder: tuple[str, ...]) -> list[Entry]:
        """See :meth:`core.ports.ListsKinds.list_kinds` (``listKinds`` in
        ``worker/opfs-io.mjs``: one wait, no ``getFile()`` per file; the files' handles are
        kept there for the :meth:`read_many` that follows, which then asks no handle per
        file). This host's temporaries are left out; the leftover ones are swept by
        :meth:`list_dir`, not here."""
        handle = await self._dir(folder)
        listed = _io().listKinds(handle, self._root, "/".join(folder))
        rows = parse_json(str(await settle(listed)), what="A listing")
        entries: list[Entry] = []
        for name, kind in rows:
            shown: Literal["file", "dir"] = "dir" if kind == "directory" else "file"
            if not self._temporaries.is_ours(str(name), shown):
                entries.append(Entry(str(name), shown))
        return sorted(entries, key=lambda e: e.name)

    async def list_dirs(self, folders: Sequence[tuple[str, ...]]) -> list[list[Entry]]:
        """See :meth:`core.ports.ListsFolders.list_dirs`: the listings asked all at once (one
        wait for all of them instead of one each; issue 18, the export's walk)."""
        return list(await asyncio.gather(*(self.list_dir(folder) for folder in folders)))

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        """See :meth:`core.ports.ProjectFiles.names` (``keys()`` only: measured about half the
        cost of ``values()``, and no ``getFile()`` per file)."""
        return sorted(await _list_names(await self._dir(folder)))

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`."""
        await self._dir(path.parts, create=True)

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete`."""
        folder = await self._dir(path.parent)
        try:
            async with _handles_closed(self._cached):
                await settle(folder.removeEntry(path.name, js_options(recursive=recursive)))
        except JS_ERRORS as exc:
            raise refusal_from_js(exc, f"Deleting '{path}' failed") from None

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move` (``FileSystemFileHandle.move``)."""
        handle = await self._file(src)
        if await self.stat(dst) is not None:
            raise Refused(Code.ALREADY_EXISTS, f"'{dst}' already exists.")
        target = await self._dir(dst.parent, create=True)
        try:
            async with _handles_closed(self._cached):
                await settle(handle.move(target, dst.name))
        except JS_ERRORS as exc:
            raise refusal_from_js(exc, f"Moving '{src}' failed") from None


class HandleProjectRoots:
    """:class:`core.ports.ProjectRoots` over OPFS ``projects/``: one folder per project id;
    every root it hands out shares the host's ``temporaries`` and reads through cached sync
    access handles (:class:`HandleProjectFiles`), closed before a project is removed."""

    def __init__(self, projects: Any, temporaries: Temporaries) -> None:
        self._projects = projects
        self._temporaries = temporaries

    async def create(self, project_id: str) -> HandleProjectFiles:
        """See :meth:`core.ports.ProjectRoots.create`."""
        try:
            await subfolder(self._projects, project_id, create=False)
        except JS_ERRORS:
            root = await subfolder(self._projects, project_id, create=True)
            return HandleProjectFiles(root, self._temporaries, cached_reads=True)
        raise Refused(Code.ALREADY_EXISTS, "That project id exists.")

    async def open(self, project_id: str) -> HandleProjectFiles:
        """See :meth:`core.ports.ProjectRoots.open`."""
        try:
            root = await subfolder(self._projects, project_id, create=False)
        except JS_ERRORS:
            raise Refused(Code.PROJECT_NOT_FOUND) from None
        return HandleProjectFiles(root, self._temporaries, cached_reads=True)

    async def remove(self, project_id: str) -> None:
        """See :meth:`core.ports.ProjectRoots.remove`."""
        try:
            async with _handles_closed(True):
                await settle(self._projects.removeEntry(project_id, js_options(recursive=True)))
        except JS_ERRORS as exc:
            raise refusal_from_js(
                exc, "Deleting the project failed", NotFoundError=Code.PROJECT_NOT_FOUND
            ) from None

    async def list_ids(self) -> list[str]:
        """See :meth:`core.ports.ProjectRoots.list_ids`."""
        ids = []
        async for child in self._projects.values():
            if child.kind == "directory":
                ids.append(str(child.name))
        return sorted(ids)


class HandleHostState:
    """:class:`core.ports.HostState` over OPFS ``host/`` (HOST_DIR). Atomic ``store``.

    HOST_DIR is never listed, so its temporaries need no marker: ``.vbx-tmp-<random>``. (It
    holds the marker itself, :data:`core.projects.temporaries.MARKER_DOCUMENT`.)"""

    def __init__(self, host_dir: Any) -> None:
        self._dir = host_dir
        self._storing: dict[str, asyncio.Lock] = {}

    async def load(self, name: str) -> bytes | None:
        """See :meth:`core.ports.HostState.load`."""
        try:
            handle = await settle(self._dir.getFileHandle(name))
        except JS_ERRORS:
            return None
        kept: bytes = (await settle((await settle(handle.getFile())).arrayBuffer())).to_bytes()
        return kept

    async def store(self, name: str, data: bytes) -> None:
        """See :meth:`core.ports.HostState.store`. Two stores of one name run one after the
        other, the later last: the browser refuses a move onto a file another move is replacing
        ("a destination which is locked", ``NoModificationAllowedError``) — a revocation's own
        write of ``pairings.json`` and the 1008 it causes, written beside it, met so."""
        lock = self._storing.setdefault(name, asyncio.Lock())
        async with lock:
            await _write_atomic(self._dir, name, data, TEMP_PREFIX + secrets.token_hex(8))
