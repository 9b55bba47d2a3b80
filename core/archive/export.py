"""Project archives: a deterministic, streamed ``.zip`` export and an all-or-nothing import
(SPEC §10; docs/archives.md).

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

The manifest, :data:`MANIFEST_NAME` (``.voicebox/archive-manifest.json``), is the last entry,
so every sha256 in it is computed in the one streaming pass. It lives under ``.voicebox/``
because project paths can never be there: no user file can collide with it.

What is exported: every file and every empty folder of the project except its metadata folder
``.voicebox/`` (the host's own write temporaries never reach a listing). ``.voicebox/`` is
*not* exported: its manifest
is regenerated on import (a new id), and its skeleton and mailbox hold host-witnessed facts —
block colours that only a person's receipt import may set, ratifications, the mission chain —
that a file arriving from elsewhere must not be able to assert. Names that fail the path rule
(possible only in a folder edited outside the host, e.g. macOS's ``Icon\\r`` or another
program's ``.vbx-tmp-draft``) are skipped and counted, never exported under another name.

**Import** is two steps. :func:`plan_import` validates *every* entry of an archive held in
memory — names, types, duplicates, case-fold collisions, bounds, and each entry's real size
and sha256, found by decompressing it with the declared size ignored — before anything is
written, and refuses with the first problem's own code (order below). :func:`apply_import`
then writes the plan into a :class:`~core.ports.ProjectFiles` all or nothing: it refuses
``already-exists`` before writing if any target exists, reads every file back to check its
sha256, and on any failure deletes every file and folder it made.

Entry rules, in the order they are checked (codes from :class:`~core.refusals.Code`):

1. the bytes are a readable zip (``archive-invalid``); at most ``max_entries`` entries, counted
   from the central directory before :mod:`zipfile` allocates anything (``archive-too-large``);
2. per entry, in central-directory order: a leading ``/`` or ``\\`` (``archive-entry-absolute``);
   a drive letter (``archive-entry-drive``); a ``..`` segment with ``/`` or ``\\`` as separator,
   or a segment of only dots and spaces with two or more dots, which Windows reads as ``..``
   (``archive-entry-traversal``); then :func:`core.paths.parse_path` — a backslash, NUL or
   control character, an empty or ``.`` segment, ``.voicebox/`` or a temporary's prefix in
   any letter case → ``archive-entry-name-invalid`` (the path rule's own code is kept in the
   details);
3. a symlink, or any other non-regular entry (device, FIFO, socket, Windows reparse point)
   → ``archive-entry-symlink``; encrypted, patched or not stored/deflated → ``archive-invalid``;
   a folder entry carrying data → ``archive-entry-size-mismatch``;
4. the same name twice, or a name that is both a file and a folder
   (``archive-entry-duplicate``); two names equal after Unicode NFC and case folding, when the
   target is case-insensitive (the default) (``archive-entry-case-collision``);
5. declared sizes: one entry over ``max_entry_bytes`` or all over ``max_total``
   (``archive-too-large``); expansion over ``max_ratio`` × the archive's size once it passes
   ``ratio_floor`` (``archive-ratio-exceeded``);
6. actual sizes: each entry is decompressed and counted, stopping one chunk past its declared
   size, so a bomb whose headers lie costs at most one chunk
   (``archive-entry-size-mismatch``); CRC-32 (``archive-invalid``);
7. the manifest, when present, must parse and list exactly the archive's files and empty
   folders with their sizes (``archive-entry-size-mismatch``) and sha256 (``archive-invalid``).

Because no entry may produce more than it declares, the declared bounds of step 5 bound all
the work step 6 does. Refusals name the entry (``details.entry``, a quoted, shortened form).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import stat
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError

from core.custody.environment import ENV_KEY_PATTERN
from core.model import Contract
from core.paths import META_DIR, ProjectPath, check_name, fold, parse_path
from core.ports import ProjectFiles
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused

__all__ = [
    "ARCHIVE_SCHEMA",
    "CHUNK_BYTES",
    "FIXED_DATE_TIME",
    "MANIFEST_NAME",
    "ArchiveExport",
    "ArchiveManifest",
    "ArchiveSummary",
    "ExportSource",
    "ImportBounds",
    "ImportPlan",
    "ImportResult",
    "ManifestFile",
    "PlannedEntry",
    "apply_import",
    "download_filename",
    "export_archive",
    "iso_instant",
    "plan_import",
]

ARCHIVE_SCHEMA = "voicebox-archive-v1"
MANIFEST_NAME = f"{META_DIR}/archive-manifest.json"
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
CHUNK_BYTES = 1 << 20
"""Default read size (bytes) of export and import, and the size at which export hands out."""
MAX_MANIFEST_BYTES = 64 << 20

_FILE_ATTR = (stat.S_IFREG | 0o644) << 16
_DIR_ATTR = ((stat.S_IFDIR | 0o755) << 16) | 0x10  # 0x10: the MS-DOS directory attribute
_UNIX = 3
_UTF8_FLAG = 0x800
_ENCRYPTED = 0x1
_PATCHED = 0x20
_STRONG_ENCRYPTION = 0x40
_DOS_REPARSE_POINT = 0x400
_READ_BYTES = 64 << 10
_UNBOUNDED = 1 << 62
_SHOWN_CHARS = 120


# ---- the manifest ------------------------------------------------------------------------


def _display_name(text: str) -> str:
    try:
        return check_name(text)
    except Refused as exc:
        raise ValueError(exc.message) from None


class ManifestFile(Contract):
    """One exported file: its project path, size in bytes and sha256 (hex) of its bytes."""

    path: str = Field(min_length=1, max_length=4096)
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ArchiveManifest(Contract):
    """``.voicebox/archive-manifest.json``, the archive's last entry (SPEC §10).

    ``name`` is the project's display name; ``source_project`` its id where it was exported;
    ``source_env_key`` the envKey of the environment that exported it (``null`` if it had none
    yet); ``exported_at`` an ISO-8601 UTC instant with milliseconds; ``files`` every file in
    entry order; ``folders`` every empty folder; ``total_bytes`` the sum of file sizes.
    """

    schema_: Literal["voicebox-archive-v1"] = Field(default=ARCHIVE_SCHEMA, alias="schema")
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_display_name)]
    source_project: str | None = Field(default=None, pattern=PROJECT_ID_PATTERN)
    source_env_key: str | None = Field(default=None, pattern=ENV_KEY_PATTERN)
    exported_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    files: list[ManifestFile]
    folders: list[str] = Field(default_factory=list)
    total_bytes: int = Field(ge=0)

    model_config = Contract.model_config | {"populate_by_name": True}

    def to_bytes(self) -> bytes:
        """The manifest entry's bytes: indented JSON, keys sorted, UTF-8, one final newline."""
        data = self.model_dump(mode="json", by_alias=True)
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def iso_instant(ms: int) -> str:
    """``ms`` since the epoch as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (exact, no float rounding)."""
    seconds, millis = divmod(ms, 1000)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{millis:03d}Z"


# ---- export --------------------------------------------------------------------------------


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


async def _walk(files: ProjectFiles) -> tuple[list[_Found], int]:
    """Every exportable file and empty folder (see module docstring), and the skipped count.

    Lists folders only (never reads contents); memory is O(number of entries).
    """
    found: list[_Found] = []
    skipped = 0
    stack: list[tuple[str, ...]] = [()]
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
    ) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        if (source.exported_at_ms or 0) < 0 or source.changed_at_ms < 0:
            raise ValueError("exported_at_ms must not be negative")
        if deflate_level is not None and not 0 <= deflate_level <= 9:
            raise ValueError("deflate_level is 0..9 or None")
        self._files = files
        self._source = source
        # the manifest's head, validated now rather than after the last byte was streamed
        self._head = ArchiveManifest(
            name=source.name,
            source_project=source.project_id,
            source_env_key=source.env_key,
            exported_at=iso_instant(source.exported_at_ms or source.changed_at_ms),
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
        found, skipped = await _walk(self._files)
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
            update["exported_at"] = iso_instant(newest)
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
            filename=download_filename(self._source.name),
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
) -> ArchiveExport:
    """Start a deterministic streaming export of ``files`` (SPEC §10; module docstring).

    Returns an :class:`ArchiveExport`: stream ``export.chunks()`` to its end, then
    ``await export.finish()``. Nothing is read until the stream is iterated. ``chunk_size``
    (bytes) is the read size and the hand-out threshold; ``deflate_level`` (0–9) compresses
    entries instead of storing them. Independent of the host protocol: a host operation and
    an environment server's operation call it alike. An invalid ``source`` (name, envKey,
    project id, negative time) raises ``ValueError`` here, before anything is streamed.
    """
    return ArchiveExport(files, source, chunk_size=chunk_size, deflate_level=deflate_level)


# ---- import: the plan ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportBounds:
    """Bounds of one import. Sizes in bytes; ``max_ratio`` is total expanded bytes over the
    archive's bytes, enforced once the expansion passes ``ratio_floor`` (a tiny archive of
    one compressible file is not a bomb)."""

    max_total: int = 1 << 30
    max_ratio: float = 200.0
    max_entries: int = 100_000
    max_entry_bytes: int = 256 << 20
    ratio_floor: int = 1 << 20


@dataclass(frozen=True, slots=True)
class PlannedEntry:
    """One entry that passed every rule: its project ``path``, ``kind``, real ``size`` in
    bytes and ``sha256`` (hex; ``None`` for a folder)."""

    path: ProjectPath
    kind: Literal["file", "dir"]
    size: int
    sha256: str | None


@dataclass(frozen=True)
class ImportPlan:
    """A fully validated archive, ready for :func:`apply_import`.

    ``entries`` are in path order; ``manifest`` is the archive's manifest if it had one;
    ``total_bytes`` sums the files; ``archive_size``/``archive_sha256`` describe the archive.
    """

    entries: tuple[PlannedEntry, ...]
    manifest: ArchiveManifest | None
    total_bytes: int
    archive_size: int
    archive_sha256: str
    _zip: zipfile.ZipFile = field(repr=False)
    _infos: dict[str, zipfile.ZipInfo] = field(repr=False)

    @property
    def files(self) -> int:
        """How many files the plan writes."""
        return sum(1 for e in self.entries if e.kind == "file")

    @property
    def folders(self) -> tuple[ProjectPath, ...]:
        """Every folder the plan makes: explicit folder entries and every file's parents."""
        seen: set[tuple[str, ...]] = set()
        for e in self.entries:
            parts = e.path.parts if e.kind == "dir" else e.path.parent
            for depth in range(1, len(parts) + 1):
                seen.add(parts[:depth])
        return tuple(ProjectPath(p) for p in sorted(seen, key=lambda p: (len(p), p)))


def _shown(name: str) -> str:
    text = repr(name)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _refuse(code: Code, name: str, why: str, **details: Any) -> Refused:
    shown = _shown(name)
    return Refused(
        code, f"Entry {shown} {why}.", details={"entry": shown, **details}, show_details=True
    )


def _count_entries(data: bytes, limit: int) -> int:
    """How many central-directory records the archive has, counted the way :mod:`zipfile`
    walks them (by the directory's size), stopping past ``limit``; ``archive-invalid`` when
    there is no end record. The only zip structure read here without :mod:`zipfile`: to
    refuse a huge directory before :mod:`zipfile` builds an object per record."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - (22 + 0xFFFF)))
    if end < 0 or end + 22 > len(data):
        raise Refused(Code.ARCHIVE_INVALID, "The file is not a zip archive.")
    size_cd = struct.unpack_from("<I", data, end + 12)[0]
    cd_end = end
    locator = end - 20
    if locator >= 56 and data[locator : locator + 4] == b"PK\x06\x07":
        record = locator - 56
        if data[record : record + 4] == b"PK\x06\x06":
            size_cd = struct.unpack_from("<Q", data, record + 40)[0]
            cd_end = record
    pos = cd_end - size_cd
    if pos < 0:
        raise Refused(Code.ARCHIVE_INVALID, "The zip archive's directory is truncated.")
    count = 0
    while pos < cd_end and count <= limit:
        if data[pos : pos + 4] != b"PK\x01\x02" or pos + 46 > cd_end:
            raise Refused(Code.ARCHIVE_INVALID, "The zip archive's directory is damaged.")
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        pos += 46 + n + m + k
        count += 1
    return count


def _classify_name(raw: str) -> tuple[ProjectPath, bool]:
    """The project path and folder-ness of an entry name, or the name's refusal (rule 2)."""
    folder = raw.endswith("/")
    name = raw[:-1] if folder else raw
    unified = name.replace("\\", "/")
    if unified.startswith("/"):
        raise _refuse(Code.ARCHIVE_ENTRY_ABSOLUTE, raw, "has an absolute path")
    if len(unified) >= 2 and unified[1] == ":" and unified[0].isascii() and unified[0].isalpha():
        raise _refuse(Code.ARCHIVE_ENTRY_DRIVE, raw, "names a drive")
    for seg in unified.split("/"):
        if seg == ".." or (seg.count(".") >= 2 and seg.strip(". ") == ""):
            raise _refuse(Code.ARCHIVE_ENTRY_TRAVERSAL, raw, "climbs out with '..'")
    try:
        path = parse_path(name)
    except Refused as exc:
        raise _refuse(
            Code.ARCHIVE_ENTRY_NAME_INVALID,
            raw,
            f"is not a valid path ({exc.message.rstrip('.')})",
            path_code=str(exc.code),
        ) from None
    return path, folder


def _check_kind(info: zipfile.ZipInfo, folder: bool) -> None:
    """Rule 3: a regular file or folder, readable, a folder without data."""
    name = info.orig_filename
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise _refuse(Code.ARCHIVE_ENTRY_SYMLINK, name, "is a symbolic link")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR) or (
        info.create_system == 0 and info.external_attr & _DOS_REPARSE_POINT
    ):
        raise _refuse(Code.ARCHIVE_ENTRY_SYMLINK, name, "is not a regular file or folder")
    if kind == stat.S_IFDIR and not folder:
        raise _refuse(Code.ARCHIVE_INVALID, name, "is marked a folder but named like a file")
    if info.flag_bits & (_ENCRYPTED | _STRONG_ENCRYPTION):
        raise _refuse(Code.ARCHIVE_INVALID, name, "is encrypted")
    if info.flag_bits & _PATCHED or info.compress_type not in (
        zipfile.ZIP_STORED,
        zipfile.ZIP_DEFLATED,
    ):
        raise _refuse(Code.ARCHIVE_INVALID, name, "uses a compression method not supported")
    if folder and info.file_size:
        raise _refuse(Code.ARCHIVE_ENTRY_SIZE_MISMATCH, name, "is a folder that carries data")


class _Tree:
    """Rule 4: every node (file, folder, implied parent folder) met so far."""

    def __init__(self, case_insensitive: bool) -> None:
        self.kinds: dict[tuple[str, ...], str] = {}
        self.folded: dict[str, tuple[str, ...]] = {}
        self.case_insensitive = case_insensitive

    def add(self, raw: str, path: ProjectPath, folder: bool) -> None:
        parts = path.parts
        nodes = [(parts[:d], "dir") for d in range(1, len(parts))]
        nodes.append((parts, "dir" if folder else "file"))
        for node, kind in nodes:
            known = self.kinds.get(node)
            if known is not None and (known != kind):
                raise _refuse(
                    Code.ARCHIVE_ENTRY_DUPLICATE, raw, "makes a name both a file and a folder"
                )
            if known is not None:
                continue
            self.kinds[node] = kind
            if self.case_insensitive:
                key = fold("/".join(node))
                other = self.folded.setdefault(key, node)
                if other != node:
                    raise _refuse(
                        Code.ARCHIVE_ENTRY_CASE_COLLISION,
                        raw,
                        f"differs only by case from {_shown('/'.join(other))}",
                    )


def _open_counting(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    """Open an entry so that :mod:`zipfile` decompresses past the declared size and leaves
    the CRC to us: we count the real bytes and stop one chunk past the declared size."""
    probe = copy.copy(info)
    probe.file_size = _UNBOUNDED
    del probe.CRC  # zipfile checks the CRC only where it believes the data ends
    return archive.open(probe)


def _read_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, keep: bool
) -> tuple[int, str, bytes | None]:
    """Rule 6 for one entry: ``(size, sha256, bytes if keep)``; refuses size and CRC."""
    declared = info.file_size
    digest = hashlib.sha256()
    crc = 0
    size = 0
    parts: list[bytes] = []
    try:
        with _open_counting(archive, info) as stream:
            while True:
                chunk = stream.read(_READ_BYTES)
                if not chunk:
                    break
                size += len(chunk)
                if size > declared:
                    raise _refuse(
                        Code.ARCHIVE_ENTRY_SIZE_MISMATCH,
                        info.orig_filename,
                        f"holds more than the {declared} bytes it declares",
                        declared=declared,
                    )
                digest.update(chunk)
                crc = zlib.crc32(chunk, crc)
                if keep:
                    parts.append(chunk)
    except Refused:
        raise
    except (
        zipfile.BadZipFile,
        EOFError,
        zlib.error,
        OSError,
        ValueError,
        RuntimeError,
        NotImplementedError,
        struct.error,
    ) as exc:
        raise _refuse(
            Code.ARCHIVE_INVALID, info.orig_filename, f"cannot be read ({type(exc).__name__})"
        ) from None
    if size != declared:
        raise _refuse(
            Code.ARCHIVE_ENTRY_SIZE_MISMATCH,
            info.orig_filename,
            f"holds {size} bytes but declares {declared}",
            declared=declared,
            actual=size,
        )
    if crc != info.CRC:
        raise _refuse(Code.ARCHIVE_INVALID, info.orig_filename, "fails its CRC-32 check")
    return size, digest.hexdigest(), b"".join(parts) if keep else None


def _check_manifest(manifest: ArchiveManifest, entries: list[PlannedEntry]) -> None:
    """Rule 7: the manifest lists exactly the archive's files (size, sha256) and folders."""
    files = {str(e.path): e for e in entries if e.kind == "file"}
    listed = {f.path: f for f in manifest.files}
    for path in sorted(files.keys() ^ listed.keys()):
        where = "is not in the manifest" if path in files else "is in the manifest but missing"
        raise _refuse(Code.ARCHIVE_INVALID, path, where)
    for path, item in listed.items():
        entry = files[path]
        if item.size != entry.size:
            raise _refuse(
                Code.ARCHIVE_ENTRY_SIZE_MISMATCH, path, "has another size in the manifest"
            )
        if item.sha256 != entry.sha256:
            raise _refuse(Code.ARCHIVE_INVALID, path, "has another sha256 in the manifest")
    folders = {str(e.path) for e in entries if e.kind == "dir"}
    if set(manifest.folders) != folders:
        raise Refused(Code.ARCHIVE_INVALID, "The manifest's folders are not the archive's.")


def plan_import(
    data: bytes,
    *,
    max_total: int | None = None,
    max_ratio: float | None = None,
    max_entries: int | None = None,
    case_insensitive_target: bool = True,
    bounds: ImportBounds | None = None,
) -> ImportPlan:
    """Validate every entry of the zip ``data`` and return an :class:`ImportPlan`.

    Nothing is written. Refuses with the archive codes of :class:`~core.refusals.Code`
    (``archive-invalid``, ``archive-entry-absolute``, ``-traversal``, ``-drive``,
    ``-name-invalid``, ``-duplicate``, ``-case-collision``, ``-symlink``,
    ``-size-mismatch``, ``archive-ratio-exceeded``, ``archive-too-large``), in the order of the
    module docstring, naming the entry in ``details.entry``. ``bounds`` gives every bound
    (default :class:`ImportBounds`); ``max_total``/``max_ratio``/``max_entries`` override
    one each. ``case_insensitive_target`` (default true, the safe choice: a picked folder
    may be case-insensitive, and an OPFS project may later be extracted on one) refuses
    names equal after NFC and case folding. Memory: the archive, plus one entry's chunk.
    """
    b = bounds or ImportBounds()
    b = ImportBounds(
        max_total=b.max_total if max_total is None else max_total,
        max_ratio=b.max_ratio if max_ratio is None else max_ratio,
        max_entries=b.max_entries if max_entries is None else max_entries,
        max_entry_bytes=b.max_entry_bytes,
        ratio_floor=b.ratio_floor,
    )
    data = bytes(data)
    count = _count_entries(data, b.max_entries)
    if count > b.max_entries:
        raise Refused(Code.ARCHIVE_TOO_LARGE, f"The archive has more than {b.max_entries} entries.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (
        zipfile.BadZipFile,
        EOFError,
        OSError,
        ValueError,
        UnicodeDecodeError,
        NotImplementedError,
        struct.error,
    ):
        raise Refused(Code.ARCHIVE_INVALID, "The file is not a readable zip archive.") from None
    if len(infos) > b.max_entries:
        raise Refused(Code.ARCHIVE_TOO_LARGE, f"The archive has more than {b.max_entries} entries.")

    tree = _Tree(case_insensitive_target)
    seen: set[str] = set()
    planned: list[tuple[str, ProjectPath | None, bool, zipfile.ZipInfo]] = []
    for info in infos:
        raw = info.orig_filename
        is_manifest = raw == MANIFEST_NAME
        path, folder = (None, False) if is_manifest else _classify_name(raw)
        _check_kind(info, folder)
        if raw in seen:
            raise _refuse(Code.ARCHIVE_ENTRY_DUPLICATE, raw, "appears twice")
        seen.add(raw)
        if path is not None:
            tree.add(raw, path, folder)
        planned.append((raw, path, folder, info))

    declared = 0
    for raw, path, _folder, info in planned:
        limit = MAX_MANIFEST_BYTES if path is None else b.max_entry_bytes
        if info.file_size > limit:
            raise _refuse(Code.ARCHIVE_TOO_LARGE, raw, f"declares more than {limit} bytes")
        declared += info.file_size
    if declared > b.max_total:
        raise Refused(
            Code.ARCHIVE_TOO_LARGE,
            f"The archive expands to {declared} bytes; at most {b.max_total}.",
            details={"declared": declared},
        )
    if declared > b.ratio_floor and declared > b.max_ratio * max(len(data), 1):
        raise Refused(
            Code.ARCHIVE_RATIO_EXCEEDED,
            f"The archive expands {declared / max(len(data), 1):.0f}-fold; "
            f"at most {b.max_ratio:g}-fold.",
            details={"declared": declared, "archive": len(data)},
        )

    entries: list[PlannedEntry] = []
    manifest_bytes: bytes | None = None
    by_path: dict[str, zipfile.ZipInfo] = {}
    for _raw, path, folder, info in planned:
        size, sha, kept = _read_entry(archive, info, keep=path is None)
        if path is None:
            manifest_bytes = kept
        elif folder:
            entries.append(PlannedEntry(path, "dir", 0, None))
        else:
            entries.append(PlannedEntry(path, "file", size, sha))
            by_path[str(path)] = info
    manifest = None
    if manifest_bytes is not None:
        try:
            manifest = ArchiveManifest.model_validate_json(manifest_bytes)
        except ValidationError:
            raise Refused(
                Code.ARCHIVE_INVALID, f"The archive's manifest ({MANIFEST_NAME}) is not valid."
            ) from None
        _check_manifest(manifest, entries)
    entries.sort(key=lambda e: e.path.parts)
    return ImportPlan(
        entries=tuple(entries),
        manifest=manifest,
        total_bytes=sum(e.size for e in entries),
        archive_size=len(data),
        archive_sha256=hashlib.sha256(data).hexdigest(),
        _zip=archive,
        _infos=by_path,
    )


# ---- import: writing -------------------------------------------------------------------


class ImportResult(Contract):
    """What :func:`apply_import` wrote: ``files`` and ``folders`` made, ``bytes`` written."""

    files: int = Field(ge=0)
    folders: int = Field(ge=0)
    bytes: int = Field(ge=0)


async def _sha256_of(files: ProjectFiles, path: ProjectPath) -> str:
    digest = hashlib.sha256()
    async for chunk in files.read_chunks(path, CHUNK_BYTES):
        digest.update(chunk)
    return digest.hexdigest()


async def apply_import(plan: ImportPlan, files: ProjectFiles) -> ImportResult:
    """Write ``plan`` into ``files``, all or nothing (SPEC §10).

    Refuses ``already-exists`` (nothing written) if any planned file or folder exists. Then
    makes the folders, writes each file (atomic per file, :meth:`ProjectFiles.write`), reads
    it back and checks its sha256 against the plan — which was checked against the archive's
    manifest when it had one — refusing ``storage-failed`` on a difference. On any failure it
    deletes every file and folder it made and re-raises the original refusal. Memory: one
    file's bytes at a time.
    """
    folders = plan.folders
    for path in (*folders, *(e.path for e in plan.entries)):
        existing = await files.stat(path)
        if existing is not None and not (existing.kind == "dir" and path in folders):
            raise Refused(Code.ALREADY_EXISTS, f"'{path}' already exists in the target.")
    made: list[ProjectPath] = []
    written: list[ProjectPath] = []
    try:
        for folder in folders:
            if await files.stat(folder) is None:
                await files.mkdir(folder)
                made.append(folder)
        for entry in plan.entries:
            if entry.kind != "file":
                continue
            _, sha, data = _read_entry(plan._zip, plan._infos[str(entry.path)], keep=True)
            assert data is not None
            if sha != entry.sha256:
                raise Refused(Code.ARCHIVE_INVALID, f"'{entry.path}' changed since planning.")
            written.append(entry.path)
            await files.write(entry.path, data)
            del data
            if await _sha256_of(files, entry.path) != entry.sha256:
                raise Refused(Code.STORAGE_FAILED, f"'{entry.path}' does not read back as written.")
    except BaseException:
        await _roll_back(files, written, made)
        raise
    return ImportResult(files=len(written), folders=len(made), bytes=plan.total_bytes)


async def _roll_back(
    files: ProjectFiles, written: list[ProjectPath], made: list[ProjectPath]
) -> None:
    """Best effort: delete what this import wrote, then the folders it made, deepest first."""
    for path in reversed(written):
        with contextlib.suppress(Exception):  # the caller must see the original failure
            await files.delete(path)
    for folder in sorted(made, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(Exception):
            await files.delete(folder)
