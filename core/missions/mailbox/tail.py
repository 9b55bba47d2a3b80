"""The mailbox index's tail record, ``.voicebox/mailbox.index.tail``: the posts made since the
persisted index (:mod:`core.missions.mailbox.index`), kept so that opening the mailbox decodes
none of them (issue 34; seed 004 §2).

**Why.** Rewriting the index costs O(letters), so it waits for a new segment; the posts in
between used to be replayed on every open — up to a segment of lines, each decoded and
validated again, and each of their missions' documents read and checked — which is what a
fresh host's first post waited for. The record is rewritten (one atomic write) by the post
that makes :data:`TAIL_EVERY` lines since it was last written, when that post keeps the tail
segment; a post that starts a new segment rewrites the index instead. An open thus replays
fewer than :data:`TAIL_EVERY` lines — a bound, not a segment — while a post pays the record's
write (at most one segment's ids and moved missions' documents, ~70 KB at 10,000 missions)
once in :data:`TAIL_EVERY` posts, not on each: a post's cost stays constant in the mailbox's
length (seed 004 §2c).

**Layout.** The first line is a canonical JSON header — :data:`TAIL_SCHEMA`, ``base`` (the
sha256 of the header line of the index it extends), the tail segment and the segment count,
the length and sha256 of the prefix of the tail segment it covers, the counters (``letters``,
``skipped``, ``duplicates``, ``positions``), how many content ids follow, each moved mission's
id and document length, and ``crc32`` over the header (without it) and the body; then the body:
the content ids taken since the index (32 bytes each) and the documents of the missions moved
since it (:meth:`~core.missions.chain.MissionChains.document`).

**When it is believed.** Only after the index was taken, and only when ``base`` names that
index, its tail segment and segment count are the index's, the crc32 holds, and its prefix of
the tail — no shorter than the index's — still hashes to its ``tail_sha256`` (the tail's chain
check; the index's own shorter prefix is checked too). Its documents then win over the
index's, and only the lines after its prefix are replayed. Anything else is ignored and the
index alone decides, as before. A mission's document is checked when first used, as the
index's are: the record is never trusted for more than the index is.

**Crashes.** Every write is atomic, so each file is whole, old or new. Between the segment's
write and the record's (or between two records), the older record is still a prefix of the
tail: the lines posted since it was written — fewer than :data:`TAIL_EVERY` — are replayed.
Between a new segment and the index, the old index and its record cover the old tail: the new
segment is replayed and the index rewritten. A record whose write was refused (a full disk) is
the same case as a crash.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from core.json_bound import parse_json
from core.model import canonical_json
from core.paths import META_DIR, ProjectPath
from core.ports import ProjectFiles
from core.refusals import Refused

__all__ = [
    "MAX_TAIL_BYTES",
    "TAIL_EVERY",
    "TAIL_PATH",
    "TAIL_SCHEMA",
    "TailRecord",
    "read_tail",
    "tail_bytes",
]

TAIL_PATH = ProjectPath((META_DIR, "mailbox.index.tail"))
"""Where the tail record lives."""
TAIL_SCHEMA = "voicebox-mailbox-index-tail-v1"
"""Bump with the index's schema or when the record's layout changes: another is ignored."""
TAIL_EVERY = 16
"""The record is rewritten once this many lines were posted since it last was (module
docstring, "Why")."""
MAX_TAIL_BYTES = 8 << 20
"""A tail record longer than this is not read (it holds at most one segment's changes)."""
_ID_BYTES = 32
_COUNTERS = ("letters", "skipped", "duplicates", "positions")


@dataclass(frozen=True, slots=True)
class TailRecord:
    """A believed tail record: bytes of the tail it covers, the counters (letters, skipped,
    duplicates, positions), the content ids and the moved missions' documents."""

    covered: int
    counters: tuple[int, int, int, int]
    ids: set[bytes]
    docs: dict[str, bytes]


def tail_bytes(
    *,
    base: str,
    tail: int,
    segments: int,
    tail_data: bytes,
    counters: tuple[int, int, int, int],
    ids: set[bytes],
    docs: Sequence[tuple[str, bytes]],
) -> bytes:
    """The record's bytes (module docstring, "Layout") for a mailbox whose index on storage
    has header sha256 ``base``, whose tail segment ``tail`` (of ``segments``) holds
    ``tail_data``, with ``ids`` taken and ``docs`` (``(mission_id, document)``) moved since."""
    body = b"".join([*ids, *(doc for _, doc in docs)])
    record: dict[str, object] = {
        "schema": TAIL_SCHEMA,
        "base": base,
        "tail": tail,
        "segments": segments,
        "tail_size": len(tail_data),
        "tail_sha256": hashlib.sha256(tail_data).hexdigest(),
        **dict(zip(_COUNTERS, counters, strict=True)),
        "ids": len(ids),
        "missions": [[mission_id, len(doc)] for mission_id, doc in docs],
    }
    record["crc32"] = zlib.crc32(body, zlib.crc32(canonical_json(record)))
    return b"".join([canonical_json(record), b"\n", body])


async def read_tail(
    files: ProjectFiles,
    base: str | None,
    header: dict[str, object],
    tail_data: bytes,
    size: int,
) -> TailRecord | None:
    """The record on storage when it extends the index whose header line hashes to ``base``
    and reads ``header``, over the tail segment's current bytes ``tail_data`` of which the
    index covers ``size`` (module docstring, "When it is believed"); else ``None``. Never
    raises (a storage refusal is no record)."""
    if base is None:
        return None
    try:
        data = await files.read(TAIL_PATH)
    except Refused:
        return None
    try:
        return _believed(data, base, header, tail_data, size)
    except (Refused, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def _believed(
    data: bytes, base: str, header: dict[str, object], tail_data: bytes, size: int
) -> TailRecord | None:
    if len(data) > MAX_TAIL_BYTES:
        return None
    end = data.index(b"\n")
    record = parse_json(data[:end], what="The mailbox index's tail record")
    if not isinstance(record, dict) or record.get("schema") != TAIL_SCHEMA:
        return None
    if record["base"] != base or record["tail"] != header["tail"]:
        return None
    if record["segments"] != header["segments"]:
        return None
    covered_size = record["tail_size"]
    if not isinstance(covered_size, int) or covered_size < size:
        return None
    covered = tail_data[:covered_size]
    if len(covered) != covered_size or (covered and not covered.endswith(b"\n")):
        return None
    if hashlib.sha256(covered).hexdigest() != record["tail_sha256"]:
        return None
    body = data[end + 1 :]
    crc = record.pop("crc32")
    if zlib.crc32(body, zlib.crc32(canonical_json(record))) != crc:
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
    return TailRecord(covered_size, (a, b, c, d), ids, docs)
