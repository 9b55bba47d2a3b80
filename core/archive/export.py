"""Exporting a project: a deterministic ``.zip``, streamed (SPEC §10; docs/archives.md).

**Export** (:func:`export_archive`) decides everything about the archive — which entries, in
which order, under which names, with which fixed times and modes, the manifest, the refusal
rules — and writes the bytes that frame the entries itself (:mod:`core.archive.zipformat`:
local headers, data descriptors, the central directory). The files' own bytes are moved by a
:class:`~core.ports.FileRelay`, hashed once on the way (size, CRC-32, sha256): by default
:class:`ChunkRelay`, in Python, a chunk at a time; the browser host's relay moves them from
OPFS to the page in the worker's JavaScript without them entering the Wasm heap
(``browser_host/byte_path.py``). Headers follow the data in data descriptors, so nothing is
read twice and memory does not grow with the project's bytes. The archive is deterministic:
the same files, name and ``exported_at`` give the same bytes every time, whichever relay moved
them —

- entries in code-point order of their names (UTF-8 byte order), the manifest last;
- every timestamp 1980-01-01 00:00:00, ``create_system`` 3 (Unix), mode ``0644`` for files and
  ``0755`` for folders, every name UTF-8 with general-purpose flag bit 11 (``0x800``) set;
- every entry *stored* (no compression; see docs/archives.md for the measurements), so the
  bytes depend on no runtime's compressor.

What is exported: every file and every empty folder of the project except its metadata folder
``.voicebox/`` (the host's own write temporaries never reach a listing), then — for a whole
project — its memory, when it has one (issue 33 item 3): the block store and the mailbox's
segments, under their own ``.voicebox/`` names, after the files and before the manifest,
verified and checked for held secrets first (:mod:`core.archive.memory`, which also says what
of ``.voicebox/`` stays behind and why; memory that cannot travel is left out and said in the
summary's ``memory_left_out``). The manifest is then schema v2 and lists the records in its
``memory``. Names that fail the path rule
(possible only in a folder edited outside the host, e.g. macOS's ``Icon\\r``, ``CON.txt`` or a
person's ``.vbx-tmp-my-draft.md``) cannot be carried: an archive holding one would be refused
by every import (:mod:`core.archive.plan` applies the same rule), and they are never exported
under another name. They are *left out and said*: the summary counts them (``skipped``) and
lists them with the rule each fails (``left_out``, the first :data:`MAX_LEFT_OUT` in entry
order), and the page shows that list after the export (issue 29 item 14). The only names left
out silently are this host's own write temporaries, which no listing shows
(:mod:`core.projects.temporaries`: its marker, in flight or swept).
"""

from __future__ import annotations

import hashlib
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from core.archive.manifest import (
    ARCHIVE_SCHEMA_WITH_MEMORY,
    CHUNK_BYTES,
    MANIFEST_NAME,
    ArchiveManifest,
    ArchiveMemory,
    ManifestFile,
)
from core.archive.memory import CollectedMemory
from core.archive.names import archive_filename, download_filename
from core.archive.zipformat import (
    CentralEntry,
    central_directory,
    data_descriptor,
    descriptor_template,
    local_header,
)
from core.model import Contract
from core.paths import META_DIR, ProjectPath, parse_path
from core.ports import AnnouncedSink, FileRelay, ProjectFiles, Relayed, RelayItem, Sink
from core.projects.read_through import WALK_FOLDERS, many_lister
from core.refusals import Code, Refused
from core.time import instant_iso
from core.vocabulary import Sha256Hex

__all__ = [
    "MAX_LEFT_OUT",
    "ArchiveExport",
    "ArchiveSummary",
    "ChunkRelay",
    "ExportSource",
    "LeftOut",
    "MemorySummary",
    "download_filename",
    "export_archive",
    "filled",
    "memory_summary",
]

BATCH_FILES = 2048
"""Files handed to the relay at once (a round trip to the browser's byte path per batch; the
byte path's readers drain at each batch's end: with 256, the bench's 467-file export left a
reader idle 50–90 ms at its one boundary, issue 18 round six; the plan costs about 100 bytes a
file)."""
MAX_LEFT_OUT = 100
"""Left-out names an export's summary lists (the count, ``skipped``, is always whole)."""
_SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class ExportSource:
    """Who is exported and as of when: the project's display ``name``; ``exported_at_ms`` (ms
    since the epoch) — or ``None`` to take the instant of the newest change the archive
    contains (the latest file modification, at least ``changed_at_ms``), so that exporting an
    unchanged project twice gives byte-identical archives (issue 4); the exporting
    environment's ``env_key`` and the project's id, when known."""

    name: str
    exported_at_ms: int | None
    env_key: str | None = None
    project_id: str | None = None
    changed_at_ms: int = 0


class LeftOut(Contract):
    """A name an export left out: its ``path`` as shown (control, format and bidi characters
    written as ``\\uXXXX``; at most 300 characters) and ``why`` — the path rule's own sentence
    (issue 29 item 14)."""

    path: str = Field(max_length=_SHOWN_CHARS)
    why: str = Field(max_length=400)


def _shown_path(text: str) -> str:
    shown = "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch
        for ch in text
    )
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 1] + "…"


class MemorySummary(Contract):
    """The project memory an archive carries (issue 33 item 3): ``blocks`` (``green`` of
    them), mailbox ``letters`` and ``missions``, ``records`` (files under ``.voicebox/``) and
    their ``bytes``."""

    blocks: int = Field(ge=0)
    green: int = Field(ge=0)
    letters: int = Field(ge=0)
    missions: int = Field(ge=0)
    records: int = Field(ge=0)
    bytes: int = Field(ge=0)


class ArchiveSummary(Contract):
    """A finished export: project ``name``, a suggested download ``filename``, the archive's
    ``size`` in bytes and ``manifest_sha256`` (hex), how many ``files`` (and their ``bytes``),
    empty ``folders``, how many names were ``skipped`` because they fail the path rule, and
    ``left_out``: those names and why, the first :data:`MAX_LEFT_OUT` in entry order (module
    docstring; issue 29 item 14).

    ``memory`` is the project memory the archive carries (``None``: none, or left out);
    ``memory_left_out`` the sentence saying why the project's memory stayed behind, when it
    did (a held secret, a broken chain, too large; issue 33 item 3).

    ``manifest_sha256`` is the sha256 of the manifest entry's bytes
    (``.voicebox/archive-manifest.json``). It identifies the whole archive: the manifest lists
    every file with its sha256 and every folder, and the rest of the archive is a function of
    those (the format is deterministic). Each byte is hashed once (docs/archives.md §4), so no
    sha256 of the whole archive is computed; check one with
    ``unzip -p archive.zip .voicebox/archive-manifest.json | sha256sum``."""

    name: str
    filename: str
    size: int = Field(ge=0)
    manifest_sha256: Sha256Hex
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)
    folders: int = Field(ge=0)
    skipped: int = Field(ge=0)
    left_out: list[LeftOut] = Field(default_factory=list, max_length=MAX_LEFT_OUT)
    memory: MemorySummary | None = None
    memory_left_out: str | None = Field(default=None, max_length=1000)


def filled(item: RelayItem, crc32: int, size: int) -> bytes:
    """``item.after`` with the measured ``crc32`` and ``size`` written where ``item.fill``
    says (little-endian). Raises ``OverflowError`` when a value does not fit its width."""
    out = bytearray(item.after)
    for what, offset, width in item.fill:
        value = crc32 if what == "crc32" else size
        out[offset : offset + width] = value.to_bytes(width, "little")
    return bytes(out)


class ChunkRelay:
    """The :class:`~core.ports.FileRelay` in Python: each file is read with
    :meth:`~core.ports.ProjectFiles.read_chunks` (``chunk_size`` bytes at a time), each chunk
    hashed (:mod:`hashlib` sha256, :func:`zlib.crc32`) and handed to the sink, joined to the
    small bytes around it while they stay under ``chunk_size``. At most about two chunks are
    held."""

    def __init__(self, chunk_size: int = CHUNK_BYTES) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        self.chunk_size = chunk_size

    def begin(self, files: ProjectFiles, sink: Sink) -> None:
        """See :meth:`core.ports.FileRelay.begin`: nothing to get ready."""

    async def relay(
        self, files: ProjectFiles, items: Sequence[RelayItem], sink: Sink
    ) -> list[Relayed]:
        """See :meth:`core.ports.FileRelay.relay`."""
        pending: list[bytes] = []
        held = 0
        out: list[Relayed] = []

        async def put(data: bytes) -> None:
            nonlocal held
            pending.append(data)
            held += len(data)
            if held >= self.chunk_size:
                await sink(b"".join(pending))
                pending.clear()
                held = 0

        for item in items:
            await put(item.lead)
            digest = hashlib.sha256()
            crc = 0
            size = 0
            async for chunk in files.read_chunks(item.path, self.chunk_size):
                digest.update(chunk)
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
                await put(chunk)
            try:
                after = filled(item, crc, size)
            except OverflowError:
                after = item.after  # the export refuses this size; the stream is not an archive
            await put(after)
            out.append(Relayed(size, crc, digest.hexdigest()))
        if pending:
            await sink(b"".join(pending))
        return out


@dataclass(frozen=True, slots=True)
class _Found:
    path: ProjectPath
    size: int
    folder: bool
    modified_ms: int = 0

    @property
    def entry_name(self) -> str:
        return f"{self.path}/" if self.folder else str(self.path)


async def _walk(
    files: ProjectFiles, start: tuple[str, ...] = ()
) -> tuple[list[_Found], list[tuple[str, str]]]:
    """Every exportable file and empty folder under ``start`` (``()``: the whole project; see
    module docstring), and the names left out, sorted: ``(path, the path rule's sentence)``.

    Lists folders only (never reads contents), a depth at a time: where the files list several
    folders in one wait (:class:`~core.ports.ListsFolders`; a browser folder), ``WALK_FOLDERS``
    at once (issue 18). The result is sorted, so it does not depend on how the listings were
    asked. Memory is O(number of entries).
    """
    found: list[_Found] = []
    left_out: list[tuple[str, str]] = []
    lister = many_lister(files)
    level: list[tuple[str, ...]] = [start]
    while level:
        deeper: list[tuple[str, ...]] = []
        for at in range(0, len(level), WALK_FOLDERS):
            group = level[at : at + WALK_FOLDERS]
            listings = (
                await lister.list_dirs(group)
                if lister is not None
                else [await files.list_dir(folder) for folder in group]
            )
            for folder, entries in zip(group, listings, strict=True):
                shown = [e for e in entries if not (folder == () and e.name == META_DIR)]
                if folder and not shown:
                    found.append(_Found(ProjectPath(folder), 0, True))
                for entry in shown:
                    try:
                        path = parse_path("/".join((*folder, entry.name)))
                    except Refused as refused:
                        kind = "/" if entry.kind == "dir" else ""
                        left_out.append(("/".join((*folder, entry.name)) + kind, refused.message))
                        continue
                    if entry.kind == "dir":
                        deeper.append(path.parts)
                    else:
                        found.append(_Found(path, entry.size or 0, False, entry.modified_ms or 0))
        level = deeper
    found.sort(key=lambda f: f.entry_name)
    left_out.sort()
    return found, left_out


class ArchiveExport:
    """One export of one project (build it with :func:`export_archive`).

    :meth:`write_to` hands the archive's bytes to a sink, in order, as they are produced, and
    returns the :class:`ArchiveSummary`; :attr:`manifest` is then the manifest written. Bytes
    the export makes itself (headers, descriptors, the manifest, the directory) are gathered
    up to ``chunk_size`` and handed out with the next file's first bytes; a file's bytes go
    through the relay. Storage refusals (``file-not-found`` if a file vanishes mid-export,
    ``permission-required``, …) propagate; the bytes already handed out are then not an
    archive. A file that grows past 2 GiB while exported without zip64 sizes refuses
    ``storage-failed``.
    """

    def __init__(
        self,
        files: ProjectFiles,
        source: ExportSource,
        *,
        chunk_size: int = CHUNK_BYTES,
        relay: FileRelay | None = None,
        folder: ProjectPath | None = None,
        memory: CollectedMemory | None = None,
    ) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        if (source.exported_at_ms or 0) < 0 or source.changed_at_ms < 0:
            raise ValueError("exported_at_ms must not be negative")
        self._files = files
        self._source = source
        self._folder = folder.parts if folder is not None else ()
        # the manifest's head, validated now rather than after the last byte was streamed
        self._head = ArchiveManifest(
            name=source.name,
            source_project=source.project_id,
            source_env_key=source.env_key,
            exported_at=instant_iso(source.exported_at_ms or source.changed_at_ms),
            files=[],
            total_bytes=0,
        )
        self._chunk_size = chunk_size
        self._relay: FileRelay = relay if relay is not None else ChunkRelay(chunk_size)
        if memory is not None and memory.records and folder is not None:
            raise ValueError("a folder's archive carries no project memory")
        self._memory = memory
        self._started = False
        self.manifest: ArchiveManifest | None = None

    async def write_to(self, sink: Sink) -> ArchiveSummary:
        """Hand the archive's bytes to ``sink`` in order; return the summary (class doc)."""
        if self._started:
            raise RuntimeError("an export is streamed once")
        self._started = True
        self._relay.begin(self._files, sink)  # it may get ready while the project is walked
        found, left_out = await _walk(self._files, self._folder)
        if isinstance(sink, AnnouncedSink):  # before the first byte (issue 34, round 42)
            sink.announce(
                archive_filename(self._source.name, self._folder),
                sum(f.size for f in found if not f.folder),
            )
        pending: list[bytes] = []  # bytes made here, not yet handed out
        held = 0
        offset = 0
        directory: list[CentralEntry] = []
        listed: list[ManifestFile] = []
        folders: list[str] = []
        # entries planned since the last batch, in archive order: (item, header, zip64, after)
        planned: list[tuple[_Found, bytes, bool, bytes]] = []
        items: list[RelayItem] = []

        async def put(data: bytes) -> None:
            nonlocal held
            pending.append(data)
            held += len(data)
            if held >= self._chunk_size and not items:  # never ahead of files not yet relayed
                await flush()

        async def flush() -> None:
            nonlocal held
            if pending:
                await sink(b"".join(pending))
                pending.clear()
                held = 0

        async def relay_batch() -> None:
            nonlocal offset
            moved = await self._relay.relay(self._files, items, sink) if items else []
            results = iter(moved)
            for item, header, zip64, after in planned:
                start = offset
                offset += len(header)
                if item.folder:
                    directory.append(CentralEntry(item.entry_name, True, 0, 0, start))
                    continue
                got = next(results)
                try:
                    data_descriptor(got.crc32, got.size, zip64=zip64)
                except ValueError:
                    raise Refused(
                        Code.STORAGE_FAILED,
                        f"'{item.path}' grew past 2 GiB while it was exported.",
                    ) from None
                offset += got.size + len(after)
                directory.append(
                    CentralEntry(item.entry_name, False, got.size, got.crc32, start, zip64)
                )
                listed.append(ManifestFile(path=str(item.path), size=got.size, sha256=got.sha256))
            planned.clear()
            items.clear()

        for item in found:
            header, zip64 = local_header(item.entry_name, folder=item.folder, size_hint=item.size)
            if item.folder:
                planned.append((item, header, False, b""))
                folders.append(str(item.path))
                await put(header)
                continue
            after, fill = descriptor_template(zip64=zip64)
            planned.append((item, header, zip64, after))
            items.append(RelayItem(item.path, b"".join([*pending, header]), after, fill, item.size))
            pending.clear()
            held = 0
            if len(items) >= BATCH_FILES:
                await relay_batch()
        await relay_batch()
        update: dict[str, object] = {
            "files": listed,
            "folders": folders,
            "total_bytes": sum(f.size for f in listed),
        }
        carried = self._memory if self._memory is not None and self._memory.records else None
        if carried is not None and carried.counts is not None:
            # the memory's records: small, made here like the manifest, after every file
            records: list[ManifestFile] = []
            for record in carried.records:
                name = str(record.path)
                header, zip64 = local_header(name, folder=False, size_hint=len(record.data))
                crc = zlib.crc32(record.data)
                descriptor = data_descriptor(crc, len(record.data), zip64=zip64)
                directory.append(CentralEntry(name, False, len(record.data), crc, offset, zip64))
                offset += len(header) + len(record.data) + len(descriptor)
                for part in (header, record.data, descriptor):
                    await put(part)
                records.append(
                    ManifestFile(
                        path=name,
                        size=len(record.data),
                        sha256=hashlib.sha256(record.data).hexdigest(),
                    )
                )
            counts = carried.counts
            update["schema_"] = ARCHIVE_SCHEMA_WITH_MEMORY
            update["memory"] = ArchiveMemory(
                files=records,
                blocks=counts.blocks,
                green=counts.green,
                letters=counts.letters,
                missions=counts.missions,
            )
        if self._source.exported_at_ms is None:
            newest = max([self._source.changed_at_ms, *(f.modified_ms for f in found)])
            update["exported_at"] = instant_iso(newest)
        self.manifest = self._head.model_copy(update=update)  # validated parts, as before
        data = self.manifest.to_bytes()
        header, zip64 = local_header(MANIFEST_NAME, folder=False, size_hint=len(data))
        crc = zlib.crc32(data)
        tail = [header, data, data_descriptor(crc, len(data), zip64=zip64)]
        directory.append(CentralEntry(MANIFEST_NAME, False, len(data), crc, offset, zip64))
        offset += sum(len(t) for t in tail)
        tail.append(central_directory(directory, offset))
        for part in tail:
            await put(part)
        await flush()
        size = offset + len(tail[-1])
        return ArchiveSummary(
            name=self._source.name,
            filename=archive_filename(self._source.name, self._folder),
            size=size,
            manifest_sha256=hashlib.sha256(data).hexdigest(),
            files=len(listed),
            bytes=self.manifest.total_bytes,
            folders=len(folders),
            skipped=len(left_out),
            left_out=[
                LeftOut(path=_shown_path(path), why=why[:400])
                for path, why in left_out[:MAX_LEFT_OUT]
            ],
            memory=memory_summary(self.manifest.memory),
            memory_left_out=None if self._memory is None else self._memory.left_out,
        )


def memory_summary(memory: ArchiveMemory | None) -> MemorySummary | None:
    """The :class:`MemorySummary` of a manifest's ``memory`` (``None`` for none): the counts it
    states — checked against the records by the export and by the import — and the records'
    number and bytes (issue 33 item 3)."""
    if memory is None:
        return None
    return MemorySummary(
        blocks=memory.blocks,
        green=memory.green,
        letters=memory.letters,
        missions=memory.missions,
        records=len(memory.files),
        bytes=sum(f.size for f in memory.files),
    )


def export_archive(
    files: ProjectFiles,
    source: ExportSource,
    *,
    chunk_size: int = CHUNK_BYTES,
    relay: FileRelay | None = None,
    folder: ProjectPath | None = None,
    memory: CollectedMemory | None = None,
) -> ArchiveExport:
    """Start a deterministic streaming export of ``files`` (SPEC §10; module docstring).

    Returns an :class:`ArchiveExport`: ``await export.write_to(sink)`` streams it and returns
    the summary. Nothing is read until then. ``chunk_size`` (bytes) is the size up to which
    the export's own bytes are gathered, and :class:`ChunkRelay`'s read size; ``relay`` moves
    the files' bytes (default: :class:`ChunkRelay`). ``folder`` limits the archive to one
    folder of the project (its entries keep their project paths, ``src/…``); ``memory`` is the
    project memory to carry (:func:`core.archive.memory.collect_memory`; a whole project
    only, else ``ValueError``; issue 33 item 3). Independent of
    the host protocol: a host operation and an environment server's operation call it alike.
    An invalid ``source`` (name, envKey, project id, negative time) raises ``ValueError``
    here, before anything is streamed.
    """
    return ArchiveExport(
        files, source, chunk_size=chunk_size, relay=relay, folder=folder, memory=memory
    )
