"""Import in batches (issue 34): a 10,000-file zip is handed to storage a batch at a time, each
entry of the archive is inflated and hashed once, and every law of SPEC §10 holds as before —
each file read back from storage must have the archive's sha256, and any failure inside a batch
leaves nothing the import wrote."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Sequence

import pytest

from core.archive.apply import IMPORT_BATCH_BYTES, IMPORT_BATCH_FILES, apply_import
from core.archive.plan import plan_import
from core.memory.adapters import MemoryProjectFiles, MemoryProjectRoots
from core.paths import ProjectPath, parse_path
from core.ports import WritesMany, WrittenMany
from core.refusals import Code, Refused
from tests.archive.kit import export, new_project, project, tree
from tests.support import HostHarness, run


class BatchFiles(MemoryProjectFiles):
    """A storage that :class:`~core.ports.WritesMany`: records each batch and each single
    write; ``corrupt`` (a path) reads back other bytes, ``fail_at`` (the n-th file of the
    whole import, from 1) refuses ``storage-quota-exceeded`` there and starts no more."""

    def __init__(self, *, corrupt: str | None = None, fail_at: int | None = None) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.single_writes = 0
        self.corrupt = corrupt
        self.fail_at = fail_at
        self.files_seen = 0

    async def write(self, path: ProjectPath, data: bytes) -> None:
        self.single_writes += 1
        await super().write(path, data)

    async def write_many(
        self, items: Sequence[tuple[ProjectPath, int]], body: bytes
    ) -> WrittenMany:
        self.batches.append(len(items))
        read_back: list[str | None] = [None] * len(items)
        offset = 0
        for index, (path, size) in enumerate(items):
            self.files_seen += 1
            if self.files_seen == self.fail_at:
                return WrittenMany(tuple(read_back), Refused(Code.STORAGE_QUOTA_EXCEEDED))
            await MemoryProjectFiles.write(self, path, body[offset : offset + size])
            offset += size
            stored = await self.read(path)
            if str(path) == self.corrupt:
                stored = b"x" + stored
            read_back[index] = hashlib.sha256(stored).hexdigest()
        return WrittenMany(tuple(read_back), None)


def many(count: int) -> dict[str, bytes]:
    return {f"d{n // 100:03d}/f{n:05d}.txt": f"line {n}\n".encode() for n in range(count)}


def test_an_import_hands_storage_its_files_a_batch_at_a_time_not_one_call_per_file() -> None:
    files = many(2_500)
    plan = plan_import(export(project(files))[0])
    target = BatchFiles()
    assert isinstance(target, WritesMany)
    written = run(apply_import(plan, target))
    assert written.files == 2_500
    assert target.batches == [IMPORT_BATCH_FILES, IMPORT_BATCH_FILES, 500]
    assert target.single_writes == 0
    assert {k: v for k, v in tree(target).items() if v is not None} == files


def test_a_batch_holds_at_most_its_bytes_and_a_larger_file_goes_alone() -> None:
    big = IMPORT_BATCH_BYTES // 2 + 1
    files = {"a.bin": b"a" * big, "b.bin": b"b" * big, "c.txt": b"c", "d.bin": b"d" * (2 * big)}
    plan = plan_import(export(project(files))[0])
    target = BatchFiles()
    run(apply_import(plan, target))
    assert target.batches == [1, 2, 1]  # a | b + c | d (over the bound: alone)
    assert {k: v for k, v in tree(target).items() if v is not None} == files


def test_a_file_a_batch_reads_back_otherwise_refuses_storage_failed_and_leaves_nothing() -> None:
    plan = plan_import(export(project(many(1_200)))[0])
    target = BatchFiles(corrupt="d011/f01150.txt")
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_FAILED
    assert "d011/f01150.txt" in caught.value.message
    assert tree(target, meta=True) == {}


@pytest.mark.parametrize("fail_at", [1, 700, 1_001, 1_200])
def test_a_failure_inside_a_batch_removes_every_file_the_import_wrote(fail_at: int) -> None:
    plan = plan_import(export(project(many(1_200)))[0])
    target = BatchFiles(fail_at=fail_at)
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_QUOTA_EXCEEDED
    assert tree(target, meta=True) == {}


def test_an_import_inflates_and_hashes_each_entry_of_the_archive_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = many(300)
    data = export(project(files))[0]
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def counting_open(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(name.orig_filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", counting_open)
    target = MemoryProjectFiles()
    run(apply_import(plan_import(data), target))
    assert sorted(opened) == sorted({*opened})  # no entry opened twice
    assert set(files) <= set(opened)
    assert {k: v for k, v in tree(target).items() if v is not None} == files


def test_a_deflated_archive_imports_byte_for_byte_from_its_plan() -> None:
    files = {"a/x.txt": b"hello " * 5_000, "b.bin": bytes(range(256)) * 40, "c.txt": b""}
    buf = __import__("io").BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    plan = plan_import(buf.getvalue())
    for target in (MemoryProjectFiles(), BatchFiles()):
        run(apply_import(plan, target))
        assert {k: v for k, v in tree(target).items() if v is not None} == files


def test_the_file_by_file_way_reads_back_and_refuses_as_the_batch_does() -> None:
    class Flipping(MemoryProjectFiles):
        async def write(self, path, data) -> None:  # type: ignore[no-untyped-def]
            await super().write(path, data[::-1])

    plan = plan_import(export(project({"a.txt": b"ab", "b/c.txt": b"cd"}))[0])
    target = Flipping()
    assert not isinstance(target, WritesMany)
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_FAILED
    assert tree(target, meta=True) == {}
    assert parse_path("a.txt")  # the paths are the plan's own


def test_project_import_reaches_the_storages_batch_writes_through_the_hosts_wrappers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the host wraps every project's files (kept listings, core.projects.listing_cache): the
    # batches must pass through them, and the listing shown afterwards must hold the files
    made: list[BatchFiles] = []

    async def create(self: MemoryProjectRoots, project_id: str) -> MemoryProjectFiles:
        root = self.roots[project_id] = BatchFiles()
        made.append(root)
        return root

    h = HostHarness()
    files = many(1_500)
    source = new_project(h, "Source", {})
    for name, data in files.items():
        run(h.roots.roots[source].write(parse_path(name), data))
    _, body = h.call("project.export", project=source)
    monkeypatch.setattr(MemoryProjectRoots, "create", create)
    answer = h.ok("project.import", body, name="Copy")
    assert answer["files"] == 1_500
    (target,) = made
    assert target.batches == [IMPORT_BATCH_FILES, 500] and target.single_writes == 1  # manifest
    listed = h.ok("file.list", project=answer["project"]["id"], folder="d014")["entries"]
    assert [e["name"] for e in listed] == [f"f{n:05d}.txt" for n in range(1_400, 1_500)]
