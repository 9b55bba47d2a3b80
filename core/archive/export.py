"""Exporting a project: a deterministic ``.zip``, streamed (SPEC §10; docs/archives.md).

**Export** (:func:`export_archive`) writes one project's files into a zip with the standard
library's :mod:`zipfile`, over a non-seekable writer whose bytes are handed out as they are
produced (local headers, data, data descriptors, then the central directory), so memory does
not grow with the project's bytes. Every file is read once, in chunks
(:meth:`~core.ports.ProjectFiles.read_chunks`), and hashed as it streams. The archive is
deterministic: the same files, name and ``exported_at`` give the same bytes every time —

- entries in code-point order of their names (UTF-8 byte order), the manifest last;
- every timestamp 1980-01-01 00:00:00, ``create_system`` 3 (Unix), mode ``0644`` for files and
  ``0755`` for folders, every name UTF-8 with general-purpose flag bit 11 (``0x800``) set;
- entries *stored* by default (no compression; see docs/archives.md for the measurements), so
  the bytes do not even depend on the runtime's zlib. ``deflate_level`` opts into deflate.

What is exported: every file and every empty folder of the project except its metadata folder
``.voicebox/`` (the host's own write temporaries never reach a listing). ``.voicebox/`` is
*not* exported: its manifest
is regenerated on import (a new id), and its skeleton and mailbox hold host-witnessed facts —
block colours that only a person's receipt import may set, ratifications, the mission chain —
that a file arriving from elsewhere must not be able to assert. Names that fail the path rule
(possible only in a folder edited outside the host, e.g. macOS's ``Icon\\r`` or another
program's ``.vbx-tmp-draft``) are skipped and counted, never exported under another name.
"""

from __future__ import annotations

import hashlib
import stat
import unicodedata
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass

from pydantic import Field

from core.archive.manifest import (
    CHUNK_BYTES,
    FIXED_DATE_TIME,
    MANIFEST_NAME,
    ArchiveManifest,
    ManifestFile,
)
from core.model import Contract
from core.paths import META_DIR, ProjectPath, parse_path
from core.ports import ProjectFiles
from core.refusals import Refused
from core.time import instant_iso

__all__ = ["ArchiveExport", "ArchiveSummary", "ExportSource", "download_filename", "export_archive"]

_FILE_ATTR = (stat.S_IFREG | 0o644) << 16
_DIR_ATTR = ((stat.S_IFDIR | 0o755) << 16) | 0x10  # 0x10: the MS-DOS directory attribute
_UNIX = 3
_UTF8_FLAG = 0x800


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


class ArchiveSummary(Contract):
    """A finished export: project ``name``, a suggested download ``filename``, the archive's
    ``size`` in bytes and ``sha256`` (hex), how many ``files`` (and their ``bytes``), empty
    ``folders``, and how many names were ``skipped`` because they fail the path rule."""

    name: str
    filename: str
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)
    folders: int = Field(ge=0)
    skipped: int = Field(ge=0)


class _Utf8Info(zipfile.ZipInfo):
    """A :class:`zipfile.ZipInfo` whose name is always written as UTF-8 with bit 11 set.

    :mod:`zipfile` sets the flag only for non-ASCII names; we set it for every name so a reader
    never has to guess (ASCII is UTF-8 too). Checked by a test on each runtime.
    """

    __slots__ = ()

    def _encodeFilenameFlags(self) -> tuple[bytes, int]:  # zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits | _UTF8_FLAG


def _entry_info(name: str, *, folder: bool, size: int, deflate_level: int | None) -> _Utf8Info:
    info = _Utf8Info(name, date_time=FIXED_DATE_TIME)
    info.create_system = _UNIX
    info.external_attr = _DIR_ATTR if folder else _FILE_ATTR
    info.file_size = size
    info.CRC = 0
    info.compress_size = 0
    if deflate_level is not None and not folder:
        info.compress_type = zipfile.ZIP_DEFLATED
        info._compresslevel = deflate_level  # the attribute zipfile reads, 3.11 to 3.14
    return info


class _Spool:
    """The non-seekable file :mod:`zipfile` writes into (no ``tell``/``seek``, so it writes
    data descriptors). It keeps what was written until :meth:`drain` hands it out, and counts
    and hashes everything that passes."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.pending = 0
        self.size = 0
        self._sha = hashlib.sha256()

    def write(self, data: bytes) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        self.pending += len(chunk)
        self.size += len(chunk)
        self._sha.update(chunk)
        return len(chunk)

    def flush(self) -> None:
        """Nothing to flush: bytes leave through :meth:`drain`."""

    def drain(self) -> bytes:
        out = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts, self.pending = [], 0
        return out

    def sha256(self) -> str:
        return self._sha.hexdigest()


@dataclass(frozen=True, slots=True)
class _Found:
    path: ProjectPath
    size: int
    folder: bool
    modified_ms: int = 0

    @property
    def entry_name(self) -> str:
        return f"{self.path}/" if self.folder else str(self.path)


async def _walk(files: ProjectFiles, start: tuple[str, ...] = ()) -> tuple[list[_Found], int]:
    """Every exportable file and empty folder under ``start`` (``()``: the whole project; see
    module docstring), and the skipped count.

    Lists folders only (never reads contents); memory is O(number of entries).
    """
    found: list[_Found] = []
    skipped = 0
    stack: list[tuple[str, ...]] = [start]
    while stack:
        folder = stack.pop()
        entries = await files.list_dir(folder)
        shown = [e for e in entries if not (folder == () and e.name == META_DIR)]
        if folder and not shown:
            found.append(_Found(ProjectPath(folder), 0, True))
        for entry in shown:
            try:
                path = parse_path("/".join((*folder, entry.name)))
            except Refused:
                skipped += 1
                continue
            if entry.kind == "dir":
                stack.append(path.parts)
            else:
                found.append(_Found(path, entry.size or 0, False, entry.modified_ms or 0))
    found.sort(key=lambda f: f.entry_name)
    return found, skipped


def download_filename(name: str) -> str:
    """A safe download file name for a project called ``name``: characters no file system
    accepts, and control characters, become ``_``; at most 100 characters, then ``.zip``."""
    safe = "".join(
        "_" if ch in '/\\:*?"<>|' or unicodedata.category(ch) == "Cc" else ch for ch in name
    )
    safe = safe.strip(" .")[:100] or "project"
    return f"{safe}.zip"


class ArchiveExport:
    """One export of one project (build it with :func:`export_archive`).

    :meth:`chunks` yields the archive's bytes as they are produced, each chunk at most about
    ``2 × chunk_size`` bytes; iterate it once, to the end. Then :meth:`finish` returns the
    :class:`ArchiveSummary` and :attr:`manifest` the manifest written. Storage refusals
    (``file-not-found`` if a file vanishes mid-export, ``permission-required``, …) propagate
    from the iteration; the bytes already handed out are then not an archive.
    """

    def __init__(
        self,
        files: ProjectFiles,
        source: ExportSource,
        *,
        chunk_size: int = CHUNK_BYTES,
        deflate_level: int | None = None,
        folder: ProjectPath | None = None,
    ) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        if (source.exported_at_ms or 0) < 0 or source.changed_at_ms < 0:
            raise ValueError("exported_at_ms must not be negative")
        if deflate_level is not None and not 0 <= deflate_level <= 9:
            raise ValueError("deflate_level is 0..9 or None")
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
        self._deflate_level = deflate_level
        self._started = False
        self._summary: ArchiveSummary | None = None
        self.manifest: ArchiveManifest | None = None

    async def chunks(self) -> AsyncIterator[bytes]:
        """The archive's bytes, in order (see class docstring)."""
        if self._started:
            raise RuntimeError("an export is streamed once")
        self._started = True
        spool = _Spool()
        archive = zipfile.ZipFile(spool, "w", allowZip64=True)  # type: ignore[arg-type]
        found, skipped = await _walk(self._files, self._folder)
        listed: list[ManifestFile] = []
        folders: list[str] = []
        for item in found:
            info = _entry_info(
                item.entry_name,
                folder=item.folder,
                size=item.size,
                deflate_level=self._deflate_level,
            )
            if item.folder:
                archive.mkdir(info)
                folders.append(str(item.path))
            else:
                digest = hashlib.sha256()
                size = 0
                with archive.open(info, "w") as out:
                    async for chunk in self._files.read_chunks(item.path, self._chunk_size):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        if spool.pending >= self._chunk_size:
                            yield spool.drain()
                listed.append(
                    ManifestFile(path=str(item.path), size=size, sha256=digest.hexdigest())
                )
            if spool.pending >= self._chunk_size:
                yield spool.drain()
        update: dict[str, object] = {
            "files": listed,
            "folders": folders,
            "total_bytes": sum(f.size for f in listed),
        }
        if self._source.exported_at_ms is None:
            newest = max([self._source.changed_at_ms, *(f.modified_ms for f in found)])
            update["exported_at"] = instant_iso(newest)
        self.manifest = self._head.model_copy(update=update)
        data = self.manifest.to_bytes()
        archive.writestr(
            _entry_info(MANIFEST_NAME, folder=False, size=len(data), deflate_level=None), data
        )
        archive.close()
        if spool.pending:
            yield spool.drain()
        self._summary = ArchiveSummary(
            name=self._source.name,
            filename=download_filename(
                f"{self._source.name} - {self._folder[-1]}" if self._folder else self._source.name
            ),
            size=spool.size,
            sha256=spool.sha256(),
            files=len(listed),
            bytes=self.manifest.total_bytes,
            folders=len(folders),
            skipped=skipped,
        )

    async def finish(self) -> ArchiveSummary:
        """The summary of the finished archive; ``RuntimeError`` before :meth:`chunks` ended."""
        if self._summary is None:
            raise RuntimeError("the export has not been streamed to its end")
        return self._summary


def export_archive(
    files: ProjectFiles,
    source: ExportSource,
    *,
    chunk_size: int = CHUNK_BYTES,
    deflate_level: int | None = None,
    folder: ProjectPath | None = None,
) -> ArchiveExport:
    """Start a deterministic streaming export of ``files`` (SPEC §10; module docstring).

    Returns an :class:`ArchiveExport`: stream ``export.chunks()`` to its end, then
    ``await export.finish()``. Nothing is read until the stream is iterated. ``chunk_size``
    (bytes) is the read size and the hand-out threshold; ``deflate_level`` (0–9) compresses
    entries instead of storing them. Independent of the host protocol: a host operation and
    an environment server's operation call it alike. ``folder`` limits the archive to one
    folder of the project (its entries keep their project paths, ``src/…``). An invalid
    ``source`` (name, envKey,
    project id, negative time) raises ``ValueError`` here, before anything is streamed.
    """
    return ArchiveExport(
        files, source, chunk_size=chunk_size, deflate_level=deflate_level, folder=folder
    )
