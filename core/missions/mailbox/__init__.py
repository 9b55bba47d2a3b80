"""The project's mailbox: an append-only JSONL log of letters in ``.voicebox/`` (seed 004 §2).

**Lines.** Each line is one :class:`MailboxLine`, written as canonical JSON plus ``\\n``::

    {"at":"…Z","from":"hand-7","id":"<sha256 hex>","kind":"mission","mission":{…letter…}}
    {"at":"…Z","body":"…","from":"operator","id":"<sha256 hex>","kind":"note","subject":"…",
     "to":"hand-7"}

``kind`` defaults to ``"note"`` (a line without it is a plain letter). ``at`` is the host time of
posting and is not part of the content. The content id ``id`` is:

- for a mission line, the letter's content id (:func:`core.missions.letters.letter_id`) — the sha256
  of the canonical JSON of the ``mission`` member, whose sha12 the next letter names;
- for a note, the sha256 of the canonical JSON of ``{"kind", "from", "to", "subject", "body"}``.

An identical replay has the same id and is not appended again (idempotent). A line the reader
cannot parse — not JSON, an unknown field or phase, an id that does not match its content, a line
longer than :data:`MAX_LINE_BYTES` — is skipped and counted, never fatal; it stays in the log
untouched.

**Storage: segments.** The storage port only replaces whole files atomically, so appending to
one growing file would rewrite all of it on every post (O(n)). The log is therefore cut into
segments ``.voicebox/mailbox/<8-digit index>.jsonl``; reading them in index order gives the one
JSONL log. A post rewrites only the tail segment (old bytes + new lines, one atomic write);
when the tail would pass :data:`SEGMENT_BYTES` the new lines start the next segment instead.
Sealed segments are never written again. A post therefore costs O(:data:`SEGMENT_BYTES`) —
constant in the mailbox's length — and a crash leaves either the old tail or the new one.

**Index.** :class:`Mailbox` reads every segment once when opened and keeps: the set of content
ids (dedup), each mission's head (:class:`~core.missions.chain.MissionChains`), and the tail
segment's bytes. :class:`MailboxCache` keeps an open mailbox per project between calls and
checks it cheaply before each use — the tail segment's size equals the cached bytes and no next
segment exists (two ``stat`` calls) — reopening it when anything else changed the log. Posting
is thus O(1) amortised in the mailbox's length.

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
end) hash to ``tail_sha256``. The lines
after that point (the rest of the tail, any later segment: posts the index has not seen, e.g.
after an interrupted append) are then read and replayed; anything else — no index, an old or
truncated one, a log rewritten under it, a replayed line that does not extend its head — rebuilds
it from the whole log. Nothing is decoded per letter on open: ids and missions are searched in
place by bisection, and a mission's document is checked (crc32) and decoded on first use; a
damaged one (or an id bucket or document cut short) is refused ``storage-failed`` and the
next use rebuilds. The index is rewritten
after a rebuild, after a replay that crossed a segment, and whenever a post starts a new segment
(so at most one segment of lines is ever replayed, a cost constant in the mailbox's length); a
failure to write it is ignored (the next open rebuilds). Sealed segments are never rewritten by
this host, so they are not re-hashed: a foreign edit of a sealed segment that keeps the tail
intact is not detected (the same assumption the in-memory cache below makes).
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import re
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from core.json_bound import parse_json
from core.missions.chain import ChainEntry, MissionChains, MissionState
from core.missions.letters import MissionLetter, OneLine, letter_id
from core.model import Contract, canonical_json
from core.paths import META_DIR, ProjectPath
from core.ports import ProjectFiles
from core.refusals import Code, Refused
from core.time import Instant

__all__ = [
    "INDEX_PATH",
    "INDEX_SCHEMA",
    "MAILBOX_DIR",
    "MAX_LINE_BYTES",
    "MAX_NOTE_CHARS",
    "MAX_PAGE_BYTES",
    "SEGMENT_BYTES",
    "AgentId",
    "Mailbox",
    "MailboxCache",
    "MailboxLine",
    "MailboxPage",
    "decode_line",
    "encode_line",
    "mission_line",
    "note_line",
    "segment_path",
]

MAILBOX_DIR = (META_DIR, "mailbox")
SEGMENT_BYTES = 64 * 1024
"""A post starts a new segment rather than grow the tail past this many bytes."""
MAX_LINE_BYTES = 1 << 20
MAX_NOTE_CHARS = 256 * 1024
MAX_SCAN_SEGMENTS = 32
"""A plain read looks at no more than this many segments per page."""
MAX_PAGE_BYTES = 4 << 20
"""A plain read stops adding letters once a page holds this many bytes of lines."""

INDEX_PATH = ProjectPath((META_DIR, "mailbox.index"))
"""Where the persisted index lives (module docstring, "Persisted index")."""
INDEX_SCHEMA = "voicebox-mailbox-index-v2"
"""Bump when what a line decodes to changes: an index of another schema is rebuilt."""
_ID_BYTES = 32
_MISSION_ID_BYTES = 16
_ROW = struct.Struct(">16sQII")
"""A mission row of the persisted index: mission id, document offset, length, crc32."""
_FANOUT = struct.Struct(">256I")
_FIRST_READ = 4096
"""Bytes of the index read first on open: the header, the fan-out and a table of up to about
80 missions (a larger table costs one more read)."""

_SEGMENT_NAME = re.compile(r"^(\d{8})\.jsonl$")

AgentId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$")]
"""Who posts or receives a letter: an agent id, a seat, or ``operator`` for the page's person."""


def segment_path(index: int) -> ProjectPath:
    """The path of segment ``index`` (``.voicebox/mailbox/00000003.jsonl``)."""
    return ProjectPath((*MAILBOX_DIR, f"{index:08d}.jsonl"))


def _note_id(sender: str, to: str | None, subject: str | None, body: str | None) -> str:
    content = {"kind": "note", "from": sender, "to": to, "subject": subject, "body": body}
    return hashlib.sha256(canonical_json(content)).hexdigest()


class MailboxLine(Contract):
    """One mailbox line (shape and content id in the module docstring)."""

    model_config = Contract.model_config | {"populate_by_name": True}

    id: str = Field(pattern=r"^[0-9a-f]{64}$")
    at: Instant
    kind: Literal["note", "mission"] = "note"
    from_: AgentId = Field(alias="from")
    to: AgentId | None = None
    subject: OneLine | None = None
    body: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    mission: MissionLetter | None = None

    @model_validator(mode="after")
    def _consistent(self) -> MailboxLine:
        """A mission line carries only its letter; a note carries a body; ids match content."""
        if self.kind == "mission":
            if self.mission is None or any(
                v is not None for v in (self.to, self.subject, self.body)
            ):
                raise ValueError("a mission line carries a letter and nothing else")
            expected = letter_id(self.mission)
        else:
            if self.body is None or self.mission is not None:
                raise ValueError("a note carries a body and no mission letter")
            expected = _note_id(self.from_, self.to, self.subject, self.body)
        if self.id != expected:
            raise ValueError("the id does not match the content")
        return self

    def wire(self) -> dict[str, Any]:
        """The line as JSON data: envelope fields that are null are left out, the letter whole."""
        out: dict[str, Any] = {"id": self.id, "at": self.at, "kind": self.kind, "from": self.from_}
        if self.kind == "mission":
            assert self.mission is not None
            out["mission"] = self.mission.wire()
        else:
            out.update(
                {k: v for k, v in (("to", self.to), ("subject", self.subject)) if v is not None}
            )
            out["body"] = self.body
        return out


def mission_line(letter: MissionLetter, agent_id: str, at: str) -> MailboxLine:
    """The line that posts ``letter`` for ``agent_id`` at host time ``at``."""
    return MailboxLine(id=letter_id(letter), at=at, kind="mission", from_=agent_id, mission=letter)


def note_line(sender: str, to: str | None, subject: str | None, body: str, at: str) -> MailboxLine:
    """A plain letter from ``sender`` to the inbox ``to`` (or to nobody in particular)."""
    return MailboxLine(
        id=_note_id(sender, to, subject, body),
        at=at,
        kind="note",
        from_=sender,
        to=to,
        subject=subject,
        body=body,
    )


def encode_line(line: MailboxLine) -> bytes:
    """The line's bytes in the log: canonical JSON and a newline."""
    return canonical_json(line.wire()) + b"\n"


def decode_line(raw: bytes) -> MailboxLine | None:
    """Parse one log line; ``None`` when it cannot be parsed (it is then skipped, never fatal)."""
    if len(raw) > MAX_LINE_BYTES:
        return None
    try:
        return MailboxLine.model_validate_json(raw)
    except (ValidationError, ValueError, RecursionError):
        return None


@dataclass(frozen=True, slots=True)
class MailboxPage:
    """A page of a plain read: the lines found, where to continue (``None`` at the end), and
    how many unparseable lines the page stepped over."""

    lines: list[MailboxLine]
    next_cursor: str | None
    skipped: int


def _split_lines(data: bytes) -> list[bytes]:
    return [raw for raw in data.split(b"\n") if raw.strip()]


class Mailbox:
    """One project's mailbox, opened: the index over its segments (module docstring).

    Build it with :meth:`open`. ``letters`` counts parsed distinct lines, ``skipped`` the
    unparseable ones, ``duplicates`` lines repeating an earlier id (only a foreign writer makes
    those).
    """

    def __init__(self, files: ProjectFiles) -> None:
        self.files = files
        self.chains = MissionChains()
        self._recent_ids: set[bytes] = set()
        self._indexed_ids = _IdIndex.loaded(b"")
        self._docs: _DocTable | None = None
        self.letters = 0
        self.skipped = 0
        self.duplicates = 0
        self._positions = 0
        self._tail = 0
        self._tail_data = b""
        self._tail_exists = False
        self._segments = 0
        self.damaged = False

    @classmethod
    async def open(cls, files: ProjectFiles, *, use_index: bool = True) -> Mailbox:
        """Build the index: from the persisted index and the lines after it when it still
        matches the log (and ``use_index``), else by reading every segment (module docstring).
        Never refuses on bad lines or a bad index; storage refusals propagate."""
        indexes = await _segment_names(files)
        found = await cls._from_index(files, indexes) if use_index else None
        if found is not None:
            box, covered = found
            try:
                replayed = await box._replay(indexes, covered)
            except ValueError:  # a damaged mission document: the whole log decides
                replayed = None
            if replayed is not None:
                if replayed:
                    await box._save_index()
                return box
        box = cls(files)
        entries: list[ChainEntry] = []
        for index in indexes:
            data = await files.read(segment_path(index))
            box._tail, box._tail_data, box._tail_exists = index, data, True
            for raw in _split_lines(data):
                box._take(decode_line(raw), entries)
        box._segments = len(indexes)
        box.chains = MissionChains.build(entries)
        if box._tail_exists:
            await box._save_index()
        return box

    async def _replay(self, indexes: list[int], covered: int) -> bool | None:
        """Take the lines the persisted index has not seen: the tail after its ``covered``
        bytes, then every later segment. Returns whether a later segment was read, or
        ``None`` when a mission line there does not extend its head (only a foreign writer
        makes one: the caller then rebuilds from the whole log, where forks are settled)."""
        crossed = False
        for index in indexes:
            if index < self._tail:
                continue
            if index == self._tail:
                data = self._tail_data[covered:]
            else:
                crossed = True
                data = await self.files.read(segment_path(index))
                self._tail, self._tail_data = index, data
            lines = [decode_line(raw) for raw in _split_lines(data)]
            await self._need([line for line in lines if line is not None])
            for line in lines:
                if (
                    line is not None
                    and line.mission is not None
                    and not self._has(line.id)
                    and not self.chains.extends_head(line.mission)
                ):
                    return None
                self._take(line, None)
        self._segments = len(indexes)
        return crossed

    @classmethod
    async def _from_index(
        cls, files: ProjectFiles, indexes: list[int]
    ) -> tuple[Mailbox, int] | None:
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
            data = await files.read(segment_path(tail))
            covered = data[:size]
            if len(covered) != size or (covered and not covered.endswith(b"\n")):
                return None
            if hashlib.sha256(covered).hexdigest() != header["tail_sha256"]:
                return None
            box = cls(files)
            box._indexed_ids = _IdIndex(fanout, ids_at)
            box._docs = _DocTable(block[_FANOUT.size :], docs_at, header["docs_bytes"])
            box.chains = MissionChains.lazy(box._docs)
            box.letters, box.skipped = header["letters"], header["skipped"]
            box.duplicates, box._positions = header["duplicates"], header["positions"]
            box._tail, box._tail_data, box._tail_exists = tail, data, True
        except (Refused, ValueError, KeyError, TypeError, UnicodeDecodeError, struct.error):
            return None
        return box, size

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
        header = {
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
        return b"".join([canonical_json(header), b"\n", table, ids, *docs])

    async def _save_index(self) -> None:
        """Write the persisted index; a storage refusal, or a damaged document met on the way,
        is ignored (the next open rebuilds)."""
        if self._tail_data and not self._tail_data.endswith(b"\n"):
            return
        try:
            await self._need_all()
            await self.files.write(INDEX_PATH, self._index_bytes())
        except (Refused, ValueError):
            return

    async def _segment_indexes(self) -> list[int]:
        """Segment indexes by a full listing (kinds checked; what a plain read uses)."""
        folder = ProjectPath(MAILBOX_DIR)
        entry = await self.files.stat(folder)
        if entry is None or entry.kind != "dir":
            return []
        found = []
        for item in await self.files.list_dir(MAILBOX_DIR):
            match = _SEGMENT_NAME.match(item.name)
            if match and item.kind == "file":
                found.append(int(match.group(1)))
        return sorted(found)

    def _take(self, line: MailboxLine | None, entries: list[ChainEntry] | None) -> None:
        position = self._positions
        self._positions += 1
        if line is None:
            self.skipped += 1
            return
        key = bytes.fromhex(line.id)
        if key in self._recent_ids or key in self._indexed_ids:
            self.duplicates += 1
            return
        self._recent_ids.add(key)
        self.letters += 1
        if line.mission is not None:
            entry = ChainEntry(position, line.id, line.mission, line.from_, line.at)
            if entries is None:
                self.chains.extend(entry)
            else:
                entries.append(entry)

    async def is_current(self) -> bool:
        """True when storage still holds exactly the log this index was built from (2 stats)
        and no damaged index document was met."""
        if self.damaged:
            return False
        tail = await self.files.stat(segment_path(self._tail))
        if self._tail_exists:
            if tail is None or tail.kind != "file" or tail.size != len(self._tail_data):
                return False
        elif tail is not None:
            return False
        return await self.files.stat(segment_path(self._tail + 1)) is None

    def _has(self, content_id: str) -> bool:
        key = bytes.fromhex(content_id)
        return key in self._recent_ids or key in self._indexed_ids

    async def contains(self, content_id: str) -> bool:
        """True when a line with this content id is already in the log (reads the id's
        fan-out bucket of the persisted index the first time). Refuses ``storage-failed``
        when that bucket is cut short (:attr:`damaged`: the next use rebuilds)."""
        key = bytes.fromhex(content_id)
        if key in self._recent_ids:
            return True
        try:
            await self._indexed_ids.fetch(self.files, [key])
        except ValueError:
            raise self._damage() from None
        return key in self._indexed_ids

    async def head(self, mission_id: str) -> ChainEntry | None:
        """The mission's current head, or ``None`` (reads its document of the persisted index
        the first time). Refuses ``storage-failed`` when that document is damaged
        (:attr:`damaged`: the next use rebuilds)."""
        try:
            if self._docs is not None:
                await self._docs.fetch(self.files, [mission_id])
            return self.chains.head(mission_id)
        except ValueError:
            raise self._damage() from None

    async def missions(self) -> list[MissionState]:
        """Every mission's head and counts, most recently moved first (reads every document
        of the persisted index the first time; refuses as :meth:`head`)."""
        try:
            if self._docs is not None:
                await self._docs.fetch_all(self.files)
            return self.chains.states()
        except ValueError:
            raise self._damage() from None

    async def headless(self) -> int:
        """Letters of missions that have no valid chain at all (refuses as :meth:`missions`)."""
        await self.missions()
        return self.chains.headless

    def _damage(self) -> Refused:
        self.damaged = True
        return Refused(
            Code.STORAGE_FAILED,
            "The mailbox's index was damaged; it is rebuilt from the mailbox on the next call.",
        )

    async def append(self, lines: Sequence[MailboxLine]) -> list[int]:
        """Append ``lines`` in one atomic write; return their positions in the log.

        The caller has decided the post (CAS, dedup). This re-checks, before writing, that no
        line's id is present and that each mission line extends its mission's head, and raises
        ``ValueError`` otherwise (a programming error: nothing is written). Storage refusals
        (``storage-quota-exceeded``, ``storage-failed``) propagate with nothing appended.
        """
        try:
            await self._need(lines)
        except ValueError:
            raise self._damage() from None
        seen: set[str] = set()
        for line in lines:
            if self._has(line.id) or line.id in seen:
                raise ValueError("a line with that content id is already in the mailbox")
            if line.mission is not None and (
                line.mission.mission_id in seen or not self.chains.extends_head(line.mission)
            ):
                raise ValueError("a mission line must extend its mission's head")
            seen.add(line.id)
            if line.mission is not None:
                seen.add(line.mission.mission_id)
        encoded = b"".join(encode_line(line) for line in lines)
        tail, data = self._tail, self._tail_data
        if data and not data.endswith(b"\n"):
            data += b"\n"
        rolled = self._tail_exists and bool(data) and len(data) + len(encoded) > SEGMENT_BYTES
        if rolled:
            tail, data = tail + 1, b""
        data += encoded
        await self.files.write(segment_path(tail), data)
        if rolled or not self._tail_exists:
            self._segments += 1
        self._tail, self._tail_data, self._tail_exists = tail, data, True
        first = self._positions
        for line in lines:
            self._take(line, None)
        if rolled:
            await self._save_index()
        return list(range(first, first + len(lines)))

    async def read_page(
        self,
        *,
        cursor: str | None = None,
        limit: int = 100,
        kind: Literal["note", "mission"] | None = None,
        to: str | None = None,
    ) -> MailboxPage:
        """Plain letters in log order, after ``cursor`` (from a previous page), filtered by
        ``kind`` and inbox ``to``. Looks at no more than :data:`MAX_SCAN_SEGMENTS` segments and
        returns at most ``limit`` letters and about :data:`MAX_PAGE_BYTES` bytes per page;
        ``next_cursor`` continues. Refuses ``args-invalid`` for a malformed cursor."""
        start_seg, start_line = _parse_cursor(cursor)
        indexes = [i for i in await self._segment_indexes() if i >= start_seg]
        found: list[MailboxLine] = []
        skipped = 0
        size = 0
        for scanned, index in enumerate(indexes):
            if scanned == MAX_SCAN_SEGMENTS:
                return MailboxPage(found, f"{index}.0", skipped)
            raw_lines = _split_lines(await self.files.read(segment_path(index)))
            first = start_line if index == start_seg else 0
            for n in range(first, len(raw_lines)):
                line = decode_line(raw_lines[n])
                if line is None:
                    skipped += 1
                    continue
                if (kind is None or line.kind == kind) and (to is None or line.to == to):
                    found.append(line)
                    size += len(raw_lines[n])
                    if len(found) == limit or size >= MAX_PAGE_BYTES:
                        return MailboxPage(found, f"{index}.{n + 1}", skipped)
        return MailboxPage(found, None, skipped)

    async def raw_bytes(self) -> bytes:
        """The whole log as one JSONL text: every segment's bytes, in order."""
        chunks = [await self.files.read(segment_path(i)) for i in await self._segment_indexes()]
        return b"".join(chunks)


async def _segment_names(files: ProjectFiles) -> list[int]:
    """Segment indexes by name only (one storage call, no size per file), sorted."""
    folder = ProjectPath(MAILBOX_DIR)
    entry = await files.stat(folder)
    if entry is None or entry.kind != "dir":
        return []
    found = (_SEGMENT_NAME.match(name) for name in await files.names(MAILBOX_DIR))
    return sorted(int(match.group(1)) for match in found if match)


class _DocTable(Mapping[str, bytes]):
    """The persisted index's missions: fixed rows (mission id, offset, length, crc32) sorted
    by mission id, over the documents that start ``docs_at`` bytes into the index file and
    are read from it by :meth:`fetch` / :meth:`fetch_all` (module docstring). A lookup
    bisects the rows and checks the document's crc32; a mismatch or a short read raises
    :class:`ValueError` (the index is damaged). Looking up a document not fetched yet is a
    programming error (:class:`RuntimeError`)."""

    __slots__ = ("_docs", "_docs_at", "_docs_bytes", "_fetched", "_keys", "_table")

    def __init__(self, table: bytes, docs_at: int, docs_bytes: int) -> None:
        self._table, self._docs_at, self._docs_bytes = table, docs_at, docs_bytes
        self._keys = _RowKeys(table)
        self._fetched: dict[str, bytes] = {}
        self._docs: bytes | None = None

    def _row(self, mission_id: str) -> tuple[int, int, int] | None:
        key = mission_id.encode("ascii")
        i = bisect.bisect_left(self._keys, key)  # type: ignore[call-overload]
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
            row = None if mission_id in self._fetched else self._row(mission_id)
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
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return (self._keys[i].decode("ascii") for i in range(len(self._keys)))

    def __getitem__(self, mission_id: str) -> bytes:
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


class _RowKeys:
    """The mission ids of a :class:`_DocTable`'s rows, as a sequence bisect can search."""

    __slots__ = ("_table",)

    def __init__(self, table: bytes) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table) // _ROW.size

    def __getitem__(self, i: int) -> bytes:
        at = i * _ROW.size
        return self._table[at : at + _MISSION_ID_BYTES]


class _SortedIds:
    """Content ids (32 bytes each) as one sorted byte string, searched by bisection: what the
    persisted index loads without building a set of them."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data) // _ID_BYTES

    def __getitem__(self, i: int) -> bytes:
        return self._data[i * _ID_BYTES : (i + 1) * _ID_BYTES]

    def __contains__(self, key: object) -> bool:
        i = bisect.bisect_left(self, key)  # type: ignore[call-overload]
        return i < len(self) and self[i] == key

    def fanout(self) -> bytes:
        """The fan-out of these ids (module docstring): 256 big-endian ``uint32``."""
        counts = [bisect.bisect_left(self, bytes([b + 1])) for b in range(255)]  # type: ignore[call-overload]
        return _FANOUT.pack(*counts, len(self))

    def merged(self, more: set[bytes]) -> bytes:
        """These ids and ``more``, sorted, as one byte string."""
        if not more:
            return self._data
        parts, start = [], 0
        for key in sorted(more):  # few: the ids taken since the last index
            i = bisect.bisect_left(self, key)  # type: ignore[call-overload]
            parts += [self._data[start * _ID_BYTES : i * _ID_BYTES], key]
            start = i
        parts.append(self._data[start * _ID_BYTES :])
        return b"".join(parts)


def _parse_cursor(cursor: str | None) -> tuple[int, int]:
    if cursor is None:
        return 0, 0
    match = re.fullmatch(r"(\d{1,9})\.(\d{1,9})", cursor)
    if match is None:
        raise Refused(Code.ARGS_INVALID, "The cursor is not one this mailbox gave.", field="cursor")
    return int(match.group(1)), int(match.group(2))


class MailboxCache:
    """Open mailboxes kept between calls, one per project key (module docstring, "Index").

    :meth:`get` returns the cached mailbox when storage still matches it, else opens it afresh;
    :meth:`warm` opens one ahead of its first use (issue 18: a host opens its projects'
    mailboxes in the background once ready, :func:`core.host.mailbox_ops.warm_mailboxes`).
    Per key, one check-or-open runs at a time: a call that asks while another open of the
    same mailbox is under way waits for it and gets the mailbox it opened (checked like any
    cached one), never a second open racing the first.
    """

    def __init__(self) -> None:
        self._open: dict[str, Mailbox] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, key: str, files: ProjectFiles) -> Mailbox:
        """The open mailbox of project ``key`` over ``files`` (reopened if storage moved on).
        Storage refusals propagate (nothing is cached then)."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            box = self._open.get(key)
            if box is not None:
                box.files = files
                if await box.is_current():
                    return box
            box = await Mailbox.open(files, use_index=box is None or not box.damaged)
            self._open[key] = box
            return box

    async def warm(self, key: str, files: ProjectFiles) -> bool:
        """Open the mailbox of ``key`` unless it is already open or being opened; return
        whether this call opened it. Refuses as :meth:`get`. What a later :meth:`get` answers
        is the same whether or not this ran (it checks storage before every use)."""
        lock = self._locks.get(key)
        if key in self._open or (lock is not None and lock.locked()):
            return False
        await self.get(key, files)
        return True

    def forget(self, key: str) -> None:
        """Drop the cached mailbox of ``key`` (e.g. when its project is deleted)."""
        self._open.pop(key, None)
