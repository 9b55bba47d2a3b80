"""Many new files under one call (issue 34; core/projects/batch_write.py): each file atomic,
nothing overwritten, one audit record naming the batch, a receipt per file, nothing lost when
the storage refuses part-way."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from core.ports import WrittenMany
from core.refusals import Code, Refused
from tests.support import HostHarness


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def batch(h: HostHarness, pid: str, files: dict[str, bytes]) -> dict[str, Any]:
    body = b"".join(files.values())
    listed = [{"path": p, "size": len(b)} for p, b in files.items()]
    return h.ok("file.write_batch", body, project=pid, files=listed)


def all_records(h: HostHarness) -> list[dict[str, Any]]:
    return [h.sink.records[seq] for seq in sorted(h.sink.records)]


def records(h: HostHarness, op: str) -> list[dict[str, Any]]:
    return [r for r in all_records(h) if r["op"] == op]


def test_a_batch_of_new_files_is_one_audit_record_with_a_receipt_per_file(
    h: HostHarness,
) -> None:
    pid = h.ok("project.create", name="p")["project"]["id"]
    files = {f"up/d{n // 10}/f{n}.txt": f"line {n}\n".encode() for n in range(25)}
    before = len(all_records(h))
    done = batch(h, pid, files)
    added = all_records(h)[before:]
    assert [w["path"] for w in done["written"]] == list(files)
    for w in done["written"]:
        assert w["sha256"] == hashlib.sha256(files[w["path"]]).hexdigest()
        assert w["size"] == len(files[w["path"]])
        assert h.call("file.read", project=pid, path=w["path"])[1] == files[w["path"]]
    assert done["conflicts"] == [] and done["stopped"] is False
    assert [r["op"] for r in added] == ["file.write_batch"]
    (record,) = added
    lines = "".join(f"{w['sha256']} {w['size']} {w['path']}\n" for w in done["written"])
    assert record["details"]["manifest_sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert record["details"]["manifest_sha256"] == done["manifest_sha256"]
    assert record["details"]["files"] == 25 and record["details"]["bytes"] == sum(
        map(len, files.values())
    )
    assert records(h, "file.write") == []
    assert h.ok("audit.verify")["ok"] is True


def test_a_batch_never_overwrites_and_answers_every_file_it_did_not_write(
    h: HostHarness,
) -> None:
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.write", b"mine", project=pid, path="a/taken.txt")
    h.ok("file.mkdir", project=pid, path="a/folder.txt")
    h.ok("file.write", b"caf", project=pid, path="caf\u00e9.txt")
    files = {
        "a/new.txt": b"new",
        "a/taken.txt": b"theirs",
        "a/folder.txt": b"x",
        "a/taken.txt/below.txt": b"y",
        "../out.txt": b"z",
        "cafe\u0301.txt": b"nfd",
        "b/other.txt": b"other",
    }
    done = batch(h, pid, files)
    assert [w["path"] for w in done["written"]] == ["a/new.txt", "b/other.txt"]
    codes = {c["path"]: c["code"] for c in done["conflicts"]}
    assert codes == {
        "a/taken.txt": "already-exists",
        "a/folder.txt": "is-a-directory",
        "a/taken.txt/below.txt": "not-a-directory",
        "../out.txt": "path-outside-root",
        "cafe\u0301.txt": "path-nfc-collision",
    }
    assert [c["index"] for c in done["conflicts"]] == [1, 2, 3, 4, 5]
    assert h.call("file.read", project=pid, path="a/taken.txt")[1] == b"mine"
    assert h.call("file.read", project=pid, path="caf\u00e9.txt")[1] == b"caf"


def test_sizes_that_do_not_add_up_to_the_body_write_nothing(h: HostHarness) -> None:
    pid = h.ok("project.create", name="p")["project"]["id"]
    refusal = h.refused(
        "file.write_batch", b"abc", project=pid, files=[{"path": "x.txt", "size": 4}]
    )
    assert refusal["code"] == "args-invalid"
    assert h.ok("file.walk", project=pid)["files"] == []


def test_a_storage_refusal_mid_batch_keeps_what_was_written_and_names_the_rest(
    h: HostHarness,
) -> None:
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.list", project=pid)
    root = h.roots.roots[pid]
    real_write = type(root).write
    count = {"n": 0}

    async def full_after_three(self: Any, path: Any, data: bytes) -> None:
        count["n"] += 1
        if count["n"] > 3:
            raise Refused(Code.STORAGE_QUOTA_EXCEEDED, "The disk is full.")
        await real_write(self, path, data)

    type(root).write = full_after_three  # type: ignore[method-assign]
    try:
        done = batch(h, pid, {f"f{n}.txt": b"x" * n for n in range(1, 7)})
    finally:
        type(root).write = real_write  # type: ignore[method-assign]
    assert [w["path"] for w in done["written"]] == ["f1.txt", "f2.txt", "f3.txt"]
    assert done["stopped"] is True
    assert [(c["path"], c["code"]) for c in done["conflicts"]] == [
        (f"f{n}.txt", "storage-quota-exceeded") for n in range(4, 7)
    ]
    walked = [f["path"] for f in h.ok("file.walk", project=pid)["files"]]
    assert walked == ["f1.txt", "f2.txt", "f3.txt"]
    (record,) = records(h, "file.write_batch")
    assert record["details"]["files"] == 3 and record["details"]["stopped"] is True


def test_a_folder_upload_is_written_through_the_imports_one_write_path(h: HostHarness) -> None:
    # issue 34 (stop 41): file.write_batch hands its files to write_many — the import's batch
    # write (in the browser one writeMany call) — never file by file through ProjectFiles.write
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.list", project=pid)
    root = h.roots.roots[pid]
    kind = type(root)
    calls: dict[str, list[int]] = {"write_many": [], "write": []}
    real_write = kind.write

    async def write_many(
        self: Any, items: Any, body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        calls["write_many"].append(len(items))
        assert not in_place  # a project people see: each file through a temporary and its move
        read_back: list[str | None] = []
        offset = 0
        for path, size in items:
            data = body[offset : offset + size]
            offset += size
            await real_write(self, path, data)
            read_back.append(hashlib.sha256(data).hexdigest())
        return WrittenMany(tuple(read_back), None)

    async def write(self: Any, path: Any, data: bytes) -> None:
        calls["write"].append(len(data))
        await real_write(self, path, data)

    kind.write_many = write_many  # type: ignore[attr-defined]
    kind.write = write  # type: ignore[method-assign]
    try:
        files = {f"up/d{n // 10}/f{n}.txt": f"line {n}\n".encode() for n in range(25)}
        done = batch(h, pid, files)
    finally:
        del kind.write_many  # type: ignore[attr-defined]
        kind.write = real_write  # type: ignore[method-assign]
    assert [w["path"] for w in done["written"]] == list(files)
    assert calls["write"] == []
    assert calls["write_many"] == [1, 24]  # the first file alone (AdoptOnWrite), then the rest
    walked = {f["path"] for f in h.ok("file.walk", project=pid)["files"]}
    assert walked == set(files)


def test_an_uploaded_file_that_does_not_read_back_as_sent_is_removed_and_not_answered_written(
    h: HostHarness,
) -> None:
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.list", project=pid)
    root = h.roots.roots[pid]
    kind = type(root)
    real_write = kind.write

    async def write_many(
        self: Any, items: Any, body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        read_back: list[str | None] = []
        offset = 0
        for path, size in items:
            data = body[offset : offset + size]
            offset += size
            await real_write(self, path, data)
            bad = path.name == "f3.txt"  # the storage kept other bytes than were sent
            read_back.append(hashlib.sha256(b"other" if bad else data).hexdigest())
        return WrittenMany(tuple(read_back), None)

    kind.write_many = write_many  # type: ignore[attr-defined]
    try:
        done = batch(h, pid, {f"f{n}.txt": b"x" * n for n in range(1, 5)})
    finally:
        del kind.write_many  # type: ignore[attr-defined]
    assert [w["path"] for w in done["written"]] == ["f1.txt", "f2.txt", "f4.txt"]
    assert [(c["path"], c["code"]) for c in done["conflicts"]] == [("f3.txt", "storage-failed")]
    assert done["stopped"] is True
    walked = [f["path"] for f in h.ok("file.walk", project=pid)["files"]]
    assert walked == ["f1.txt", "f2.txt", "f4.txt"]
