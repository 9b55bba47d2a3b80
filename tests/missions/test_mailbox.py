"""The mailbox: append-only segmented JSONL, content ids, dedup, skipped lines, heads, and the
cost of a post (seed 004 §1e, §1h known behaviour, §2; :mod:`core.missions.mailbox`)."""

from __future__ import annotations

import base64
import json

import pytest

import core.missions.mailbox as mailbox_module
from core.missions.letters import letter_id, parse_letter, sha12
from core.missions.mailbox import Mailbox, encode_line, mission_line
from core.model import canonical_json
from tests.missions.kit import HUMAN, M1, M2, Kit, letter, sha256_hex
from tests.support import run

AT = "2026-01-01T00:00:00.000Z"


def foreign_line(body: dict, agent: str = "hand-9") -> bytes:
    """A mission line as some other writer would append it (valid id over ``mission``)."""
    line = {
        "id": sha256_hex(canonical_json(body)),
        "at": AT,
        "kind": "mission",
        "from": agent,
        "mission": body,
    }
    return canonical_json(line) + b"\n"


def full(body: dict) -> dict:
    """The letter as the schema normalises it (what its content id covers)."""
    return parse_letter(body).wire()


# --- the lines ------------------------------------------------------------------------------


def test_each_line_is_canonical_json_with_its_content_id():
    kit = Kit()
    posted = kit.post(kit.letter())
    (raw,) = kit.mailbox_bytes().splitlines()
    line = json.loads(raw)
    assert raw == canonical_json(line)
    assert line["kind"] == "mission"
    assert line["from"] == "hand-1"
    assert line["id"] == posted["letter_id"] == sha256_hex(canonical_json(line["mission"]))


def test_dedup_idempotent():
    """An identical replay is answered, marked duplicate, and appends nothing (§2c)."""
    kit = Kit()
    body = kit.letter()
    first = kit.post(body)
    before = kit.mailbox_bytes()
    again = kit.post(body)
    assert again["duplicate"] is True
    assert again["letter_id"] == first["letter_id"]
    # the same letter from another poster is the same content: still one line
    assert kit.post(body, agent_id="hand-2")["duplicate"] is True
    assert kit.mailbox_bytes() == before
    assert len(before.splitlines()) == 1


def test_a_replay_of_an_older_letter_is_a_duplicate_not_stale():
    kit = Kit()
    body = kit.letter()
    first = kit.post(body)
    kit.post(kit.after(first, "executing"))
    before = kit.mailbox_bytes()
    assert kit.post(body)["duplicate"] is True
    assert kit.mailbox_bytes() == before


def test_dedup_of_plain_letters():
    kit = Kit()
    args = {"agent_id": "operator", "to": "hand-1", "subject": "hello", "text": "read this"}
    first = kit.ok("mailbox.send", **args)
    second = kit.ok("mailbox.send", **args)
    assert (first["duplicate"], second["duplicate"]) == (False, True)
    assert first["id"] == second["id"]
    assert len(kit.mailbox_bytes().splitlines()) == 1


def test_unparseable_line_skipped_head_regresses_without_corruption():
    """A line this version cannot parse (a newer phase, or garbage) is skipped on read, the head
    falls back to the last letter it can parse, and the log keeps every byte (§1h)."""
    kit = Kit()
    merge_wait = kit.chain()
    newer = letter(seq=5, prev=merge_wait["sha12"], phase="merge_wait", block_id=kit.block) | {
        "phase": "shelved"
    }
    kit.append_raw(foreign_line(newer) + b"{torn line without an end\n" + b"\xff\xfe\n")
    log = kit.mailbox_bytes()
    result = kit.ok("mailbox.read", kind="mission")
    assert result["skipped"] == 3
    (head,) = result["heads"]
    assert head["letter_id"] == merge_wait["letter_id"]
    assert head["letter"]["phase"] == "merge_wait"
    assert kit.mailbox_bytes() == log  # reading never rewrites
    # the mailbox stays usable: the next letter extends the head this version sees
    failed = kit.post(kit.after(merge_wait, "failed"))
    assert failed["mission_seq"] == 5
    grown = kit.mailbox_bytes()
    assert grown.startswith(log)
    assert len(grown.splitlines()) == len(log.splitlines()) + 1
    plain = kit.ok("mailbox.read")
    assert plain["skipped"] == 3
    assert len(plain["letters"]) == 5


def test_a_line_whose_id_does_not_match_its_content_is_skipped():
    kit = Kit()
    kit.post(kit.letter())
    forged = json.loads(foreign_line(full(kit.letter(mission=M2))))
    forged["id"] = "0" * 64
    kit.append_raw(canonical_json(forged) + b"\n")
    result = kit.ok("mailbox.read", kind="mission")
    assert [h["mission_id"] for h in result["heads"]] == [M1]
    assert result["skipped"] == 1


def test_lines_without_kind_are_plain_letters():
    kit = Kit()
    kit.post(kit.letter())
    note = {"from": "old-agent", "to": "hand-1", "subject": None, "body": "hi"}
    content = {"kind": "note", **note}
    line = {"id": sha256_hex(canonical_json(content)), "at": AT, **note}
    kit.append_raw(canonical_json(line) + b"\n")
    letters = kit.ok("mailbox.read", kind="note")["letters"]
    assert [(x["from"], x["body"]) for x in letters] == [("old-agent", "hi")]


# --- reads ----------------------------------------------------------------------------------


def test_plain_read_returns_every_letter_in_log_order_and_pages():
    kit = Kit()
    kit.chain(("judging", "executing"))
    kit.ok("mailbox.send", agent_id="operator", to="hand-2", text="for hand-2")
    kit.ok("mailbox.send", agent_id="operator", to="hand-3", text="for hand-3")
    all_letters = kit.ok("mailbox.read")["letters"]
    assert [x["kind"] for x in all_letters] == ["mission", "mission", "note", "note"]
    page1 = kit.ok("mailbox.read", limit=3)
    assert len(page1["letters"]) == 3
    page2 = kit.ok("mailbox.read", limit=3, cursor=page1["next_cursor"])
    assert [x["body"] for x in page2["letters"]] == ["for hand-3"]
    assert page2["next_cursor"] is None
    inbox = kit.ok("mailbox.read", to="hand-2")["letters"]
    assert [x["body"] for x in inbox] == ["for hand-2"]


def test_a_cursor_the_mailbox_did_not_give_is_refused():
    kit = Kit()
    assert kit.refused("mailbox.read", cursor="../0")["code"] == "args-invalid"


def test_mission_read_gives_one_head_per_mission_with_an_honest_superseded_count():
    kit = Kit()
    kit.chain(("judging", "executing", "gate"), mission=M1)
    kit.chain(("judging",), mission=M2)
    result = kit.ok("mailbox.read", kind="mission")
    assert result["missions"] == 2
    heads = {h["mission_id"]: h for h in result["heads"]}
    assert (heads[M1]["superseded_count"], heads[M2]["superseded_count"]) == (2, 0)
    assert heads[M1]["letter"]["phase"] == "gate"
    assert [h["mission_id"] for h in result["heads"]] == [M2, M1]  # most recently moved first


def test_the_longest_valid_chain_wins_and_forks_are_counted_off_chain():
    kit = Kit()
    first = kit.post(kit.letter())
    second = kit.post(kit.after(first, "executing"))
    # a foreign writer forks at seq 2 and grows its branch to seq 3; a broken link hangs loose
    fork2 = full(kit.after(first, "failed"))
    fork3 = full(kit.letter(seq=3, prev=sha12(letter_id(parse_letter(fork2))), phase="review"))
    loose = full(kit.letter(seq=4, prev="ffffffffffff", phase="gate"))
    kit.append_raw(foreign_line(fork2) + foreign_line(fork3) + foreign_line(loose))
    (head,) = kit.ok("mailbox.read", kind="mission")["heads"]
    assert head["letter"]["mission_seq"] == 3
    assert head["letter"]["phase"] == "review"
    assert head["superseded_count"] == 2
    assert head["off_chain_count"] == 2  # the losing seq-2 letter and the loose seq-4 letter
    # the CAS now guards the longer chain: extending the old seq-2 head is stale
    refusal = kit.refused("mission.post", agent_id="hand-1", letter=kit.after(second, "gate"))
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_seq"] == 3


def test_on_a_tie_the_letter_earlier_in_the_log_is_the_head():
    kit = Kit()
    first = kit.post(kit.letter())
    second = kit.post(kit.after(first, "executing"))
    kit.append_raw(foreign_line(full(kit.after(first, "failed"))))
    (head,) = kit.ok("mailbox.read", kind="mission")["heads"]
    assert head["letter_id"] == second["letter_id"]
    assert head["off_chain_count"] == 1


def test_a_letter_completing_a_broken_link_lengthens_the_chain_after_reopen_and_live():
    kit = Kit()
    first_body = kit.letter()
    first_full = full(first_body)
    first_id = letter_id(parse_letter(first_body))
    # seq 2 and 3 were written, but seq 1 never reached this log
    second = full(kit.letter(seq=2, prev=sha12(first_id), phase="executing"))
    third = full(kit.letter(seq=3, prev=sha12(letter_id(parse_letter(second))), phase="gate"))
    kit.post(kit.letter(mission=M2))
    kit.append_raw(foreign_line(second) + foreign_line(third))
    assert M1 not in kit.heads()
    kit.post(first_full)  # the missing first letter arrives
    assert kit.heads()[M1]["letter"]["mission_seq"] == 3
    reopened = run(Mailbox.open(kit.files))
    assert run(reopened.head(M1)).letter.mission_seq == 3


# --- storage --------------------------------------------------------------------------------


def test_segments_roll_over_and_sealed_segments_never_change(monkeypatch):
    monkeypatch.setattr(mailbox_module, "SEGMENT_BYTES", 4096)
    kit = Kit()
    head = kit.post(kit.letter())
    for n in range(40):
        head = kit.post(kit.after(head, "executing", tokens_total=n))
    segments = kit.segments()
    assert len(segments) > 3
    assert list(segments) == [f"{i:08d}.jsonl" for i in range(len(segments))]
    sealed = dict(list(segments.items())[:-1])
    for data in list(segments.values())[:-1]:
        assert len(data) <= 4096
    for n in range(10):
        head = kit.post(kit.after(head, "executing", tokens_total=100 + n))
    now = kit.segments()
    assert {name: now[name] for name in sealed} == sealed
    assert kit.heads()[M1]["letter"]["mission_seq"] == 51
    reopened = run(Mailbox.open(kit.files))
    assert run(reopened.head(M1)).letter_id == head["letter_id"]
    assert reopened.letters == 51


def test_reopening_reparses_to_the_same_heads():
    kit = Kit()
    kit.chain(mission=M1)
    kit.chain(("judging", "failed"), mission=M2)
    live = kit.heads()
    reopened = run(Mailbox.open(kit.files))
    assert {s.head.letter.mission_id: s.head.letter_id for s in run(reopened.missions())} == {
        m: h["letter_id"] for m, h in live.items()
    }


def test_a_second_host_on_the_same_storage_sees_and_respects_the_first_hosts_posts():
    """The cached index is checked before each use: a write it did not make reopens it."""
    kit = Kit()
    first = kit.post(kit.letter())
    line = mission_line(parse_letter(kit.after(first, "executing")), "other-host", AT)
    kit.append_raw(encode_line(line))
    refusal = kit.refused("mission.post", agent_id="hand-1", letter=kit.after(first, "failed"))
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_letter_id"] == line.id


class CountingFiles:
    """Wraps a ProjectFiles and counts bytes read and written and folder listings."""

    def __init__(self, inner):
        self.inner = inner
        self.read_bytes = 0
        self.written_bytes = 0
        self.listings = 0

    async def read(self, path):
        data = await self.inner.read(path)
        self.read_bytes += len(data)
        return data

    async def write(self, path, data):
        self.written_bytes += len(data)
        await self.inner.write(path, data)

    async def stat(self, path):
        return await self.inner.stat(path)

    async def list_dir(self, folder):
        self.listings += 1
        return await self.inner.list_dir(folder)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.parametrize("letters", [10, 400])
def test_a_post_never_rescans_the_mailbox(letters):
    """Posting costs the same storage work at any mailbox length (O(1) amortised, §2c)."""
    from core.missions.posting import post_mission_letter

    kit = Kit(store=False)
    head = kit.post(kit.letter())
    for n in range(letters - 1):
        head = kit.post(kit.after(head, "executing", tokens_total=n))
    files = CountingFiles(kit.files)
    box = run(Mailbox.open(files))
    files.read_bytes = files.written_bytes = files.listings = 0
    for n in range(20):
        body = kit.after(head, "executing", tokens_total=10_000 + n)
        posted = run(
            post_mission_letter(
                box,
                body,
                agent_id="hand-1",
                brain=kit.letter()["brain_ref"],
                store=None,
                now_ms=0,
            )
        )
        head = {
            "mission_id": M1,
            "mission_seq": posted.letter.mission_seq,
            "sha12": sha12(posted.letter_id),
        }
        assert run(box.is_current())
    assert files.read_bytes == 0
    assert files.listings == 0
    assert files.written_bytes <= 20 * (mailbox_module.SEGMENT_BYTES + 2048)


def test_a_refused_archive_leaves_every_segment_identical():
    kit = Kit()
    merge_wait = kit.chain()
    segments = kit.segments()
    kit.refused("mission.post", agent_id="hand-1", letter=kit.after(merge_wait, "archived"))
    assert kit.segments() == segments
    kit.ok(
        "mission.post",
        HUMAN,
        agent_id="operator",
        letter=kit.after(merge_wait, "archived"),
        archived_via=HUMAN,
    )
    assert kit.segments() != segments


def test_a_plain_page_is_bounded_in_bytes_and_continues(monkeypatch):
    monkeypatch.setattr(mailbox_module, "MAX_PAGE_BYTES", 600)
    kit = Kit()
    for n in range(3):
        kit.ok("mailbox.send", agent_id="operator", to="hand-1", text=f"{n} " + "x" * 400)
    first = kit.ok("mailbox.read")
    assert [x["body"][0] for x in first["letters"]] == ["0", "1"]
    rest = kit.ok("mailbox.read", cursor=first["next_cursor"])
    assert [x["body"][0] for x in rest["letters"]] == ["2"]


def test_a_plain_letter_never_carries_a_secret_this_host_holds():
    """``mailbox.send`` refuses ``sanitizer_refused`` on the field holding a held value — the
    text or the subject, in any form the redactor knows — names no value, and writes nothing;
    the same note without it is sent (issue 31's packet law, for plain letters too)."""
    kit = Kit()
    secret = "sk-live-" + "7" * 40
    kit.h.ctx.secrets.set_group("test-keys", [secret])
    before = kit.mailbox_bytes()
    for field, args in (
        ("text", {"text": f"use {secret} please"}),
        ("subject", {"subject": f"key {secret}", "text": "see subject"}),
        ("text", {"text": f"base64 {base64.b64encode(secret.encode()).decode()}"}),
    ):
        refusal = kit.refused("mailbox.send", agent_id="operator", to="hand-1", **args)
        assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", field)
        assert secret not in json.dumps(refusal)
    assert kit.mailbox_bytes() == before
    assert kit.ok("mailbox.send", agent_id="operator", to="hand-1", text="no key here")["id"]
