"""Planning an import: every entry of an archive checked before anything is written (SPEC §10;
docs/archives.md).

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
   folders with their sizes (``archive-entry-size-mismatch``) and sha256 (``archive-invalid``);
8. project memory (issue 33 item 3): the only names under ``.voicebox/`` taken besides the
   manifest are the records :func:`core.archive.memory.memory_path` names (the block store, the
   mailbox's segments; any other still refuses by rule 2), at most
   :data:`~core.archive.memory.MAX_MEMORY_BYTES` in all (``archive-too-large``), each listed in
   the manifest's ``memory`` with its size and sha256 (``archive-invalid``). Their chains are
   then verified (:func:`core.archive.memory.verify_memory`); a broken one does not refuse the
   plan but is kept as :attr:`ImportPlan.memory_problem` (``archive-memory-broken``).

Because no entry may produce more than it declares, the declared bounds of step 5 bound all
the work step 6 does. Refusals name the entry (``details.entry``, a quoted, shortened form).
"""

from __future__ import annotations

import hashlib
import io
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from core.archive.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    ArchiveManifest,
    ArchiveMemory,
)
from core.archive.memory import (
    MAX_MEMORY_BYTES,
    MemoryCounts,
    MemoryRecord,
    memory_path,
    verify_memory,
)
from core.paths import PathParser, ProjectPath, fold
from core.refusals import Code, Refused

__all__ = ["ImportBounds", "ImportPlan", "PlannedEntry", "plan_import", "read_entry"]

_ENCRYPTED = 0x1
_PATCHED = 0x20
_STRONG_ENCRYPTION = 0x40
_DOS_REPARSE_POINT = 0x400
_READ_BYTES = 64 << 10
_SHOWN_CHARS = 120


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
    ``memory`` holds the project-memory records the archive carries (issue 33 item 3), listed
    by the manifest (rule 8); ``memory_counts`` what they hold when every chain verified, else
    ``memory_problem`` is the ``archive-memory-broken`` refusal naming what is broken — kept,
    not raised, so that a person may still take the files only (``project.import``).
    """

    entries: tuple[PlannedEntry, ...]
    manifest: ArchiveManifest | None
    total_bytes: int
    archive_size: int
    archive_sha256: str
    memory: tuple[MemoryRecord, ...] = ()
    memory_counts: MemoryCounts | None = None
    memory_problem: Refused | None = None
    _data: bytes = field(repr=False, kw_only=True)
    _spans: dict[str, tuple[int, int, int]] = field(repr=False, kw_only=True)

    def file_bytes(self, entry: PlannedEntry) -> bytes:
        """The bytes of the planned file ``entry``, taken again from the archive the plan
        checked — without hashing them again (issue 34): a stored entry is a slice of the
        archive, a deflated one is inflated again (the same bytes give the same output).
        Refuses ``archive-invalid`` if they are not ``entry.size`` bytes (they always are)."""
        start, length, method = self._spans[str(entry.path)]
        raw = self._data[start : start + length]
        if method == zipfile.ZIP_STORED:
            data = raw
        else:
            data = zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw, entry.size + 1)
        if len(data) != entry.size:
            raise Refused(Code.ARCHIVE_INVALID, f"'{entry.path}' changed since planning.")
        return data

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


def _classify_name(raw: str, parser: PathParser) -> tuple[ProjectPath, bool]:
    """The project path and folder-ness of an entry name, or the name's refusal (rule 2;
    ``parser`` checks each distinct segment once, issue 34)."""
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
        path = parser.parse(name)
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


_LOCAL_HEADER = b"PK\x03\x04"
_UTF8_NAME = 0x800


def _entry_span(data: bytes, info: zipfile.ZipInfo, end: int) -> tuple[int, int]:
    """Where ``info``'s compressed data lies in ``data``: ``(start, stop)`` after its local
    header (30 bytes, the name, the extra field), checked as :mod:`zipfile` checks it when it
    opens an entry — the signature, and the name the same as the central directory's — and
    ending at or before ``end`` (the next entry's header or the central directory: entries
    that overlap are refused, as a zip bomb's trick). Refuses ``archive-invalid``."""
    at = int(info.header_offset)
    name = info.orig_filename
    if at < 0 or at + 30 > end or data[at : at + 4] != _LOCAL_HEADER:
        raise _refuse(Code.ARCHIVE_INVALID, name, "cannot be read (its local header is damaged)")
    flags = struct.unpack_from("<H", data, at + 6)[0]
    name_len, extra_len = struct.unpack_from("<HH", data, at + 26)
    raw_name = data[at + 30 : at + 30 + name_len]
    try:
        local_name = raw_name.decode("utf-8" if flags & _UTF8_NAME else "cp437")
    except UnicodeDecodeError:
        local_name = None
    if local_name != name:
        raise _refuse(Code.ARCHIVE_INVALID, name, "has another name in its local header")
    start = at + 30 + int(name_len) + int(extra_len)
    stop = start + int(info.compress_size)
    if stop > end:
        raise _refuse(
            Code.ARCHIVE_INVALID, name, "cannot be read (its data overlaps what follows it)"
        )
    return start, stop


def _inflated(raw: memoryview, method: int) -> Iterator[bytes | memoryview]:
    """The entry's bytes from its compressed ``raw`` bytes, :data:`_READ_BYTES` at most at a
    time (a stored entry is ``raw`` itself: no copy)."""
    if method == zipfile.ZIP_STORED:
        yield raw
        return
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    tail: bytes | memoryview = raw
    while True:
        chunk = inflater.decompress(tail, _READ_BYTES)
        if not chunk:
            return
        yield chunk
        tail = inflater.unconsumed_tail


def read_entry(
    data: bytes, info: zipfile.ZipInfo, keep: bool, end: int | None = None
) -> tuple[int, str, bytes | None]:
    """Rule 6 for one entry of the archive ``data``: ``(size, sha256, bytes if keep)``,
    counting the real bytes (the declared size is ignored; inflating stops one chunk past it).
    Read from ``data`` directly (issue 34: :mod:`zipfile`'s per-entry opening cost more than
    the reading), the local header checked by :func:`_entry_span` (``end``: where the entry's
    room ends, default the end of ``data``). Refuses ``archive-entry-size-mismatch`` and
    ``archive-invalid`` (a damaged header, CRC-32, unreadable data)."""
    declared = info.file_size
    start, stop = _entry_span(data, info, len(data) if end is None else end)
    digest = hashlib.sha256()
    crc = 0
    size = 0
    parts: list[bytes] = []
    try:
        for chunk in _inflated(memoryview(data)[start:stop], info.compress_type):
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
                parts.append(bytes(chunk))
    except zlib.error:
        raise _refuse(
            Code.ARCHIVE_INVALID, info.orig_filename, "cannot be read (its data is damaged)"
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


def _room(infos: list[zipfile.ZipInfo], directory: int) -> dict[int, int]:
    """Each entry's header offset -> where its room ends: the next entry's header, or the
    central directory (at ``directory``) after the last."""
    offsets = sorted({int(info.header_offset) for info in infos})
    return dict(zip(offsets, [*offsets[1:], directory], strict=False))  # none: {}


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


def _check_memory_listed(
    manifest: ArchiveManifest | None, memory: list[tuple[MemoryRecord, str]]
) -> None:
    """Rule 8: the archive's memory records are exactly the manifest's ``memory.files``
    (size and sha256) — memory without a manifest that lists it is never taken."""
    listed = [] if manifest is None or manifest.memory is None else manifest.memory.files
    listed_by = {f.path: f for f in listed}
    found = {str(record.path): (record, sha) for record, sha in memory}
    for name in sorted(found.keys() ^ listed_by.keys()):
        where = "is not in the manifest" if name in found else "is in the manifest but missing"
        raise _refuse(Code.ARCHIVE_INVALID, name, where)
    for name, (record, sha) in found.items():
        item = listed_by[name]
        if item.size != len(record.data) or item.sha256 != sha:
            raise _refuse(Code.ARCHIVE_INVALID, name, "has another size or sha256 in the manifest")


def _check_counts(listed: ArchiveMemory, counts: MemoryCounts) -> None:
    """The manifest's counts of the memory are what the records hold."""
    said = (listed.blocks, listed.green, listed.letters, listed.missions)
    if said != (counts.blocks, counts.green, counts.letters, counts.missions):
        raise Refused(
            Code.ARCHIVE_MEMORY_BROKEN,
            "The project memory in the archive is broken: the manifest's counts of blocks "
            "and letters are not what its records hold.",
        )


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
    parser = PathParser()
    seen: set[str] = set()
    planned: list[tuple[str, ProjectPath | None, bool, zipfile.ZipInfo]] = []
    remembered: dict[str, ProjectPath] = {}  # entry name -> memory record path
    for info in infos:
        raw = info.orig_filename
        is_manifest = raw == MANIFEST_NAME
        record = None if is_manifest else memory_path(raw)
        if record is not None:
            remembered[raw] = record
        path, folder = (None, False) if is_manifest or record else _classify_name(raw, parser)
        _check_kind(info, folder)
        if raw in seen:
            raise _refuse(Code.ARCHIVE_ENTRY_DUPLICATE, raw, "appears twice")
        seen.add(raw)
        if path is not None:
            tree.add(raw, path, folder)
        planned.append((raw, path, folder, info))

    declared = 0
    memory_declared = 0
    for raw, path, _folder, info in planned:
        limit = b.max_entry_bytes
        if path is None:
            limit = MAX_MEMORY_BYTES if raw in remembered else MAX_MANIFEST_BYTES
        if info.file_size > limit:
            raise _refuse(Code.ARCHIVE_TOO_LARGE, raw, f"declares more than {limit} bytes")
        declared += info.file_size
        memory_declared += info.file_size if raw in remembered else 0
    if memory_declared > MAX_MEMORY_BYTES:
        raise Refused(
            Code.ARCHIVE_TOO_LARGE,
            f"The archive's project memory expands past {MAX_MEMORY_BYTES} bytes.",
        )
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
    memory: list[tuple[MemoryRecord, str]] = []
    spans: dict[str, tuple[int, int, int]] = {}
    room = _room(infos, int(archive.start_dir))
    for raw, path, folder, info in planned:
        size, sha, kept = read_entry(data, info, path is None, room[int(info.header_offset)])
        if path is None and raw in remembered:
            assert kept is not None
            memory.append((MemoryRecord(remembered[raw], kept), sha))
        elif path is None:
            manifest_bytes = kept
        elif folder:
            entries.append(PlannedEntry(path, "dir", 0, None))
        else:
            entries.append(PlannedEntry(path, "file", size, sha))
            start = _entry_span(data, info, len(data))[0]
            spans[str(path)] = (start, info.compress_size, info.compress_type)
    manifest = None
    if manifest_bytes is not None:
        try:
            manifest = ArchiveManifest.model_validate_json(manifest_bytes)
        except ValidationError:
            raise Refused(
                Code.ARCHIVE_INVALID, f"The archive's manifest ({MANIFEST_NAME}) is not valid."
            ) from None
        _check_manifest(manifest, entries)
    _check_memory_listed(manifest, memory)
    counts: MemoryCounts | None = None
    problem: Refused | None = None
    if memory:
        try:
            counts = verify_memory([record for record, _ in memory])
            assert manifest is not None and manifest.memory is not None
            _check_counts(manifest.memory, counts)
        except Refused as broken:
            counts, problem = None, broken
    entries.sort(key=lambda e: e.path.parts)
    return ImportPlan(
        entries=tuple(entries),
        manifest=manifest,
        total_bytes=sum(e.size for e in entries),
        archive_size=len(data),
        archive_sha256=hashlib.sha256(data).hexdigest(),
        memory=tuple(record for record, _ in memory),
        memory_counts=counts,
        memory_problem=problem,
        _data=data,
        _spans=spans,
    )
