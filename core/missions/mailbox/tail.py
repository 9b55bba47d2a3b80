"""The mailbox index's tail record, ``.voicebox/mailbox.index.tail``: the posts made since the
persisted index (:mod:`core.missions.mailbox.index`), kept so that opening the mailbox decodes
none of them (issue 34; seed 004 §2).

**Why.** Rewriting the index costs O(letters); the posts since it used to be replayed on
every open — up to a segment of lines, each decoded and validated again, and each of their
missions' documents read and checked — which is what a fresh host's first post waited for.
The record is rewritten (one atomic write) by the post that makes :data:`TAIL_EVERY` lines
since it was last written. An open thus replays fewer than :data:`TAIL_EVERY` lines — a
bound, not a segment — while a post pays the record's write (the ids taken since the index
and the moved missions' documents, ~70 KB a segment at 10,000 missions) once in
:data:`TAIL_EVERY` posts, not on each: a post's cost stays constant in the mailbox's length
(seed 004 §2c).

**Rolls.** A post that starts a new segment writes that segment and then this record, never
the index (issue 34: rewriting the index there made one post in ~110 cost 160–200 ms at
100,000 letters in the browser, O(letters)). The record then covers the index's tail segment,
the segments started since — *sealed*, listed with their sizes — and its own tail; at most
:data:`TAIL_SEGMENTS` segments in all, so its size (≤ ~8 × 70 KB at 10,000 missions) and an
open's checks (a ``stat`` per sealed segment) stay bounded. The index is rewritten (decided
here, issue 34): by the host's warm-up when the record covers a
sealed segment (:meth:`~core.missions.mailbox.MailboxCache.warm`, before the browser's
``settled``, off every post's path); by an open that replayed past the bound; and, as the
bound's backstop on a host that never restarts, by the post that would start segment
:data:`TAIL_SEGMENTS` + 1 — one post in ~:data:`TAIL_SEGMENTS` × 110 at the bench's letter
size, not one in ~110. The CPython server host runs the same code but no warm-up: there the
bound's post (or an open past it) is what folds the index.

**Layout.** The first line is a canonical JSON header — :data:`TAIL_SCHEMA`, ``base`` (the
sha256 of the header line of the index it extends), the tail segment and the segment count,
``sealed`` (``[index, size]`` of each segment from the index's tail up to its own), the length
and sha256 of the prefix of the tail segment it covers, the counters (``letters``,
``skipped``, ``duplicates``, ``positions``), how many content ids follow, each moved mission's
id and document length, and ``crc32`` over the header (without it) and the body; then the body:
the content ids taken since the index (32 bytes each) and the documents of the missions moved
since it (:meth:`~core.missions.chain.MissionChains.document`).

**When it is believed.** Only with the index, and only when ``base`` names that index, the
crc32 holds, its tail segment exists and its segment count is the log's up to it, the
segments it lists as sealed are exactly the log's from the index's tail up to its own, each
still of the size it says (``stat``: sealed segments are not re-hashed, the index's own
assumption), and its prefix of its tail — no shorter than the index's when that is the same
segment — still hashes to its ``tail_sha256`` (the tail's chain check). When it is the
index's tail, the index's own prefix is checked too. Its documents then win over the index's,
and only the lines after its prefix are replayed. Anything else is ignored and the index
alone decides, as before (its tail hashed, every later segment replayed). A mission's
document is checked when first used, as the index's are: the record is never trusted for more
than the index is.

**Crashes.** Every write is atomic, so each file is whole, old or new. Between a segment's
write and the record's (or between two records), the older record still describes a prefix
of the log: the lines posted since it — fewer than :data:`TAIL_EVERY`, plus a new segment's
lines when a roll's record was lost — are replayed, and that open writes the record (the index
only past :data:`TAIL_SEGMENTS`). A sealed segment changed in size or gone, or the record's
tail rewritten, makes the record not believed. A record whose write was refused (a full disk)
is the same case as a crash. An open thus replays a bounded number of lines: fewer than
:data:`TAIL_EVERY` after any completed post; after a crash, those and the lines of the posts
whose record was lost.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from core.json_bound import parse_json
from core.missions.mailbox.segments import segment_path
from core.model import canonical_json
from core.paths import META_DIR, ProjectPath
from core.ports import ProjectFiles
from core.refusals import Refused

__all__ = [
    "MAX_TAIL_BYTES",
    "TAIL_EVERY",
    "TAIL_PATH",
    "TAIL_SCHEMA",
    "TAIL_SEGMENTS",
    "TailRecord",
    "read_tail",
    "tail_bytes",
]

TAIL_PATH = ProjectPath((META_DIR, "mailbox.index.tail"))
"""Where the tail record lives."""
TAIL_SCHEMA = "voicebox-mailbox-index-tail-v2"
"""Bump with the index's schema or when the record's layout changes: another is ignored."""
TAIL_EVERY = 16
"""The record is rewritten once this many lines were posted since it last was (module
docstring, "Why")."""
TAIL_SEGMENTS = 8
"""The record covers at most this many segments: the index's tail and the ones started
since; the post that would start one more rewrites the index instead (module docstring,
"Rolls")."""
MAX_TAIL_BYTES = 8 << 20
"""A tail record longer than this is not read (it holds at most one segment's changes)."""
_ID_BYTES = 32
_COUNTERS = ("letters", "skipped", "duplicates", "positions")


@dataclass(frozen=True, slots=True)
class TailRecord:
    """A tail record whose header and body hold and that extends the index (module docstring,
    "When it is believed"): its tail segment, the segments sealed since the index
    (``(index, size)``, oldest first: empty when the index's tail is still the tail), how
    many bytes of its tail it covers and their sha256, the counters (letters, skipped,
    duplicates, positions), the content ids and the moved missions' documents. Believed once
    :meth:`matches` holds for the tail segment's bytes."""

    tail: int
    sealed: tuple[tuple[int, int], ...]
    covered: int
    sha256: str
    counters: tuple[int, int, int, int]
    ids: set[bytes]
    docs: dict[str, bytes]

    def matches(self, tail_data: bytes, size: int) -> bool:
        """Whether the tail segment's bytes ``tail_data`` still start with what the record
        covers (ending at a line end), no shorter than ``size`` bytes (the index's own
        prefix, when the tail is the index's)."""
        covered = tail_data[: self.covered]
        if self.covered < size or len(covered) != self.covered:
            return False
        if covered and not covered.endswith(b"\n"):
            return False
        return hashlib.sha256(covered).hexdigest() == self.sha256


def tail_bytes(
    *,
    base: str,
    tail: int,
    segments: int,
    sealed: Sequence[tuple[int, int]],
    tail_data: bytes,
    counters: tuple[int, int, int, int],
    ids: set[bytes],
    docs: Sequence[tuple[str, bytes]],
) -> bytes:
    """The record's bytes (module docstring, "Layout") for a mailbox whose index on storage
    has header sha256 ``base``, whose tail segment ``tail`` (of ``segments``) holds
    ``tail_data``, with the segments ``sealed`` (``(index, size)``) since the index, ``ids``
    taken and ``docs`` (``(mission_id, document)``) moved since."""
    body = b"".join([*ids, *(doc for _, doc in docs)])
    record: dict[str, object] = {
        "schema": TAIL_SCHEMA,
        "base": base,
        "tail": tail,
        "segments": segments,
        "sealed": [[index, size] for index, size in sealed],
        "tail_size": len(tail_data),
        "tail_sha256": hashlib.sha256(tail_data).hexdigest(),
        **dict(zip(_COUNTERS, counters, strict=True)),
        "ids": len(ids),
        "missions": [[mission_id, len(doc)] for mission_id, doc in docs],
    }
    record["crc32"] = zlib.crc32(body, zlib.crc32(canonical_json(record)))
    return b"".join([canonical_json(record), b"\n", body])


async def read_tail(
    files: ProjectFiles, base: str, header: dict[str, object], indexes: Sequence[int]
) -> TailRecord | None:
    """The record on storage when it extends the index whose header line hashes to ``base``
    and reads ``header``, over the log whose segments are ``indexes`` (module docstring,
    "When it is believed": the segments it says were sealed since the index are checked
    here, by ``stat``; its tail segment's bytes are the caller's to check with
    :meth:`TailRecord.matches`); else ``None``. Never raises (a storage refusal is no
    record)."""
    try:
        record = _parsed(await files.read(TAIL_PATH), base, header, indexes)
        if record is None:
            return None
        for index, size in record.sealed:
            entry = await files.stat(segment_path(index))
            if entry is None or entry.kind != "file" or entry.size != size:
                return None
    except (Refused, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return record


def _parsed(
    data: bytes, base: str, header: dict[str, object], indexes: Sequence[int]
) -> TailRecord | None:
    if len(data) > MAX_TAIL_BYTES:
        return None
    end = data.index(b"\n")
    record = parse_json(data[:end], what="The mailbox index's tail record")
    if not isinstance(record, dict) or record.get("schema") != TAIL_SCHEMA:
        return None
    if record["base"] != base:
        return None
    body = data[end + 1 :]
    crc = record.pop("crc32")
    if zlib.crc32(body, zlib.crc32(canonical_json(record))) != crc:
        return None
    tail, first = record["tail"], header["tail"]
    if not isinstance(tail, int) or not isinstance(first, int) or tail < first:
        return None
    if tail not in indexes:
        return None
    if record["segments"] != sum(1 for i in indexes if i <= tail):
        return None
    sealed = tuple((int(index), int(size)) for index, size in record["sealed"])
    if [index for index, _ in sealed] != [i for i in indexes if first <= i < tail]:
        return None
    if len(sealed) >= TAIL_SEGMENTS or any(size < 0 for _, size in sealed):
        return None
    if sealed and sealed[0][1] < header["tail_size"]:  # type: ignore[operator]  # checked int
        return None  # the index's tail, sealed since, is shorter than the index covered
    covered, sha = record["tail_size"], record["tail_sha256"]
    if not isinstance(covered, int) or not isinstance(sha, str):
        return None
    ids_bytes = record["ids"] * _ID_BYTES
    missions = record["missions"]
    if len(body) != ids_bytes + sum(length for _, length in missions):
        return None
    ids = {body[i : i + _ID_BYTES] for i in range(0, ids_bytes, _ID_BYTES)}
    docs: dict[str, bytes] = {}
    at = ids_bytes
    for mission_id, length in missions:
        if not isinstance(mission_id, str) or not mission_id.isascii():
            return None
        docs[mission_id] = body[at : at + length]
        at += length
    counters = tuple(record[k] for k in _COUNTERS)
    if not all(isinstance(n, int) and n >= 0 for n in counters):
        return None
    a, b, c, d = counters
    return TailRecord(tail, sealed, covered, sha, (a, b, c, d), ids, docs)
