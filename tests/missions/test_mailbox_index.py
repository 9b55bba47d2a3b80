"""The mailbox's persisted head index (``.voicebox/mailbox.index``, :mod:`core.missions.mailbox`
"Persisted index"): used only while it still describes a prefix of the log (the segments up to
its tail, that tail's length and sha256), caught up by replaying the lines after it, rebuilt
from the whole log when it does not match — a stale, truncated or old index never changes what
the mailbox says. Pure core over the in-memory adapters: runs on CPython and inside Pyodide."""

from __future__ import annotations

import json

import pytest

import core.missions.mailbox as mailbox_module
from core.memory.adapters import MemoryProjectFiles
from core.missions.letters import MissionLetter, letter_id, sha12
from core.missions.mailbox import (
    INDEX_PATH,
    TAIL_PATH,
    Mailbox,
    MailboxCache,
    mission_line,
    note_line,
    segment_path,
)
from core.refusals import Code, Refused
from tests.support import run

AT = "2026-01-01T00:00:00.000Z"


class ReadLog:
    """The storage port over ``inner``, recording every path read."""

    def __init__(self, inner: MemoryProjectFiles) -> None:
        self.inner = inner
        self.paths: list[str] = []  # whole reads
        self.ranges: list[tuple[str, int]] = []  # ranged reads: path, bytes read
        self.calls = 0  # read_ranges calls

    async def read(self, path):
        self.paths.append(str(path))
        return await self.inner.read(path)

    async def read_ranges(self, path, spans):
        found = await self.inner.read_ranges(path, spans)
        self.ranges += [(str(path), len(data)) for data in found]
        self.calls += 1
        return found

    def __getattr__(self, name):
        return getattr(self.inner, name)


def body(mission: str, seq: int, prev: str | None, salt: int) -> dict:
    return {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission,
        "mission_seq": seq,
        "prev_letter_id": prev,
        "block_id": "sb_index",
        "brain_ref": "Index brain",
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": "executing",
        "verdict": None,
        "tokens_total": salt,
        "started_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }


class Log:
    """A mailbox filled through :meth:`Mailbox.append`, missions extended round-robin."""

    def __init__(self, missions: int = 5) -> None:
        self.files = MemoryProjectFiles()
        self.box = run(Mailbox.open(self.files))
        self.missions = [f"msn_{i:012x}" for i in range(missions)]
        self.heads: dict[str, tuple[int, str | None]] = {}
        self.salt = 0

    def post(self, count: int, box: Mailbox | None = None) -> None:
        box = box or self.box
        for _ in range(count):
            mission = self.missions[self.salt % len(self.missions)]
            seq, prev = self.heads.get(mission, (0, None))
            self.salt += 1
            letter = MissionLetter.model_validate(body(mission, seq + 1, prev, self.salt))
            run(box.append([mission_line(letter, "hand-1", AT)]))
            self.heads[mission] = (seq + 1, sha12(letter_id(letter)))

    def note(self, text: str) -> None:
        run(self.box.append([note_line("operator", "hand-1", "a note", text, AT)]))

    def segment_count(self) -> int:
        return len(self.files.tree[".voicebox"]["mailbox"])

    def index(self) -> bytes:
        return bytes(self.files.tree[".voicebox"]["mailbox.index"])

    def set_index(self, data: bytes) -> None:
        self.files.tree[".voicebox"]["mailbox.index"] = data


def rebuilt(files: MemoryProjectFiles) -> Mailbox:
    """The mailbox read from the whole log, as if no index had ever been written."""
    tree = files.tree[".voicebox"]
    saved = tree.pop("mailbox.index", None)
    try:
        return run(Mailbox.open(files))
    finally:
        if saved is not None:
            tree["mailbox.index"] = saved


def view(box: Mailbox) -> dict:
    """Everything the read side and the post path see of an opened mailbox."""
    return {
        "heads": [
            (s.head.letter_id, s.head.position, s.head.agent_id, s.letters, s.head.letter.wire())
            for s in run(box.missions())
        ],
        "headless": run(box.headless()),
        "counts": (box.letters, box.skipped, box.duplicates, box._positions),
        "tail": (box._tail, box._tail_data),
    }


def assert_reads_index_parts_and_tail(spy: ReadLog, tail: int) -> None:
    """An open from a matching index read the tail segment whole (and the small tail record
    beside the index, issue 34) and the index only by parts, never whole."""
    assert [path for path in spy.paths if path != str(TAIL_PATH)] == [str(segment_path(tail))]
    assert spy.ranges and {path for path, _ in spy.ranges} == {str(INDEX_PATH)}


def assert_index_current(log: Log) -> None:
    """The index on storage now matches the log: a reopen reads only it and the tail."""
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert_reads_index_parts_and_tail(spy, log.segment_count() - 1)
    assert view(box) == view(rebuilt(log.files))


@pytest.fixture
def small_segments(monkeypatch):
    monkeypatch.setattr(mailbox_module, "SEGMENT_BYTES", 2048)


def test_a_reopen_with_a_matching_index_reads_only_the_index_and_the_tail(small_segments):
    log = Log()
    log.post(60)
    log.note("a plain letter is indexed too")
    assert log.segment_count() > 4
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    tail = log.segment_count() - 1
    assert_reads_index_parts_and_tail(spy, tail)
    assert view(box) == view(rebuilt(log.files))
    # a replay of any letter already in the log is a duplicate, an unknown id is not
    for raw in run(box.raw_bytes()).splitlines():
        assert run(box.contains(json.loads(raw)["id"]))
    assert not run(box.contains("0" * 64))


def test_the_index_is_caught_up_from_the_lines_after_it(small_segments):
    """An interrupted append (segments written, the index not yet): the index is still a
    prefix of the log, so the missing lines are replayed, not the whole log."""
    log = Log()
    log.post(40)
    old_index = log.index()
    log.post(45)  # rolls over at least once, rewriting the index
    assert log.index() != old_index
    log.set_index(old_index)
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert view(box) == view(rebuilt(log.files))
    assert str(segment_path(0)) not in spy.paths
    # the caught-up index was written again and now matches the log as it is
    spy.paths.clear()
    again = run(Mailbox.open(spy))
    assert_reads_index_parts_and_tail(spy, log.segment_count() - 1)
    assert view(again) == view(box)
    # and posting goes on from the caught-up heads (the CAS holds)
    log.post(10, box)
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))


def test_a_stale_index_under_a_rewritten_tail_is_detected_and_rebuilt(small_segments):
    log = Log()
    log.post(30)
    del log.files.tree[".voicebox"]["mailbox.index"]
    run(Mailbox.open(log.files))  # an index covering the whole tail, as a rebuild writes it
    stale = log.index()
    tail = log.segment_count() - 1
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = f"{tail:08d}.jsonl"
    lines = bytes(folder[name]).splitlines(keepends=True)
    folder[name] = b"".join(lines[:-1])  # the last letter is gone: another log now
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert str(segment_path(0)) in spy.paths  # rebuilt from the whole log
    assert view(box) == view(rebuilt(log.files))
    assert log.index() != stale


def test_an_index_whose_tail_hash_no_longer_matches_is_rebuilt(small_segments):
    log = Log()
    log.post(30)
    tail = log.segment_count() - 1
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = f"{tail:08d}.jsonl"
    data = bytearray(folder[name])
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")  # same length, other bytes
    folder[name] = bytes(data)
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))
    assert box.skipped == 1


@pytest.mark.parametrize("cut", [1, 100, 0.5])
def test_a_truncated_index_is_detected_and_rebuilt(small_segments, cut):
    log = Log()
    log.post(50)
    whole = log.index()
    keep = int(len(whole) * cut) if isinstance(cut, float) else len(whole) - cut
    log.set_index(whole[:keep])
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert str(segment_path(0)) in spy.paths
    assert view(box) == view(rebuilt(log.files))
    assert_index_current(log)


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b.replace(b'"schema":"voicebox-mailbox-index-v2"', b'"schema":"old"'),
        lambda b: b.replace(b"msn_", b"msX_", 1),
        lambda b: b"",
        lambda b: b"not an index",
    ],
    ids=["other-schema", "body-changed", "empty", "garbage"],
)
def test_an_index_of_another_schema_or_damaged_body_is_rebuilt(small_segments, damage):
    log = Log()
    log.post(25)
    whole = log.index()
    log.set_index(damage(whole))
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))
    assert_index_current(log)


def test_an_old_mailbox_without_an_index_gets_one_on_first_open(small_segments):
    log = Log()
    log.post(20)
    del log.files.tree[".voicebox"]["mailbox.index"]
    box = run(Mailbox.open(log.files))
    assert "mailbox.index" in log.files.tree[".voicebox"]
    assert view(run(Mailbox.open(log.files))) == view(box)


def test_a_foreign_fork_after_the_index_is_settled_by_a_full_rebuild(small_segments):
    """Lines after the index that do not extend their heads (only a foreign writer makes
    them) are not guessed at: the whole log decides, exactly as without an index."""
    log = Log(missions=1)
    log.post(6)
    mission = log.missions[0]
    fork = MissionLetter.model_validate(body(mission, 1, None, 999))  # a second seq 1
    folder = log.files.tree[".voicebox"]["mailbox"]
    name = max(folder)
    folder[name] = bytes(folder[name]) + mailbox_module.encode_line(
        mission_line(fork, "hand-9", AT)
    )
    box = run(Mailbox.open(log.files))
    assert view(box) == view(rebuilt(log.files))
    (state,) = run(box.missions())
    assert state.head.seq == 6 and state.off_chain_count == 1


def test_a_damaged_mission_document_is_refused_then_rebuilt_never_believed(small_segments):
    """A byte changed inside one mission's document (the header and table intact): the
    mission is not decoded from it — ``storage-failed`` — and the next use rebuilds."""
    log = Log(missions=3)
    log.post(30)
    del log.files.tree[".voicebox"]["mailbox.index"]
    run(Mailbox.open(log.files))
    index = bytearray(log.index())
    at = index.rindex(b'"letters":')  # inside the last mission's document
    index[at + 10] = ord("7") if index[at + 10] != ord("7") else ord("8")
    log.set_index(bytes(index))
    cache = MailboxCache()
    box = run(cache.get("p", log.files))
    with pytest.raises(Refused) as refused:
        run(box.missions())
    assert refused.value.code is Code.STORAGE_FAILED
    again = run(cache.get("p", log.files))
    assert again is not box
    assert view(again) == view(rebuilt(log.files))
    assert_index_current(log)


def test_a_first_post_reads_the_index_by_parts_not_whole():
    """Issue 18: a fresh host's first post into a long mailbox reads the index's header,
    fan-out and table, one bucket of ids and the one mission's document — not the index
    whole (whole, it was 9 MB at 100,000 letters). Pure byte counts, no timer."""
    log = Log(missions=120)
    log.post(1200)
    del log.files.tree[".voicebox"]["mailbox.index"]
    run(Mailbox.open(log.files))  # an index covering the whole log (a replay is apart)
    size = len(log.index())
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    mission = log.missions[7]
    seq, prev = log.heads[mission]
    letter = MissionLetter.model_validate(body(mission, seq + 1, prev, 10_001))
    assert not run(box.contains(letter_id(letter)))
    assert run(box.head(mission)).letter.mission_seq == seq
    assert str(INDEX_PATH) not in spy.paths
    read = sum(n for path, n in spy.ranges if path == str(INDEX_PATH))
    table = 1024 + 120 * mailbox_module._ROW.size
    assert read < table + mailbox_module._FIRST_READ + 2048 < size // 4
    assert spy.calls == 4  # header + table, the rest of the table, one id bucket, one document
    run(box.append([mission_line(letter, "hand-1", AT)]))
    assert view(run(Mailbox.open(log.files))) == view(rebuilt(log.files))


def test_an_id_bucket_cut_short_under_an_open_mailbox_is_refused_then_rebuilt():
    """The index shrinks under an open mailbox (a foreign writer): the bucket read comes back
    short, the check is refused ``storage-failed`` — never answered from a partial bucket —
    and the next use rebuilds."""
    log = Log(missions=4)
    log.post(40)
    run(Mailbox.open(log.files))  # writes the index the cached open below reads
    cache = MailboxCache()
    box = run(cache.get("p", log.files))
    some_id = json.loads(run(box.raw_bytes()).splitlines()[0])["id"]
    log.set_index(log.index()[: box._indexed_ids._ids_at])  # the ids and documents gone
    with pytest.raises(Refused) as refused:
        run(box.contains(some_id))
    assert refused.value.code is Code.STORAGE_FAILED
    again = run(cache.get("p", log.files))
    assert again is not box
    assert view(again) == view(rebuilt(log.files))


def test_an_index_over_a_sealed_segment_since_removed_is_rebuilt(small_segments):
    """A sealed segment the index counted is gone (a foreign edit of the log): the index no
    longer describes a prefix of the log, so the whole log decides."""
    log = Log()
    log.post(60)
    assert log.segment_count() > 4
    assert_index_current(log)
    del log.files.tree[".voicebox"]["mailbox"][f"{1:08d}.jsonl"]
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert str(segment_path(0)) in spy.paths  # rebuilt from the whole log
    assert view(box) == view(rebuilt(log.files))
    again = ReadLog(log.files)  # the index written by the rebuild matches the log as it is
    assert view(run(Mailbox.open(again))) == view(box)
    assert_reads_index_parts_and_tail(again, box._tail)


def test_an_index_ahead_of_a_log_cut_back_a_whole_segment_is_rebuilt(small_segments):
    """The log lost its last segment (restored from an older copy): the index names a tail
    that no longer exists and is not believed."""
    log = Log()
    log.post(60)
    folder = log.files.tree[".voicebox"]["mailbox"]
    run(Mailbox.open(log.files))
    del log.files.tree[".voicebox"]["mailbox.index"]
    run(Mailbox.open(log.files))  # an index covering the whole log as it is now
    del folder[max(folder)]
    spy = ReadLog(log.files)
    box = run(Mailbox.open(spy))
    assert str(segment_path(0)) in spy.paths
    assert view(box) == view(rebuilt(log.files))
    assert_index_current(log)
