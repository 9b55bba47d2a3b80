"""The mailbox index's tail record (``.voicebox/mailbox.index.tail``, issue 34;
:mod:`core.missions.mailbox.index`, "Tail record"): written after every post that keeps the
tail segment, so that opening the mailbox decodes none of the lines already posted. A cache
like the index: used only while it extends the index on storage and its prefix of the tail
segment still hashes to what it says; every write is atomic, and a crash between any two of
the writes of a post — the segment, the tail record, the index — leaves an open that replays
only the lines no record covers and says exactly what the whole log says. Pure core over the
in-memory adapters: runs on CPython and inside Pyodide."""

from __future__ import annotations

import pytest

import core.missions.mailbox as mailbox_module
from core.memory.adapters import MemoryProjectFiles
from core.missions.letters import MissionLetter, letter_id, sha12
from core.missions.mailbox import INDEX_PATH, TAIL_PATH, Mailbox, mission_line
from core.refusals import Code, Refused
from tests.missions.test_mailbox_index import AT, Log, body, rebuilt, view
from tests.support import run


class Crashing:
    """The storage port over ``inner``; a write to a path in ``fail`` is refused with nothing
    written (what a crash before that atomic write leaves on storage)."""

    def __init__(self, inner: MemoryProjectFiles, fail: set[str]) -> None:
        self.inner = inner
        self.fail = fail

    async def write(self, path, data):
        if str(path) in self.fail:
            raise Refused(Code.STORAGE_FAILED, "a crash before this write")
        await self.inner.write(path, data)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def decoded(monkeypatch):
    """How many log lines an open decodes (the cost the tail record takes away)."""
    count = [0]
    real = mailbox_module.decode_line

    def counting(raw):
        count[0] += 1
        return real(raw)

    monkeypatch.setattr(mailbox_module, "decode_line", counting)
    return count


@pytest.fixture
def small_segments(monkeypatch):
    """Segments of 2 KiB (a few lines each) and a tail record after every post."""
    monkeypatch.setattr(mailbox_module, "SEGMENT_BYTES", 2048)
    monkeypatch.setattr(mailbox_module, "TAIL_EVERY", 1)


def tail_segment(log: Log) -> bytes:
    folder = log.files.tree[".voicebox"]["mailbox"]
    return bytes(folder[max(folder)])


def tail_record(log: Log) -> bytes:
    return bytes(log.files.tree[".voicebox"]["mailbox.index.tail"])


def test_an_open_replays_fewer_lines_than_tail_every_whatever_was_posted_since_the_index(
    decoded,
):
    """The law the tail record restores: a fresh host's open of a mailbox reads the index's
    parts, the tail record and the tail segment, and decodes fewer than ``TAIL_EVERY`` of the
    lines posted since the index — not all of them, up to a segment (338dcba decoded every
    one: 100 here)."""
    log = Log(missions=30)
    log.post(3)
    box = run(Mailbox.open(log.files))  # writes the index (a rebuild of the 3 lines)
    log.post(100, box)  # the same segment: the index is not rewritten
    assert log.segment_count() == 1 and tail_record(log)
    decoded[0] = 0
    reopened = run(Mailbox.open(log.files))
    assert decoded[0] == 100 % mailbox_module.TAIL_EVERY < mailbox_module.TAIL_EVERY
    assert view(reopened) == view(rebuilt(log.files))
    for raw in run(reopened.raw_bytes()).splitlines():  # every id known
        assert run(reopened.contains(mailbox_module.decode_line(raw).id))
    log.post(7, reopened)  # posting goes on from the heads the record gave (the CAS holds)
    decoded[0] = 0
    again = run(Mailbox.open(log.files))
    assert decoded[0] == 7
    assert view(again) == view(rebuilt(log.files))
    decoded[0] = 0
    run(Mailbox.open(log.files))  # the open that replayed wrote the record again
    assert decoded[0] == 0


def test_a_crash_between_the_segment_write_and_the_tail_record_replays_only_what_no_record_covers(
    small_segments, decoded
):
    """The segment is written, the record's write never happens: the older record on storage
    is still a prefix of the tail, so an open takes it and decodes only the one new line."""
    log = Log()
    log.post(33)
    while len(tail_segment(log)) > 2048 - 700:  # room for one more line: no new segment
        log.post(1)
    older = tail_record(log)
    crashing = Crashing(log.files, {str(TAIL_PATH)})
    box = run(Mailbox.open(crashing))
    log.post(1, box)  # the post is made; its record is not
    assert tail_record(log) == older
    decoded[0] = 0
    reopened = run(Mailbox.open(log.files))
    assert decoded[0] == 1
    assert view(reopened) == view(rebuilt(log.files))
    # that open wrote the record again: the next one decodes nothing
    decoded[0] = 0
    assert view(run(Mailbox.open(log.files))) == view(reopened)
    assert decoded[0] == 0


def test_a_crash_between_the_new_segment_and_the_index_write_recovers_from_the_log(
    small_segments,
):
    """A post that starts a new segment writes it, then the index: a crash before the index
    leaves the old index and its record over the old tail; the open replays the new
    segment, rewrites the index, and says what the whole log says."""
    log = Log()
    log.post(12)
    segments = log.segment_count()
    crashing = Crashing(log.files, {str(INDEX_PATH), str(TAIL_PATH)})
    box = run(Mailbox.open(crashing))
    while log.segment_count() == segments:
        log.post(1, box)
    reopened = run(Mailbox.open(log.files))
    assert view(reopened) == view(rebuilt(log.files))
    log.post(3, reopened)
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-5],
        lambda b: b.replace(b"msn_", b"msX_", 1),
        lambda b: b.replace(b'"letters":', b'"letters":9', 1),
        lambda b: b"",
        lambda b: b"{}\n",
    ],
    ids=["cut-short", "body-changed", "counter-changed", "empty", "no-record"],
)
def test_a_damaged_tail_record_is_never_believed(small_segments, damage):
    """A record cut short, with a changed byte, or not a record at all is ignored: the open
    replays from the index and says what the whole log says."""
    log = Log(missions=3)
    log.post(9)
    log.files.tree[".voicebox"]["mailbox.index.tail"] = damage(tail_record(log))
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))


def test_a_tail_record_over_a_rewritten_tail_is_not_believed(small_segments):
    """The tail segment lost its last line under the record (another writer): the record's
    hash no longer matches, so it is not taken — the heads come from the log as it is."""
    log = Log(missions=2)
    log.post(9)
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = max(folder)
    folder[name] = b"".join(bytes(folder[name]).splitlines(keepends=True)[:-1])
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))


def test_a_tail_record_of_an_older_index_is_not_believed(small_segments):
    """A record made over another index (the index was rewritten since, e.g. at a new
    segment) is ignored even when its prefix of a same-named tail still matches."""
    log = Log(missions=2)
    log.post(5)
    older = tail_record(log)
    del log.files.tree[".voicebox"]["mailbox.index"]
    run(Mailbox.open(log.files))  # a rebuild: a new index covering the whole tail
    log.files.tree[".voicebox"]["mailbox.index.tail"] = older
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))


def test_a_post_after_an_open_from_the_record_keeps_the_chain_and_dedup(small_segments):
    """Heads and ids taken from the record decide the next post exactly as a full read would:
    a replay is a duplicate, a stale head is refused by the CAS."""
    log = Log(missions=4)
    log.post(10)
    box = run(Mailbox.open(log.files))
    mission = log.missions[1]
    seq, prev = log.heads[mission]
    head = run(box.head(mission))
    assert head is not None and head.seq == seq and sha12(head.letter_id) == prev
    stale = MissionLetter.model_validate(body(mission, seq, None if seq == 1 else "0" * 12, 77))
    with pytest.raises(ValueError, match="extend its mission's head"):
        run(box.append([mission_line(stale, "hand-1", AT)]))
    last = view(rebuilt(log.files))
    assert view(run(Mailbox.open(log.files))) == last
    again = MissionLetter.model_validate(body(mission, seq + 1, prev, 78))
    assert not run(box.contains(letter_id(again)))
