"""The mailbox's persisted index, ``.voicebox/mailbox.index``: its binary format, the
structures that search it in place, and how a :class:`~core.missions.mailbox.Mailbox` is
loaded from it and written to it (seed 004 §2; issue 18).

**Persisted index.** So that the first post after the host starts does not read the whole log
either, the index is also kept beside the mailbox in ``.voicebox/mailbox.index`` (a cache:
the log stays the only truth). Its first line is a canonical JSON header — :data:`INDEX_SCHEMA`,
the segment it covers up to (``tail``), how many segments that is, how many bytes of that
segment it covers and their sha256 (``tail_sha256``), the counters, the sizes of what follows
and the crc32 of the fan-out and mission table; then, in binary, the fan-out (256 big-endian
``uint32``: how many content ids start with a byte ≤ ``b``, as in a git pack index), the
mission table (one fixed row per mission, sorted: id, offset, length and crc32 of its
document), the sorted content ids (32 bytes each) and the documents
(:meth:`~core.missions.chain.MissionChains.dump`). The index is read by parts through
:meth:`~core.ports.ProjectFiles.read_range`, never whole (issue 18: whole, it was 9 MB at
100,000 letters): on open the header, fan-out and table (one read of the file's first
:data:`_FIRST_READ` bytes, a second only for a larger table); then, on first use, the one
fan-out bucket of ids a dedup check needs and the one mission document a head needs. On open
the index is used only when it still describes a prefix of the log: the header parses, the
sizes add up to the file's (``stat``), the fan-out and table have their crc32, the same
segments exist up to ``tail`` and that segment's first ``tail_size`` bytes (ending at a line
end) hash to ``tail_sha256`` — or, when the tail record extends this index over segments
started since (below), the record's own checks hold instead. The lines after that point
(posts the index has not seen, e.g. after an interrupted append) are then read and replayed;
anything else — no index, an old or truncated one, a log rewritten under it, a replayed line
that does not extend its head — rebuilds it from the whole log. Nothing is decoded per letter
on open: ids and missions are searched in place by bisection, and a mission's document is
checked (crc32) and decoded on first use; a damaged one (or an id bucket or document cut
short) is refused ``storage-failed`` and the next use rebuilds. The index is rewritten after a
rebuild and when the tail record would cover more than ``TAIL_SEGMENTS`` segments (a post that
starts a segment, or an open that replayed into one, writes the record instead: issue 34,
tail.py "Rolls"), and by the host's warm-up when the record covers sealed segments
(:meth:`_PersistedIndex.fold_index`); a failure to write it is ignored (the next open
rebuilds). Sealed segments are never rewritten by this host, so they are not re-hashed: a
foreign edit of one sealed before the index that keeps the tail intact, or of one sealed since
that keeps its size, is not detected (the in-memory :class:`~core.missions.mailbox.
MailboxCache` makes the same assumption).

**Tail record** (issue 34): the posts since the index — up to
:data:`~core.missions.mailbox.tail.TAIL_SEGMENTS` segments of them — are kept beside it, in
:mod:`core.missions.mailbox.tail`; an open takes that record with the index when it matches.
"""

from __future__ import annotations

import bisect
import hashlib
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Self

from core.json_bound import parse_json
from core.missions.chain import MissionChains
from core.missions.mailbox.line import MailboxLine
from core.missions.mailbox.segments import segment_path
from core.missions.mailbox.sorted_bytes import _FANOUT, _ID_BYTES, _ROW, _RowKeys, _SortedIds
from core.missions.mailbox.tail import (
    TAIL_PATH,
    TAIL_SEGMENTS,
    TailRecord,
    read_tail,
    tail_bytes,
)
from core.model import canonical_json
from core.paths import META_DIR, ProjectPath
from core.ports import ProjectFiles
from core.refusals import Refused

INDEX_PATH = ProjectPath((META_DIR, "mailbox.index"))
"""Where the persisted index lives (module docstring, "Persisted index")."""
INDEX_SCHEMA = "voicebox-mailbox-index-v2"
"""Bump when what a line decodes to changes: an index of another schema is rebuilt."""
_FIRST_READ = 4096
"""Bytes of the index read first on open: header, fan-out, a table of ≤ ~80 missions."""


class _PersistedIndex:
    """The part of :class:`~core.missions.mailbox.Mailbox` that loads it from its persisted
    index and writes that index (module docstring). The state below is the mailbox's, set by
    ``Mailbox.__init__``."""

    files: ProjectFiles
    chains: MissionChains
    _recent_ids: set[bytes]
    _indexed_ids: _IdIndex
    _docs: _DocTable | None
    letters: int
    skipped: int
    duplicates: int
    _positions: int
    _tail: int
    _tail_data: bytes
    _tail_exists: bool
    _segments: int
    _base: str | None
    _touched: set[str]
    _unrecorded: int
    _index_tail: int
    _sealed: list[tuple[int, int]]

    def __init__(self, files: ProjectFiles) -> None:  # Mailbox's own (_from_index makes one)
        raise NotImplementedError

    @classmethod
    async def _from_index(cls, files: ProjectFiles, indexes: list[int]) -> tuple[Self, int] | None:
        """The mailbox as its persisted index left it and how many bytes of its tail segment
        the index covers (the tail's current bytes are kept: the lines after that prefix are
        the caller's to replay), or ``None`` when there is no index or it does not match.
        Reads the index's header, fan-out and table only (module docstring); nothing here is
        O(letters)."""
        try:
            entry = await files.stat(INDEX_PATH)
            if entry is None or entry.kind != "file" or not entry.size:
                return None
            (first,) = await files.read_ranges(INDEX_PATH, [(0, _FIRST_READ)])
        except Refused:
            return None
        try:
            end = first.index(b"\n")
            header = parse_json(first[:end], what="The mailbox index header")
            if not isinstance(header, dict) or header.get("schema") != INDEX_SCHEMA:
                return None
            tail, size = header["tail"], header["tail_size"]
            table_at = end + 1 + _FANOUT.size
            ids_at = table_at + header["missions"] * _ROW.size
            docs_at = ids_at + header["ids"] * _ID_BYTES
            if entry.size != docs_at + header["docs_bytes"]:
                return None
            block = first[end + 1 : ids_at]
            if len(block) < ids_at - end - 1:
                at = end + 1 + len(block)
                (rest,) = await files.read_ranges(INDEX_PATH, [(at, ids_at - at)])
                block += rest
            if zlib.crc32(block) != header["table_crc32"]:
                return None
            fanout = _FANOUT.unpack_from(block)
            if fanout[-1] != header["ids"] or list(fanout) != sorted(fanout):
                return None
            if header["segments"] != sum(1 for i in indexes if i <= tail) or tail not in indexes:
                return None
            box = cls(files)
            box._base = hashlib.sha256(first[:end]).hexdigest()
            record = await read_tail(files, box._base, header, indexes)
            if record is None or not record.sealed:  # the index's own tail decides
                data = await files.read(segment_path(tail))
                covered = data[:size]
                if len(covered) != size or (covered and not covered.endswith(b"\n")):
                    return None
                if hashlib.sha256(covered).hexdigest() != header["tail_sha256"]:
                    return None
                if record is not None and not record.matches(data, size):
                    record = None
            else:  # the record's tail, after segments sealed since the index (tail.py)
                data = await files.read(segment_path(record.tail))
                if not record.matches(data, 0):
                    return None
            box._indexed_ids = _IdIndex(fanout, ids_at)
            box._docs = _DocTable(block[_FANOUT.size :], docs_at, header["docs_bytes"])
            box.chains = MissionChains.lazy(box._docs)
            box.letters, box.skipped = header["letters"], header["skipped"]
            box.duplicates, box._positions = header["duplicates"], header["positions"]
            box._tail, box._tail_data, box._tail_exists = tail, data, True
            box._index_tail = tail
        except (Refused, ValueError, KeyError, TypeError, UnicodeDecodeError, struct.error):
            return None
        if record is None:
            return box, size
        box._take_tail_record(record)
        return box, record.covered

    def _take_tail_record(self, record: TailRecord) -> None:
        """Take a believed tail record (:mod:`~core.missions.mailbox.tail`): its documents
        win over the index's, its ids and counters are the mailbox's, its tail the tail."""
        assert self._docs is not None
        self._docs.overlay(record.docs)
        self._recent_ids, self._touched = record.ids, set(record.docs)
        self.letters, self.skipped, self.duplicates, self._positions = record.counters
        self._tail, self._sealed = record.tail, list(record.sealed)

    async def _need(self, lines: Sequence[MailboxLine]) -> None:
        """Read the parts of the persisted index that checking ``lines`` needs — the id
        bucket of each line, the document of each mission line's mission — in at most two
        storage calls. Raises ``ValueError`` for a part cut short or damaged; storage
        refusals propagate."""
        await self._indexed_ids.fetch(self.files, [bytes.fromhex(line.id) for line in lines])
        if self._docs is not None:
            missions = [line.mission.mission_id for line in lines if line.mission is not None]
            await self._docs.fetch(self.files, missions)

    async def _need_all(self) -> None:
        """Read every part of the persisted index still on storage (a listing of every
        mission, a rewrite of the index)."""
        await self._indexed_ids.fetch_all(self.files)
        if self._docs is not None:
            await self._docs.fetch_all(self.files)

    def _index_bytes(self) -> bytes:
        """The persisted index of the current state (module docstring). Folds the ids taken
        since the last index into the sorted ones."""
        ids = self._indexed_ids.merged(self._recent_ids)
        self._indexed_ids, self._recent_ids = _IdIndex.loaded(ids), set()
        fanout = _SortedIds(ids).fanout()
        rows, docs, offset = [], [], 0
        for mission_id, doc in self.chains.dump():
            rows.append(_ROW.pack(mission_id.encode("ascii"), offset, len(doc), zlib.crc32(doc)))
            docs.append(doc)
            offset += len(doc)
        table = fanout + b"".join(rows)
        header: dict[str, object] = {
            "schema": INDEX_SCHEMA,
            "tail": self._tail,
            "segments": self._segments,
            "tail_size": len(self._tail_data),
            "tail_sha256": hashlib.sha256(self._tail_data).hexdigest(),
            "letters": self.letters,
            "skipped": self.skipped,
            "duplicates": self.duplicates,
            "positions": self._positions,
            "ids": len(ids) // _ID_BYTES,
            "missions": len(rows),
            "docs_bytes": offset,
            "table_crc32": zlib.crc32(table),
        }
        head = canonical_json(header)
        self._base = hashlib.sha256(head).hexdigest()
        self._index_tail, self._sealed = self._tail, []
        return b"".join([head, b"\n", table, ids, *docs])

    async def _save_index(self) -> None:
        """Write the persisted index; a storage refusal, or a damaged document met on the way,
        is ignored (the next open rebuilds). Until an index is written again no tail record
        is (there is no index on storage it would extend)."""
        if self._tail_data and not self._tail_data.endswith(b"\n"):
            return
        try:
            await self._need_all()
            data = self._index_bytes()
            self._touched, self._unrecorded = set(), 0
            await self.files.write(INDEX_PATH, data)
        except (Refused, ValueError):
            self._base = None
            return

    async def _save_tail(self) -> None:
        """Write the tail record (one atomic write; none while no index on storage is known
        to match): after a post that made :data:`~core.missions.mailbox.tail.TAIL_EVERY` lines
        since the last record, after a post that started a segment, and after an open that
        replayed lines. A refusal is ignored: the older record left is still a prefix of the
        log (:mod:`~core.missions.mailbox.tail`, "Crashes")."""
        self._unrecorded = 0
        if self._base is None or (self._tail_data and not self._tail_data.endswith(b"\n")):
            return
        counters = (self.letters, self.skipped, self.duplicates, self._positions)
        docs = [(m, self.chains.document(m)) for m in sorted(self._touched)]
        data = tail_bytes(
            base=self._base,
            tail=self._tail,
            segments=self._segments,
            sealed=self._sealed,
            tail_data=self._tail_data,
            counters=counters,
            ids=self._recent_ids,
            docs=docs,
        )
        try:
            await self.files.write(TAIL_PATH, data)
        except Refused:
            return

    async def _save_sealed(self) -> None:
        """After the tail moved to a new segment (a post that started one, an open that
        replayed into one): the tail record when it can cover every segment since the index
        (at most :data:`~core.missions.mailbox.tail.TAIL_SEGMENTS`), else the index — the
        only O(letters) write, once in that many segments (tail.py, "Rolls")."""
        if self._base is not None and len(self._sealed) < TAIL_SEGMENTS:
            await self._save_tail()
        else:
            await self._save_index()

    async def fold_index(self) -> bool:
        """Rewrite the persisted index when the tail record covers segments sealed since it
        (the host's idle work: :meth:`~core.missions.mailbox.MailboxCache.warm`), so that the
        next post that starts a segment is far from the bound that makes a post rewrite it.
        Returns whether it wrote. O(letters); never in a post's path."""
        if not self._sealed:
            return False
        await self._save_index()
        return True


class _DocTable(Mapping[str, bytes]):
    """The persisted index's missions: fixed rows (mission id, offset, length, crc32) sorted
    by mission id, over the documents that start ``docs_at`` bytes into the index file and
    are read from it by :meth:`fetch` / :meth:`fetch_all` (module docstring). A lookup
    bisects the rows and checks the document's crc32; a mismatch or a short read raises
    :class:`ValueError` (the index is damaged). Looking up a document not fetched yet is a
    programming error (:class:`RuntimeError`)."""

    __slots__ = ("_add", "_docs", "_docs_at", "_docs_bytes", "_fetched", "_keys", "_new", "_table")

    def __init__(self, table: bytes, docs_at: int, docs_bytes: int) -> None:
        self._table, self._docs_at, self._docs_bytes = table, docs_at, docs_bytes
        self._keys = _RowKeys(table)
        self._fetched: dict[str, bytes] = {}
        self._docs: bytes | None = None
        self._new: dict[str, bytes] = {}
        self._add: list[str] = []

    def overlay(self, docs: dict[str, bytes]) -> None:
        """The tail record's documents: they win over the table's, never read from storage."""
        self._new, self._add = docs, [m for m in docs if self._row(m) is None]

    def _row(self, mission_id: str) -> tuple[int, int, int] | None:
        key = mission_id.encode("ascii")
        i = bisect.bisect_left(self._keys, key)
        if i == len(self._keys) or self._keys[i] != key:
            return None
        _, offset, length, crc = _ROW.unpack_from(self._table, i * _ROW.size)
        return offset, length, crc

    async def fetch(self, files: ProjectFiles, mission_ids: Sequence[str]) -> None:
        """Read the documents of ``mission_ids`` not read yet (one storage call; nothing for a
        mission the table does not list)."""
        if self._docs is not None:
            return
        wanted: dict[str, tuple[int, int, int]] = {}
        for mission_id in mission_ids:
            known = mission_id in self._fetched or mission_id in self._new
            row = None if known else self._row(mission_id)
            if row is not None:
                wanted[mission_id] = row
        if not wanted:
            return
        spans = [(self._docs_at + offset, length) for offset, length, _ in wanted.values()]
        docs = await files.read_ranges(INDEX_PATH, spans)
        for (mission_id, (_, length, crc)), doc in zip(wanted.items(), docs, strict=True):
            if len(doc) != length or zlib.crc32(doc) != crc:
                raise ValueError("the mailbox index's document for a mission is damaged")
            self._fetched[mission_id] = doc

    async def fetch_all(self, files: ProjectFiles) -> None:
        """Read every document (one ranged read)."""
        if self._docs is None:
            (docs,) = await files.read_ranges(INDEX_PATH, [(self._docs_at, self._docs_bytes)])
            if len(docs) != self._docs_bytes:
                raise ValueError("the mailbox index's documents are cut short")
            self._docs = docs

    def __len__(self) -> int:
        return len(self._keys) + len(self._add)

    def __iter__(self) -> Iterator[str]:
        yield from (self._keys[i].decode("ascii") for i in range(len(self._keys)))
        yield from self._add  # the record's missions the table does not list

    def __getitem__(self, mission_id: str) -> bytes:
        newer = self._new.get(mission_id)
        if newer is not None:
            return newer
        row = self._row(mission_id)
        if row is None:
            raise KeyError(mission_id)
        if self._docs is None:
            if mission_id not in self._fetched:
                raise RuntimeError("a mission document was used before it was fetched")
            return self._fetched[mission_id]
        offset, length, crc = row
        doc = self._docs[offset : offset + length]
        if len(doc) != length or zlib.crc32(doc) != crc:
            raise ValueError("the mailbox index's document for a mission is damaged")
        return doc


class _IdIndex:
    """The persisted index's content ids: the fan-out (how many ids start with a byte ≤
    ``b``) over the sorted ids that start ``ids_at`` bytes into the index file, read one
    bucket at a time by :meth:`fetch` (or whole by :meth:`fetch_all`); ``in`` then bisects
    the bucket. :meth:`loaded` holds ids already in memory. Asking about an id whose bucket
    was not fetched is a programming error (:class:`RuntimeError`)."""

    __slots__ = ("_buckets", "_fanout", "_ids_at", "_whole")

    def __init__(self, fanout: Sequence[int], ids_at: int) -> None:
        self._fanout, self._ids_at = fanout, ids_at
        self._buckets: dict[int, _SortedIds] = {}
        self._whole: _SortedIds | None = None

    @classmethod
    def loaded(cls, ids: bytes) -> _IdIndex:
        """Sorted ids already in memory (32 bytes each)."""
        index = cls((), 0)
        index._whole = _SortedIds(ids)
        return index

    def _span(self, first: int) -> tuple[int, int]:
        low = self._fanout[first - 1] if first else 0
        return low, self._fanout[first]

    async def fetch(self, files: ProjectFiles, keys: Sequence[bytes]) -> None:
        """Read the buckets of ids that start with the first bytes of ``keys`` not read yet
        (one storage call)."""
        if self._whole is not None:
            return
        firsts = sorted({key[0] for key in keys} - set(self._buckets))
        if not firsts:
            return
        spans = [self._span(first) for first in firsts]
        found = await files.read_ranges(
            INDEX_PATH,
            [(self._ids_at + low * _ID_BYTES, (high - low) * _ID_BYTES) for low, high in spans],
        )
        for first, (low, high), data in zip(firsts, spans, found, strict=True):
            if len(data) != (high - low) * _ID_BYTES:
                raise ValueError("the mailbox index's ids are cut short")
            self._buckets[first] = _SortedIds(data)

    async def fetch_all(self, files: ProjectFiles) -> None:
        """Read every id (one ranged read)."""
        if self._whole is None:
            size = self._fanout[-1] * _ID_BYTES
            (data,) = await files.read_ranges(INDEX_PATH, [(self._ids_at, size)])
            if len(data) != size:
                raise ValueError("the mailbox index's ids are cut short")
            self._whole, self._buckets = _SortedIds(data), {}

    def __contains__(self, key: object) -> bool:
        assert isinstance(key, bytes)
        if self._whole is not None:
            return key in self._whole
        bucket = self._buckets.get(key[0])
        if bucket is None:
            raise RuntimeError("a content id was looked up before its bucket was fetched")
        return key in bucket

    def merged(self, more: set[bytes]) -> bytes:
        """These ids and ``more``, sorted, as one byte string (after :meth:`fetch_all`)."""
        if self._whole is None:
            raise RuntimeError("the ids were merged before they were fetched")
        return self._whole.merged(more)
