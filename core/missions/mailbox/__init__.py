"""The project's mailbox: an append-only JSONL log of letters in ``.voicebox/`` (seed 004 §2).

The package holds the contract and the machinery beside it (issue 35):

- :mod:`core.missions.mailbox.line` — one line, its content id, its bytes (pure);
- :mod:`core.missions.mailbox.segments` — the segment files the log is stored in;
- :mod:`core.missions.mailbox.index` — the persisted index beside the log;
- :mod:`core.missions.mailbox.tail` — the index's tail record: the posts since the index;
- here, :class:`Mailbox` (opening, posting, reading) and :class:`MailboxCache`.

The bounds a post and a plain read obey (:data:`SEGMENT_BYTES`, :data:`MAX_PAGE_BYTES`) are read
here, at call time, from this package's names.

**Index.** :class:`Mailbox` reads every segment once when opened and keeps: the set of content
ids (dedup), each mission's head (:class:`~core.missions.chain.MissionChains`), and the tail
segment's bytes. :class:`MailboxCache` keeps an open mailbox per project between calls and
checks it cheaply before each use — the tail segment's size equals the cached bytes and no next
segment exists (two ``stat`` calls) — reopening it when anything else changed the log. Posting
is thus O(1) amortised in the mailbox's length.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Literal

from core.missions.chain import ChainEntry, MissionChains, MissionState
from core.missions.mailbox.index import _FIRST_READ as _FIRST_READ  # the index's tests read
from core.missions.mailbox.index import (
    INDEX_PATH,
    INDEX_SCHEMA,
    _DocTable,
    _IdIndex,
    _PersistedIndex,
)
from core.missions.mailbox.line import (
    MAX_LINE_BYTES,
    MAX_NOTE_CHARS,
    AgentId,
    MailboxLine,
    decode_line,
    encode_line,
    mission_line,
    note_line,
)
from core.missions.mailbox.segments import (
    _SEGMENT_NAME,
    MAILBOX_DIR,
    MAX_PAGE_BYTES,
    MAX_SCAN_SEGMENTS,
    SEGMENT_BYTES,
    MailboxPage,
    _segment_names,
    _split_lines,
    segment_path,
)
from core.missions.mailbox.sorted_bytes import _ROW as _ROW  # its layout through this package
from core.missions.mailbox.tail import TAIL_EVERY, TAIL_PATH, TAIL_SEGMENTS
from core.paths import ProjectPath
from core.ports import ProjectFiles
from core.refusals import Code, Refused

__all__ = [
    "INDEX_PATH",
    "INDEX_SCHEMA",
    "MAILBOX_DIR",
    "MAX_LINE_BYTES",
    "MAX_NOTE_CHARS",
    "MAX_PAGE_BYTES",
    "SEGMENT_BYTES",
    "TAIL_EVERY",
    "TAIL_PATH",
    "TAIL_SEGMENTS",
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


class Mailbox(_PersistedIndex):
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
        self._base: str | None = None
        self._touched: set[str] = set()
        self._unrecorded = 0
        self._index_tail = 0
        self._sealed: list[tuple[int, int]] = []
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
            before = box._positions
            try:
                replayed = await box._replay(indexes, covered)
            except ValueError:  # a damaged mission document: the whole log decides
                replayed = None
            if replayed is not None:
                if replayed:
                    await box._save_sealed()
                elif box._positions != before:
                    await box._save_tail()
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
                self._sealed.append((self._tail, len(self._tail_data)))
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
            self._touched.add(line.mission.mission_id)
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
        sealed = (tail, len(self._tail_data))
        if rolled:
            tail, data = tail + 1, b""
        data += encoded
        await self.files.write(segment_path(tail), data)
        if rolled or not self._tail_exists:
            self._segments += 1
        if rolled:
            self._sealed.append(sealed)
        self._tail, self._tail_data, self._tail_exists = tail, data, True
        first = self._positions
        for line in lines:
            self._take(line, None)
        self._unrecorded += len(lines)
        if rolled:
            await self._save_sealed()
        elif self._unrecorded >= TAIL_EVERY:
            await self._save_tail()
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
        """Open the mailbox of ``key`` unless it is already open; return whether this call
        opened it. When another call is opening it meanwhile, wait until that open is over
        (its outcome is that call's: a refusal there is not raised here) and return False —
        so that when this returns, the mailbox is open or its open has ended (issue 34: the
        warm-up, and the worker's ``settled`` after it, never come before an open under way).
        Refuses as :meth:`get`. What a later :meth:`get` answers is the same whether or not
        this ran (it checks storage before every use). An open whose tail record covers
        segments sealed since the index then rewrites the index here, off any post's path
        (:meth:`Mailbox.fold_index`)."""
        lock = self._locks.get(key)
        if lock is not None and lock.locked():
            async with lock:  # the open under way (and the calls queued behind it) end first
                return False
        if key in self._open:
            return False
        box = await self.get(key, files)
        async with self._locks[key]:  # idle work: the index over the sealed segments
            if self._open.get(key) is box and not box.damaged:
                await box.fold_index()
        return True

    def is_open(self, key: str) -> bool:
        """Whether a mailbox of ``key`` is held (it is still checked against storage before
        its next use: :meth:`get`)."""
        return key in self._open

    def forget(self, key: str) -> None:
        """Drop the cached mailbox of ``key`` (e.g. when its project is deleted)."""
        self._open.pop(key, None)
