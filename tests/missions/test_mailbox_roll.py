"""A post that starts a new segment (a "roll", issue 34; :mod:`core.missions.mailbox.tail`,
"Rolls"): it writes the new segment and the small tail record — which then covers the
segments sealed since the index — never the O(letters) index; the index is rewritten only by
the post that would make the record cover more than ``TAIL_SEGMENTS`` segments, by an open
that replayed past that bound, or by the host's idle warm-up. An open still never believes a
stale record or index (a sealed segment changed or gone, a record of another index), and
replays a bounded number of lines. Pure core over the in-memory adapters: runs on CPython
and inside Pyodide."""

from __future__ import annotations

import json

import pytest

import core.missions.mailbox as mailbox_module
from core.memory.adapters import MemoryProjectFiles
from core.missions.mailbox import (
    INDEX_PATH,
    SEGMENT_BYTES,
    TAIL_PATH,
    TAIL_SEGMENTS,
    Mailbox,
    MailboxCache,
    encode_line,
    note_line,
    segment_path,
)
from tests.missions.test_mailbox_index import (
    AT,
    Log,
    ReadLog,
    assert_reads_index_parts_and_tail,
    rebuilt,
    view,
)
from tests.missions.test_mailbox_tail_record import Crashing
from tests.support import run


class Counting(ReadLog):
    """:class:`ReadLog` that also counts the bytes written, by path."""

    def __init__(self, inner: MemoryProjectFiles) -> None:
        super().__init__(inner)
        self.written: dict[str, int] = {}

    async def write(self, path, data):
        self.written[str(path)] = self.written.get(str(path), 0) + len(data)
        await self.inner.write(path, data)


@pytest.fixture
def decoded(monkeypatch):
    count = [0]
    real = mailbox_module.decode_line

    def counting(raw):
        count[0] += 1
        return real(raw)

    monkeypatch.setattr(mailbox_module, "decode_line", counting)
    return count


@pytest.fixture
def small_segments(monkeypatch):
    monkeypatch.setattr(mailbox_module, "SEGMENT_BYTES", 2048)


def filled(letters: int) -> MemoryProjectFiles:
    """A mailbox of ``letters`` notes in segments of up to :data:`SEGMENT_BYTES`, opened once
    (so its index is written), its tail segment nearly full."""
    files = MemoryProjectFiles()
    segments: list[bytes] = [b""]
    for n in range(letters):
        raw = encode_line(note_line("operator", "hand-1", "a note", f"letter {n:08d}", AT))
        if len(segments[-1]) + len(raw) > SEGMENT_BYTES:
            segments.append(b"")
        segments[-1] += raw
    for index, data in enumerate(segments):
        run(files.write(segment_path(index), data))
    run(Mailbox.open(files))
    return files


def roll_post(files: MemoryProjectFiles) -> Counting:
    """Post notes into a freshly opened mailbox until one starts a new segment; return the
    storage calls of that post alone."""
    box = run(Mailbox.open(files))
    n = 0
    while True:
        spy = Counting(files)
        box.files = spy
        tail = box._tail
        n += 1
        run(box.append([note_line("operator", "hand-1", "a post", f"post {n}", AT)]))
        if box._tail != tail:
            return spy


def test_a_post_that_starts_a_segment_does_not_rewrite_the_index_in_its_path():
    """The roll post at 10,000 letters writes and reads what it does at 100: the new segment
    and the tail record, no index and no ranged read of the index's ids (17690ec rewrote the
    index there: every id and document read, the whole index written — O(letters))."""
    small, large = roll_post(filled(100)), roll_post(filled(10_000))
    for spy in (small, large):
        assert str(INDEX_PATH) not in spy.written
        assert set(spy.written) == {str(TAIL_PATH), *(p for p in spy.written if "mailbox/" in p)}
        assert spy.calls <= 1 and sum(n for _, n in spy.ranges) <= 32 * 64
    assert sum(large.written.values()) <= sum(small.written.values()) + 1024


def test_an_open_after_several_rolls_without_an_index_rewrite_replays_a_bounded_tail(
    small_segments, decoded
):
    """Several rolls leave the index as it was; a fresh open then reads the index's parts, the
    record and only the last segment (the sealed ones by ``stat``), decodes fewer than
    ``TAIL_EVERY`` lines, and says what the whole log says; posting goes on from it."""
    log = Log(missions=4)
    log.post(6)
    box = run(Mailbox.open(log.files))
    index = log.index()
    segments = log.segment_count()
    while log.segment_count() < segments + TAIL_SEGMENTS - 2:
        log.post(1, box)
    assert log.index() == index  # no roll rewrote it
    decoded[0] = 0
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert decoded[0] < mailbox_module.TAIL_EVERY
    assert_reads_index_parts_and_tail(spy, log.segment_count() - 1)
    assert view(box) == view(rebuilt(log.files))
    log.post(9, run(Mailbox.open(log.files)))
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))


def test_the_post_that_would_pass_tail_segments_rewrites_the_index(small_segments):
    """The record covers at most ``TAIL_SEGMENTS`` segments: the roll past that rewrites the
    index, after which the record starts over (one O(letters) write in that many rolls)."""
    log = Log(missions=3)
    log.post(3)
    box = run(Mailbox.open(log.files))  # the index is written: the record extends it
    index, first = log.index(), log.segment_count() - 1
    while log.index() == index:
        log.post(1, box)
    assert log.segment_count() - 1 == first + TAIL_SEGMENTS
    spy = ReadLog(log.files)
    assert view(run(Mailbox.open(spy))) == view(rebuilt(log.files))
    assert_reads_index_parts_and_tail(spy, log.segment_count() - 1)


def test_a_crash_between_a_rolls_segment_and_its_record_replays_only_the_lines_no_record_covers(
    small_segments, decoded
):
    """The roll's segment is written, its record never is: the older record still covers a
    prefix of the old tail, so an open replays that tail's rest and the new segment (a
    bounded count), says what the whole log says, and writes a record, not the index."""
    log = Log(missions=3)
    log.post(5)
    run(Mailbox.open(log.files))
    index = log.index()
    crashing = Crashing(log.files, {str(TAIL_PATH)})
    box = run(Mailbox.open(crashing))
    segments = log.segment_count()
    while log.segment_count() == segments:
        log.post(1, box)
    decoded[0] = 0
    reopened = run(Mailbox.open(log.files))
    assert 0 < decoded[0] < mailbox_module.TAIL_EVERY + 1
    assert view(reopened) == view(rebuilt(log.files))
    assert log.index() == index  # the open wrote the record over the new segment instead
    decoded[0] = 0
    assert view(run(Mailbox.open(log.files))) == view(reopened)
    assert decoded[0] == 0


@pytest.mark.parametrize("edit", ["cut-a-line", "removed", "grown"])
def test_a_record_over_a_sealed_segment_changed_since_is_not_believed(small_segments, edit):
    """A segment the record says was sealed since the index lost a line, vanished or grew
    (another writer): the record is ignored and the mailbox says what the whole log says."""
    log = Log(missions=3)
    log.post(5)
    box = run(Mailbox.open(log.files))
    segments = log.segment_count()
    while log.segment_count() < segments + 3:
        log.post(1, box)
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = sorted(folder)[segments]  # sealed since the index, not the tail
    if edit == "removed":
        del folder[name]
    elif edit == "grown":
        folder[name] = bytes(folder[name]) + bytes(folder[sorted(folder)[0]]).splitlines(True)[0]
    else:
        folder[name] = b"".join(bytes(folder[name]).splitlines(keepends=True)[:-1])
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))


def test_a_record_over_a_rewritten_tail_after_rolls_is_not_believed(small_segments):
    """The record's own tail lost its last line: its hash fails, the index alone decides
    and the segments after it are replayed — what the whole log says."""
    log = Log(missions=2)
    log.post(4)
    box = run(Mailbox.open(log.files))
    segments = log.segment_count()
    while log.segment_count() < segments + 2:
        log.post(1, box)
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = max(folder)
    folder[name] = b"".join(bytes(folder[name]).splitlines(keepends=True)[:-1])
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))


def test_the_warm_up_rewrites_the_index_over_the_sealed_segments_off_the_posts_path(
    small_segments,
):
    """The host's warm-up (idle work before ``settled``) folds a record that covers sealed
    segments into the index; a plain open for a post never does."""
    log = Log(missions=3)
    log.post(4)
    box = run(Mailbox.open(log.files))
    index = log.index()
    segments = log.segment_count()
    while log.segment_count() < segments + 2:
        log.post(1, box)
    run(MailboxCache().get("p", log.files))
    assert log.index() == index
    assert run(MailboxCache().warm("p", log.files))
    assert log.index() != index
    header = json.loads(log.index().split(b"\n", 1)[0])
    assert header["tail"] == log.segment_count() - 1  # the index's tail is the tail again
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))
