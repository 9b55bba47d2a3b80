"""Import in batches (issue 34): a 10,000-file zip is handed to storage a batch at a time, each
entry of the archive is inflated and hashed once, and every law of SPEC §10 holds as before —
each file read back from storage must have the archive's sha256, and any failure inside a batch
leaves nothing the import wrote."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from collections import Counter
from collections.abc import Sequence

import pytest

from core.archive import plan as plan_module
from core.archive.apply import IMPORT_BATCH_BYTES, IMPORT_BATCH_FILES, apply_import
from core.archive.plan import plan_import
from core.memory.adapters import MemoryProjectFiles, MemoryProjectRoots
from core.paths import ProjectPath, parse_path
from core.ports import WritesMany, WrittenMany
from core.refusals import Code, Refused
from tests.archive.kit import export, new_project, project, tree
from tests.support import HostHarness, run


class BatchFiles(MemoryProjectFiles):
    """A storage that :class:`~core.ports.WritesMany`: records each batch (its size and whether
    it was asked ``in_place``) and each single write; ``corrupt`` (a path) reads back other
    bytes, ``fail_at`` (the n-th file of the whole import, from 1) refuses
    ``storage-quota-exceeded`` there and starts no more."""

    def __init__(self, *, corrupt: str | None = None, fail_at: int | None = None) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.in_place: list[bool] = []
        self.single_writes = 0
        self.corrupt = corrupt
        self.fail_at = fail_at
        self.files_seen = 0

    async def write(self, path: ProjectPath, data: bytes) -> None:
        self.single_writes += 1
        await super().write(path, data)

    async def write_many(
        self, items: Sequence[tuple[ProjectPath, int]], body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        self.batches.append(len(items))
        self.in_place.append(in_place)
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
    assert target.in_place == [False, False, False]  # not staged: each file through a temporary
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
    real_read = plan_module.read_entry

    def counting_read(data, info, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(info.orig_filename)
        return real_read(data, info, *args, **kwargs)

    monkeypatch.setattr(plan_module, "read_entry", counting_read)
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
    assert target.in_place == [True, True]  # a staged root: written in place (stop 43)
    listed = h.ok("file.list", project=answer["project"]["id"], folder="d014")["entries"]
    assert [e["name"] for e in listed] == [f"f{n:05d}.txt" for n in range(1_400, 1_500)]


def test_a_staged_import_written_in_place_that_fails_mid_batch_leaves_no_project_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # in place, a file cut short stays at its own name until the staged root goes: the import
    # must remove the whole root, so the roots and the project list are as before
    made: list[BatchFiles] = []

    async def create(self: MemoryProjectRoots, project_id: str) -> MemoryProjectFiles:
        root = self.roots[project_id] = BatchFiles(fail_at=1_200)
        made.append(root)
        return root

    h = HostHarness()
    source = new_project(h, "Source", {})
    for name, data in many(1_500).items():
        run(h.roots.roots[source].write(parse_path(name), data))
    _, body = h.call("project.export", project=source)
    before = h.ok("project.list")["projects"]
    monkeypatch.setattr(MemoryProjectRoots, "create", create)
    refusal = h.refused("project.import", body, name="Copy")
    assert refusal["code"] == "storage-quota-exceeded"
    (target,) = made
    assert target.in_place == [True, True]  # it was written in place, and failed in batch 2
    assert list(h.roots.roots) == [source]
    assert h.ok("project.list")["projects"] == before


class FolderCountingFiles(BatchFiles):
    """A :class:`BatchFiles` that counts ``mkdir`` calls and folder listings."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.mkdirs: list[str] = []
        self.listed: list[str] = []

    async def mkdir(self, path: ProjectPath) -> None:
        self.mkdirs.append(str(path))
        await super().mkdir(path)

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        self.listed.append("/".join(folder))
        return await super().names(folder)


def test_an_import_makes_its_files_folders_with_their_batch_not_one_call_per_folder() -> None:
    # issue 34: 10,000 files in 100 folders paid 100 mkdir calls (and 100 listings) first
    files = many(2_500)
    plan = plan_import(export(project(files, folders=["empty/inner", "d003/none"]))[0])
    target = FolderCountingFiles()
    written = run(apply_import(plan, target))
    assert target.mkdirs == ["empty", "d003/none", "empty/inner"]  # no file lies in these
    assert target.listed == [""]  # only the root: nothing planned can be taken below it
    assert written.folders == 25 + 3
    got = tree(target)
    assert {k: v for k, v in got.items() if v is not None} == files
    assert got["empty/inner"] is None and got["d003/none"] is None


def test_a_failure_removes_the_folders_the_batches_made_and_keeps_those_that_were_there() -> None:
    target = FolderCountingFiles(fail_at=1_250)
    run(target.write(parse_path("d005/keep.txt"), b"mine"))
    plan = plan_import(export(project(many(2_500)))[0])
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_QUOTA_EXCEEDED
    assert tree(target, meta=True) == {"d005": None, "d005/keep.txt": b"mine"}
    assert sorted(target.listed) == ["", "d005"]  # an existing folder is read, once


def _calls_of_a_plan(data: bytes) -> tuple[int, Counter[str]]:
    """Python function calls made while planning ``data``: the total and per function name."""
    names: Counter[str] = Counter()

    def count(frame, event, arg) -> None:  # type: ignore[no-untyped-def]
        if event == "call":
            names[frame.f_code.co_name] += 1

    sys.setprofile(count)
    try:
        plan_import(data)
    finally:
        sys.setprofile(None)
    return sum(names.values()), names


def test_a_plan_over_10000_entries_is_linear_and_checks_each_distinct_segment_once() -> None:
    # issue 34: each entry was opened through zipfile (a copy of its header, a decompressor)
    # and each of its path's segments checked again — ≈ 210 calls an entry
    half = export(project(many(5_000)))[0]
    whole = export(project(many(10_000)))[0]
    calls_half, _ = _calls_of_a_plan(half)
    calls, by_name = _calls_of_a_plan(whole)
    assert calls <= 2.05 * calls_half  # linear: twice the entries, twice the work
    assert calls <= 100 * 10_000
    assert by_name["_check_segment"] == 10_000 + 100  # each file's name, each folder once
    assert by_name["open"] == 0  # no zipfile entry opened: read from the archive's bytes
