"""Mission chains and their heads: causal order, never clock order (seed 004 §1e, §2b).

Each mission's letters form a hash chain: letter ``n`` (``mission_seq == n``) names letter
``n - 1`` by ``prev_letter_id`` (the sha12 of its content id, :mod:`core.missions.letters`). A
letter is *on a valid chain* when it is a seq-1 letter, or when a letter on a valid chain at ``seq -
1`` has the sha12 it names. A mission's **head** is the on-chain letter with the highest seq — the
end of the longest valid chain; if two share that seq (only possible when the log was written
by something other than the head CAS), the one earlier in the log wins, which is the one the CAS
would have accepted first. ``updated_at`` never decides anything.

Counts, per mission, reported honestly:

- ``superseded_count`` — letters on the head's chain before it (``head.mission_seq - 1``);
- ``off_chain_count`` — the mission's other parsed letters: forks and broken links, which are
  kept in the log but are state of no chain;
- a mission whose letters form no valid chain has no head and is counted in
  :attr:`MissionChains.headless`.

The same letter (same content id) appearing twice counts once. :class:`MissionChains` is built
once from a log (:meth:`MissionChains.build`) and then extended letter by letter as posts land
(:meth:`MissionChains.extend`); both give the same heads for the same log. A regular mission
(every letter on the head's chain) keeps only its head in memory; a mission with off-chain
letters keeps all its entries, because a new letter could complete a broken link and lengthen a
chain, and its head is then recomputed on each extension.

**Persisted form.** :meth:`MissionChains.dump` gives one canonical JSON document per mission
(its head, its letter count and, for an irregular mission, every entry);
:meth:`MissionChains.lazy` takes those documents back without decoding them: a mission is
decoded (and its letters validated again) the first time something asks about it, so opening a
large mailbox from its persisted index costs what the missions actually touched cost
(:mod:`core.missions.mailbox`, "Persisted index").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from core.json_bound import parse_json
from core.missions.letters import MissionLetter, letter_id, sha12
from core.model import canonical_json
from core.refusals import Refused

__all__ = ["ChainEntry", "MissionChains", "MissionState"]


@dataclass(frozen=True, slots=True)
class ChainEntry:
    """One parsed mission letter in the log: its position (0-based line ordinal over the whole
    mailbox), content id, the letter, who posted it and when (ISO-8601, host time)."""

    position: int
    letter_id: str
    letter: MissionLetter
    agent_id: str
    at: str

    @property
    def seq(self) -> int:
        """The letter's ``mission_seq``."""
        return self.letter.mission_seq


@dataclass(slots=True)
class MissionState:
    """A mission as the read side shows it: its head and the honest counts."""

    head: ChainEntry
    letters: int

    @property
    def superseded_count(self) -> int:
        """Letters on the head's chain before the head."""
        return self.head.seq - 1

    @property
    def off_chain_count(self) -> int:
        """The mission's letters on no chain that leads to the head."""
        return self.letters - self.head.seq


class MissionChains:
    """Heads of every mission in one mailbox (rules in the module docstring)."""

    def __init__(self) -> None:
        self._states: dict[str, MissionState] = {}
        self._headless: dict[str, int] = {}
        self._irregular: dict[str, dict[str, ChainEntry]] = {}
        self._raw: Mapping[str, bytes] = {}
        self._loaded: set[str] = set()
        self._dumped: dict[str, bytes] = {}

    @classmethod
    def lazy(cls, raw: Mapping[str, bytes]) -> MissionChains:
        """Chains from :meth:`dump`'s documents (``mission_id -> canonical JSON``; the mapping
        is only ever asked for one mission at a time, and iterated by :meth:`states`,
        :attr:`headless` and :meth:`dump`), each decoded on first use. A document that does
        not decode, or whose letters no longer match their content ids, raises
        :class:`ValueError` then (the caller rebuilds from the log)."""
        chains = cls()
        chains._raw = raw
        return chains

    def dump(self) -> Iterator[tuple[str, bytes]]:
        """Every mission as ``(mission_id, canonical JSON)``, in mission id order (the
        persisted form, module docstring); undecoded documents pass through unchanged."""
        missions = sorted({*self._states, *self._headless, *self._irregular, *self._raw})
        for mission_id in missions:
            yield mission_id, self.document(mission_id)

    def document(self, mission_id: str) -> bytes:
        """One mission's persisted form (as :meth:`dump` gives it): what the mailbox's tail
        record keeps for each mission moved since the index (issue 34)."""
        raw = self._dumped.get(mission_id)
        if raw is None and mission_id not in self._loaded:
            raw = self._raw.get(mission_id)
        if raw is not None:
            return raw
        state = self._states.get(mission_id)
        irregular = self._irregular.get(mission_id)
        doc: dict[str, Any] = {
            "letters": self._headless.get(mission_id, 0) if state is None else state.letters,
            "head": None if state is None else _dump_entry(state.head),
        }
        if irregular is not None:
            doc["entries"] = [_dump_entry(e) for e in irregular.values()]
        self._dumped[mission_id] = raw = canonical_json(doc)
        return raw

    def _load(self, mission_id: str) -> None:
        if not self._raw or mission_id in self._loaded:
            return
        self._loaded.add(mission_id)
        raw = self._raw.get(mission_id)
        if raw is None:
            return
        try:
            doc = parse_json(raw, what="A mission's persisted chain")
        except Refused as exc:
            raise ValueError(exc.message) from None
        if not isinstance(doc, dict) or not {"letters", "head"} <= set(doc) <= _DOC_KEYS:
            raise ValueError("a mission's persisted chain is not one this host wrote")
        head = None if doc["head"] is None else _load_entry(doc["head"])
        letters = doc["letters"]
        if not isinstance(letters, int) or letters < 1:
            raise ValueError("a mission's persisted letter count is not a positive integer")
        if head is None:
            self._headless[mission_id] = letters
        else:
            self._states[mission_id] = MissionState(head=head, letters=letters)
        if "entries" in doc:
            entries = [_load_entry(e) for e in doc["entries"]]
            self._irregular[mission_id] = {e.letter_id: e for e in entries}
        elif head is None or letters != head.seq:
            raise ValueError("a persisted mission with off-chain letters lists its entries")
        for entry in (head, *self._irregular.get(mission_id, {}).values()):
            if entry is not None and entry.letter.mission_id != mission_id:
                raise ValueError("a persisted letter belongs to another mission")

    def _load_all(self) -> None:
        for mission_id in list(self._raw):
            self._load(mission_id)

    @classmethod
    def build(cls, entries: Iterable[ChainEntry]) -> MissionChains:
        """Compute every mission's head from the log's parsed mission letters (any order)."""
        by_mission: dict[str, dict[str, ChainEntry]] = {}
        for entry in entries:
            seen = by_mission.setdefault(entry.letter.mission_id, {})
            if entry.letter_id not in seen or seen[entry.letter_id].position > entry.position:
                seen[entry.letter_id] = entry
        chains = cls()
        for mission_id, seen in by_mission.items():
            chains._settle(mission_id, seen)
        return chains

    def _settle(self, mission_id: str, seen: dict[str, ChainEntry]) -> None:
        self._loaded.add(mission_id)
        self._dumped.pop(mission_id, None)
        head = _longest_chain_head(seen.values())
        self._states.pop(mission_id, None)
        self._headless.pop(mission_id, None)
        self._irregular.pop(mission_id, None)
        if head is None:
            self._headless[mission_id] = len(seen)
        else:
            self._states[mission_id] = MissionState(head=head, letters=len(seen))
        if head is None or len(seen) > head.seq:
            self._irregular[mission_id] = seen

    def head(self, mission_id: str) -> ChainEntry | None:
        """The mission's head, or ``None`` when the mission has no valid chain (or no letter)."""
        self._load(mission_id)
        state = self._states.get(mission_id)
        return None if state is None else state.head

    def extends_head(self, letter: MissionLetter) -> bool:
        """True when ``letter`` is exactly the next link of its mission's head (the CAS)."""
        head = self.head(letter.mission_id)
        if head is None:
            return letter.mission_seq == 1 and letter.prev_letter_id is None
        return letter.mission_seq == head.seq + 1 and letter.prev_letter_id == sha12(head.letter_id)

    def extend(self, entry: ChainEntry) -> None:
        """Record a letter that extends its mission's head; it becomes the head.

        Raises ``ValueError`` if it does not extend the head (the caller checks the CAS first).
        """
        if not self.extends_head(entry.letter):
            raise ValueError("the letter does not extend its mission's head")
        mission_id = entry.letter.mission_id
        self._load(mission_id)
        self._dumped.pop(mission_id, None)
        irregular = self._irregular.get(mission_id)
        if irregular is not None:
            self._settle(mission_id, {**irregular, entry.letter_id: entry})
            return
        state = self._states.get(mission_id)
        if state is None:
            self._states[mission_id] = MissionState(head=entry, letters=1)
        else:
            state.head = entry
            state.letters += 1

    def states(self) -> list[MissionState]:
        """Every mission with a head, most recently moved first."""
        self._load_all()
        return sorted(self._states.values(), key=lambda s: -s.head.position)

    @property
    def headless(self) -> int:
        """Letters of missions that have no valid chain at all."""
        self._load_all()
        return sum(self._headless.values())


_DOC_KEYS = {"letters", "head", "entries"}


def _dump_entry(entry: ChainEntry) -> list[Any]:
    return [entry.position, entry.letter_id, entry.agent_id, entry.at, entry.letter.wire()]


def _load_entry(raw: Any) -> ChainEntry:
    if not isinstance(raw, list) or len(raw) != 5:
        raise ValueError("a persisted chain entry is not one this host wrote")
    position, content_id, agent_id, at, wire = raw
    letter = MissionLetter.model_validate(wire)
    if not isinstance(position, int) or position < 0 or letter_id(letter) != content_id:
        raise ValueError("a persisted chain entry does not match its letter")
    if not isinstance(agent_id, str) or not isinstance(at, str):
        raise ValueError("a persisted chain entry is not one this host wrote")
    return ChainEntry(position, content_id, letter, agent_id, at)


def _longest_chain_head(entries: Iterable[ChainEntry]) -> ChainEntry | None:
    ordered = sorted(entries, key=lambda e: (e.seq, e.position))
    valid_at: dict[int, dict[str, ChainEntry]] = {}
    head: ChainEntry | None = None
    for entry in ordered:
        letter = entry.letter
        if letter.mission_seq == 1:
            linked = letter.prev_letter_id is None
        else:
            linked = letter.prev_letter_id in valid_at.get(letter.mission_seq - 1, {})
        if not linked:
            continue
        valid_at.setdefault(entry.seq, {}).setdefault(sha12(entry.letter_id), entry)
        if head is None or entry.seq > head.seq:
            head = entry
    return head
