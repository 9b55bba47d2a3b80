"""The project's memory in an archive: which records travel, and how they are checked
(issue 33 item 3; SPEC §10; docs/archives.md §8).

A project's memory is what its ``.voicebox/`` holds beside its files. An archive carries
exactly two kinds of record, named by :func:`memory_path` (an allow-list: a record of any other
name is never exported, and an archive entry of any other name under ``.voicebox/`` is refused
as before):

- ``.voicebox/skeleton.json`` — the system-block store (:mod:`core.missions.blocks`);
- ``.voicebox/mailbox/<8 digits>.jsonl`` — the mailbox's segments, the letters
  (:mod:`core.missions.mailbox`).

What stays behind, and why:

- ``.voicebox/manifest.json`` — the project's identity on this host (its id, its times); the
  import writes a new one (a new id);
- ``.voicebox/mailbox.index`` — a cache derived from the segments; the mailbox rebuilds it;
- ``.voicebox/trash/`` — files a person deleted: not the project as it is, and maybe deleted
  because they should not travel;
- everything the host keeps in HOST_DIR rather than in the project — the audit and its key,
  pairings and bearers, the host token, provider keys, environments, runner pins, harness
  choices, the page's presentation state (tray dismissals, open folders, cursor positions):
  keyed to this host or to its credentials, never in a project folder, so never in an archive.

**Secrets.** A record carrying the exact value of a secret this host holds (a provider key, a
bearer, the host token, an environment server's audit key: the host's
:class:`~core.redaction.Redactor`) is never exported: the memory is left out whole and the
export says so (:func:`collect_memory`). A letter is refused such a value when posted
(:mod:`core.custody.held_secrets`), so this is a last guard.

**Chains** (:func:`verify_memory`), checked on export (an archive its own import would refuse
is not made: the memory is left out and said) and again on import (a broken chain refuses
``archive-memory-broken`` with a sentence naming what is broken, unless the person chose to
import the files only):

- the block store parses as a :class:`~core.missions.blocks.SkeletonStore`; every block's
  name keeps the one name rule (``core.paths.check_name``: no control or bidirectional control
  character, NFC) that every name a person or agent gives a block is held to; every receipt's
  ``candidate_id`` is the sha256 of its candidate; receipts are in rising store-version order;
  every green block has a receipt for it (colour moves only by receipt import, seed 004 §1c);
- the mailbox's segments are numbered 0, 1, 2… with none missing; every line parses and its id
  is the sha256 of its content; no id appears twice; every mission letter lies on its mission's
  one chain (``prev_letter_id`` names the letter before it, back to seq 1: no fork, no gap).

What the chains prove: the memory is whole and unedited since each letter was chained — a
letter changed, dropped or inserted breaks the link after it, and the manifest's sha256 of each
record breaks on any byte changed without recomputing it. What they cannot prove: that the
host named in the manifest wrote them — nothing is signed (a signature would need a key that
travels, or one the importing host trusts). So an import of memory is a person's decision made
on the preview, and the imported project is a copy, like a renamed one (docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from core.missions.blocks import SKELETON_PATH, SkeletonStore
from core.missions.chain import ChainEntry, MissionChains
from core.missions.letters import candidate_id
from core.missions.mailbox import MAILBOX_DIR, decode_line, segment_path
from core.paths import META_DIR, ProjectPath, check_name
from core.ports import ProjectFiles
from core.redaction import Redactor
from core.refusals import Code, Refused

__all__ = [
    "MAX_MEMORY_BYTES",
    "CollectedMemory",
    "MemoryCounts",
    "MemoryRecord",
    "collect_memory",
    "memory_path",
    "read_memory",
    "verify_memory",
]

MAX_MEMORY_BYTES = 64 << 20
"""The most bytes of memory an archive carries (and an import accepts): the records are held
whole in memory on both sides."""

_SEGMENT = re.compile(r"^\.voicebox/mailbox/(\d{8})\.jsonl$")
"""A mailbox segment's archive name (``.voicebox`` is :data:`core.paths.META_DIR`, checked at
import below)."""
assert _SEGMENT.match(f"{META_DIR}/mailbox/00000000.jsonl")
_SKELETON = str(SKELETON_PATH)
SECRET_LEFT_OUT = (
    "The project's memory was left out: it holds the value of a secret this host keeps (a "
    "provider key, a bearer or the host token), and an archive never carries one."
)


def memory_path(name: str) -> ProjectPath | None:
    """The record's path when ``name`` (an archive entry name, ``/``-separated) is one an
    archive carries (module docstring), else ``None``."""
    if name == _SKELETON:
        return SKELETON_PATH
    match = _SEGMENT.match(name)
    return segment_path(int(match.group(1))) if match else None


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One record of memory: its ``path`` under ``.voicebox/`` and its bytes."""

    path: ProjectPath
    data: bytes


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    """What verified memory holds: ``blocks`` (``green`` of them), mailbox ``letters``
    (mission letters and notes) and ``missions``."""

    blocks: int
    green: int
    letters: int
    missions: int


def _broken(sentence: str) -> Refused:
    return Refused(
        Code.ARCHIVE_MEMORY_BROKEN, f"The project memory in the archive is broken: {sentence}"
    )


def _verify_store(data: bytes) -> SkeletonStore:
    try:
        store = SkeletonStore.model_validate_json(data)
    except (ValidationError, ValueError):
        raise _broken("the block store (.voicebox/skeleton.json) does not parse.") from None
    last = 0
    for receipt in store.receipts:
        if candidate_id(receipt.candidate) != receipt.candidate_id:
            raise _broken(
                f"the receipt of store version {receipt.store_version} does not match its "
                "candidate's sha256 (it was edited)."
            )
        if receipt.store_version <= last:
            raise _broken(f"the receipt of store version {receipt.store_version} is out of order.")
        last = receipt.store_version
    for block in store.blocks:
        try:
            check_name(block.name)  # the one name rule a block's name was given under
        except Refused as exc:
            raise _broken(
                f"the name of block {block.id} breaks the name rule: {exc.message}"
            ) from None
    receipted = {r.block_id for r in store.receipts}
    for block in store.blocks:
        if block.color == "green" and block.id not in receipted:
            raise _broken(
                f"block {block.id} is green with no imported receipt for it (a colour "
                "moves only by a receipt import)."
            )
    return store


def _verify_mailbox(segments: Sequence[tuple[int, bytes]]) -> tuple[int, int]:
    """``(letters, missions)`` of a whole, unbroken mailbox; refuses otherwise."""
    indexes = [index for index, _ in segments]
    if indexes != list(range(len(indexes))):
        missing = next(i for i in range(len(indexes) + 1) if i not in indexes)
        raise _broken(f"mailbox segment {missing:08d}.jsonl is missing.")
    seen: set[str] = set()
    entries: list[ChainEntry] = []
    position = 0
    for index, data in segments:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            line = decode_line(raw)
            where = f"line {number} of mailbox segment {index:08d}.jsonl"
            if line is None:
                raise _broken(f"{where} does not parse or does not match its content id.")
            if line.id in seen:
                raise _broken(f"{where} repeats letter {line.id[:12]}.")
            seen.add(line.id)
            if line.mission is not None:
                entries.append(ChainEntry(position, line.id, line.mission, line.from_, line.at))
            position += 1
    chains = MissionChains.build(entries)
    if chains.headless:
        mission = next(
            e.letter.mission_id for e in entries if chains.head(e.letter.mission_id) is None
        )
        raise _broken(f"mission {mission} has no first letter its chain starts from.")
    for state in chains.states():
        if state.off_chain_count:
            raise _broken(
                f"mission {state.head.letter.mission_id} has "
                f"{state.off_chain_count} letter(s) off its chain (changed, forked or missing "
                "the letter before)."
            )
    return len(seen), len(chains.states())


def verify_memory(records: Sequence[MemoryRecord]) -> MemoryCounts:
    """Check every chain of ``records`` (module docstring) and count what they hold.

    ``records`` are the memory's records, each path one :func:`memory_path` names (any order).
    Refuses ``archive-memory-broken`` with a sentence naming the first thing broken (a record,
    a line, a mission, a block). Pure: no storage.
    """
    store: SkeletonStore | None = None
    segments: list[tuple[int, bytes]] = []
    for record in records:
        if record.path == SKELETON_PATH:
            store = _verify_store(record.data)
        else:
            match = _SEGMENT.match(str(record.path))
            if match is None:
                raise _broken(f"{record.path} is not a record an archive carries.")
            segments.append((int(match.group(1)), record.data))
    segments.sort()
    letters, missions = _verify_mailbox(segments)
    blocks = [] if store is None else store.blocks
    return MemoryCounts(
        blocks=len(blocks),
        green=sum(1 for b in blocks if b.color == "green"),
        letters=letters,
        missions=missions,
    )


async def read_memory(files: ProjectFiles) -> list[MemoryRecord]:
    """The project's memory records in entry order (name order); none when it has no store
    and no mailbox. Storage refusals propagate."""
    found: list[MemoryRecord] = []
    mailbox = await files.stat(ProjectPath(MAILBOX_DIR))
    if mailbox is not None and mailbox.kind == "dir":
        names = sorted(await files.names(MAILBOX_DIR))
        for name in names:
            path = memory_path(f"{META_DIR}/mailbox/{name}")
            if path is not None:
                found.append(MemoryRecord(path, await files.read(path)))
    if await files.stat(SKELETON_PATH) is not None:
        found.append(MemoryRecord(SKELETON_PATH, await files.read(SKELETON_PATH)))
    found.sort(key=lambda r: str(r.path).encode())
    return found


@dataclass(frozen=True, slots=True)
class CollectedMemory:
    """What an export carries of a project's memory: the ``records`` (empty when none, or
    when left out) and their ``counts``, or ``left_out``: the sentence saying why the memory
    stayed behind (a secret, a broken chain, too large)."""

    records: tuple[MemoryRecord, ...]
    counts: MemoryCounts | None
    left_out: str | None = None


async def collect_memory(files: ProjectFiles, redactor: Redactor | None) -> CollectedMemory:
    """The memory an export of the whole project carries (module docstring): read, checked
    for the exact value of any secret ``redactor`` knows, and verified with the import's own
    rules (:func:`verify_memory`). Never refuses on the memory itself — what cannot travel is
    left out and said; storage refusals propagate."""
    records = await read_memory(files)
    if not records:
        return CollectedMemory((), None)
    if sum(len(r.data) for r in records) > MAX_MEMORY_BYTES:
        return CollectedMemory(
            (),
            None,
            f"The project's memory was left out: it is over {MAX_MEMORY_BYTES >> 20} MiB.",
        )
    if redactor and any(redactor.spans(r.data) for r in records):
        return CollectedMemory((), None, SECRET_LEFT_OUT)
    try:
        counts = verify_memory(records)
    except Refused as broken:
        return CollectedMemory((), None, f"{broken.message} It was left out of the archive.")
    return CollectedMemory(tuple(records), counts)
