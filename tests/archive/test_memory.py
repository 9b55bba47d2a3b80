"""An archive carries the project's memory (issue 33 item 3; docs/archives.md §8).

A whole project's export carries its block store and mailbox; the import verifies every chain
and refuses a broken one with the reason, or takes the files only when the person chose so; a
preview says what an import would create, writing nothing; a name a person gives that another
project has is refused so the page can ask; no secret and no host-local record travels.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from core.archive.memory import MemoryRecord, verify_memory
from core.missions.blocks import SKELETON_PATH, SkeletonStore, store_bytes
from core.missions.letters import candidate_id
from core.missions.mailbox import segment_path
from core.refusals import Code, Refused
from tests.archive.kit import (
    MEMORY_FILES,
    memory_of,
    project_with_memory,
    rezip,
    storage,
    tamper_letter,
)
from tests.missions.kit import candidate
from tests.support import HostHarness

SEGMENT = ".voicebox/mailbox/00000000.jsonl"
SKELETON = ".voicebox/skeleton.json"


def _export(h: HostHarness, pid: str, **args: object) -> tuple[dict, bytes]:
    answer, body = h.call("project.export", project=pid, **args)
    assert answer["ok"], answer
    assert body is not None
    return answer["result"], body


def _exported() -> tuple[HostHarness, str, dict, bytes]:
    kit, pid = project_with_memory()
    summary, body = _export(kit.h, pid)
    return kit.h, pid, summary, body


def _mission_heads(h: HostHarness, pid: str) -> list[tuple[str, int, str, str]]:
    heads = h.ok("mailbox.read", project=pid, kind="mission")["heads"]
    return sorted(
        (x["mission_id"], x["letter"]["mission_seq"], x["letter_id"], x["superseded_count"])
        for x in heads
    )


def _tray(h: HostHarness, pid: str) -> tuple[list[tuple[str, str, str]], dict[str, int]]:
    tray = h.ok("tray.read", project=pid)
    cards = sorted((c["mission_id"], c["letter_id"], c["letter"]["phase"]) for c in tray["cards"])
    return cards, tray["counts"]


def test_a_reimported_project_has_the_same_blocks_letters_and_tray() -> None:
    h, pid, summary, body = _exported()
    assert summary["memory"] == {
        "blocks": 1,
        "green": 0,
        "letters": 6,  # four letters of one mission, one of another, one note
        "missions": 2,
        "records": 2,
        "bytes": sum(len(b) for b in memory_of(body).values()),
    }
    assert summary["memory_left_out"] is None
    answer = h.ok("project.import", body, name="The copy")
    copy = answer["project"]["id"]
    assert copy != pid and answer["memory"] == summary["memory"]
    assert h.ok("blocks.get", project=copy)["store"] == h.ok("blocks.get", project=pid)["store"]
    assert _mission_heads(h, copy) == _mission_heads(h, pid)
    assert _tray(h, copy) == _tray(h, pid) and len(_tray(h, pid)[0]) == 2
    notes = h.ok("mailbox.read", project=copy, kind="note")["letters"]
    assert [n["body"] for n in notes] == ["A note."]
    for path, data in MEMORY_FILES.items():
        assert h.call("file.read", project=copy, path=path)[1] == data
    # the copy exports the same memory again, record for record
    _, again = _export(h, copy)
    assert memory_of(again) == memory_of(body)


def test_a_tampered_letter_refuses_the_import_naming_the_broken_mission() -> None:
    h, _, _, body = _exported()
    memory = memory_of(body)
    tampered = rezip(body, {SEGMENT: tamper_letter(memory[SEGMENT], 2, runner_id="evil-1")})
    before = storage(h)
    refusal = h.refused("project.import", tampered, name="Tampered")
    assert refusal["code"] == Code.ARCHIVE_MEMORY_BROKEN
    assert "msn_0000000000a1" in refusal["message"] and "off its chain" in refusal["message"]
    assert storage(h) == before


def test_a_letter_changed_without_its_id_refuses_the_import() -> None:
    h, _, _, body = _exported()
    segment = memory_of(body)[SEGMENT].replace(
        b'"runner_id":"build-1"', b'"runner_id":"build-9"', 1
    )
    refusal = h.refused("project.import", rezip(body, {SEGMENT: segment}), name="Edited")
    assert refusal["code"] == Code.ARCHIVE_MEMORY_BROKEN
    assert "line 1 of mailbox segment 00000000.jsonl" in refusal["message"]


def test_a_block_turned_green_without_a_receipt_refuses_the_import() -> None:
    h, _, _, body = _exported()
    store = json.loads(memory_of(body)[SKELETON])
    store["blocks"][0]["color"] = "green"
    block = store["blocks"][0]["id"]
    tampered = rezip(body, {SKELETON: json.dumps(store).encode()})
    refusal = h.refused("project.import", tampered, name="Green")
    assert refusal["code"] == Code.ARCHIVE_MEMORY_BROKEN
    assert f"block {block} is green with no imported receipt" in refusal["message"]


def test_a_memory_record_changed_behind_the_manifest_refuses_the_import() -> None:
    h, _, _, body = _exported()
    store = memory_of(body)[SKELETON].replace(b"Receipt importer", b"Receipt exporter")
    refusal = h.refused("project.import", rezip(body, {SKELETON: store}, relist=False))
    assert refusal["code"] == Code.ARCHIVE_INVALID and SKELETON in refusal["message"]


def test_a_missing_mailbox_segment_breaks_the_memory() -> None:
    with pytest.raises(Refused) as caught:
        verify_memory([MemoryRecord(segment_path(1), b"")])
    assert caught.value.code == Code.ARCHIVE_MEMORY_BROKEN
    assert "segment 00000000.jsonl is missing" in caught.value.message


def test_confirming_imports_the_files_only_and_says_the_memory_was_left_out() -> None:
    h, _, _, body = _exported()
    memory = memory_of(body)
    tampered = rezip(body, {SEGMENT: tamper_letter(memory[SEGMENT], 2, runner_id="evil-1")})
    answer = h.ok("project.import", tampered, name="Files only", files_only=True)
    copy = answer["project"]["id"]
    assert answer["memory"] is None
    assert "broken" in answer["memory_left_out"] and "Only the files" in answer["memory_left_out"]
    assert answer["files"] == len(MEMORY_FILES)
    assert h.ok("blocks.get", project=copy)["store"] is None
    assert h.ok("mailbox.read", project=copy, kind="mission")["heads"] == []
    assert ".voicebox" not in h.roots.roots[copy].tree or set(
        h.roots.roots[copy].tree[".voicebox"]
    ) <= {"manifest.json"}


def test_no_secret_and_no_host_local_record_travels_in_an_archive() -> None:
    kit, pid = project_with_memory()
    h = kit.h
    h.ok("file.delete", project=pid, path="README.md")  # a record in the project's trash
    names = set(zipfile.ZipFile(io.BytesIO(_export(h, pid)[1])).namelist())
    carried = {n for n in names if n.startswith(".voicebox/")}
    assert carried == {SEGMENT, SKELETON, ".voicebox/archive-manifest.json"}
    # a letter holding a value that became a secret this host keeps after it was sent (a send
    # of a held value is refused): the memory stays behind, said
    secret = "sk-live-" + "9" * 40
    h.ok("mailbox.send", project=pid, agent_id="operator", to="hand-1", text=f"key {secret}")
    h.ctx.secrets.set_group("test-keys", [secret])
    summary, body = _export(h, pid)
    assert secret.encode() not in body
    assert summary["memory"] is None and "secret" in summary["memory_left_out"]
    assert not {n for n in zipfile.ZipFile(io.BytesIO(body)).namelist() if "mailbox" in n}
    exports = [r for r in h.sink.records.values() if r["op"] == "project.export"]
    assert exports[-1]["details"]["memory_left_out"] is True
    assert secret not in json.dumps(exports)


def test_a_folders_archive_carries_no_memory() -> None:
    kit, pid = project_with_memory()
    summary, body = _export(kit.h, pid, folder="src")
    assert summary["memory"] is None
    assert memory_of(body) == {}


def test_the_preview_says_what_the_import_would_create_and_writes_nothing() -> None:
    h, _, _, body = _exported()
    before = storage(h)
    preview = h.ok("project.import_preview", body)
    assert storage(h) == before
    assert preview["name"] == "Repo-B1" and preview["name_taken"] is True
    assert preview["suggested_name"] == "Repo-B1 (2)"
    assert preview["files"] == len(MEMORY_FILES) and preview["folders"] == 1
    assert preview["bytes"] == sum(len(d) for d in MEMORY_FILES.values())
    assert preview["archive_size"] == len(body)
    assert preview["memory"]["letters"] == 6 and preview["memory"]["blocks"] == 1
    assert preview["memory_problem"] is None
    assert any("block store of 1 block" in line for line in preview["creates"])
    memory = memory_of(body)
    tampered = rezip(body, {SEGMENT: tamper_letter(memory[SEGMENT], 2, runner_id="evil-1")})
    broken = h.ok("project.import_preview", tampered)
    assert broken["memory"] is None and "off its chain" in broken["memory_problem"]
    assert storage(h) == before


def test_importing_under_a_name_another_project_has_asks_for_another() -> None:
    h, _, _, body = _exported()
    before = storage(h)
    refusal = h.refused("project.import", body, name="Repo-B1")
    assert refusal["code"] == Code.ALREADY_EXISTS and refusal["field"] == "name"
    assert storage(h) == before
    assert h.ok("project.import", body, name="Repo-B1 copy")["project"]["name"] == "Repo-B1 copy"


def test_a_receipt_whose_candidate_was_edited_breaks_the_memory() -> None:
    block = "sb_000000000001"
    proved = candidate(block)
    store = {
        "schema": "voicebox-skeleton-v1",
        "skeleton_id": "sk_x",
        "store_version": 2,
        "blocks": [{"id": block, "name": "Core", "color": "green"}],
        "receipts": [
            {
                "store_version": 2,
                "block_id": block,
                "candidate": proved,
                "candidate_id": candidate_id(proved),
                "imported_at": "2026-01-01T00:00:00Z",
            }
        ],
    }
    whole = store_bytes(SkeletonStore.model_validate(store))
    assert verify_memory([MemoryRecord(SKELETON_PATH, whole)]).green == 1
    store["receipts"][0]["candidate"] = {**proved, "type": "lint"}
    edited = store_bytes(SkeletonStore.model_validate(store))
    with pytest.raises(Refused) as caught:
        verify_memory([MemoryRecord(SKELETON_PATH, edited)])
    assert caught.value.code == Code.ARCHIVE_MEMORY_BROKEN
    assert "receipt of store version 2 does not match its candidate" in caught.value.message


def test_a_block_name_edited_past_the_name_rule_breaks_the_memory() -> None:
    """A hand-edited store whose block name holds a bidi override (which the page's name rule
    refuses) is not imported as memory: it would read "evil" as "live" (issue 33 item 3)."""
    h, _, _, body = _exported()
    store = json.loads(memory_of(body)[SKELETON])
    store["blocks"][0]["name"] = "Receipt \u202eevil"
    block = store["blocks"][0]["id"]
    tampered = rezip(body, {SKELETON: json.dumps(store).encode()})
    refusal = h.refused("project.import", tampered, name="Spoof")
    assert refusal["code"] == Code.ARCHIVE_MEMORY_BROKEN
    assert f"the name of block {block} breaks the name rule" in refusal["message"]
