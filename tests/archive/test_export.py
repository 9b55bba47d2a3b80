"""Export: a deterministic zip with a manifest, readable by any zip reader (SPEC §10)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Sequence

import pytest

from core.archive.export import (
    MAX_LEFT_OUT,
    ChunkRelay,
    ExportSource,
    download_filename,
    export_archive,
)
from core.archive.manifest import FIXED_DATE_TIME, MANIFEST_NAME, ArchiveManifest
from core.memory.adapters import MemoryProjectFiles
from core.paths import parse_path
from core.ports import Entry, ProjectFiles, Relayed, RelayItem, Sink
from core.projects.case_guard import CaseGuard
from core.refusals import Code, Refused
from core.time import instant_iso as iso_instant
from tests.archive.kit import (
    BINARY,
    ENV_KEY,
    NOW_MS,
    SOURCE,
    UNICODE_PATH,
    export,
    mem_path,
    project,
    sample,
)
from tests.support import run


def test_two_exports_of_the_same_project_are_byte_identical() -> None:
    files = sample()
    first, _, _ = export(files)
    second, _, _ = export(files)
    assert first == second


def test_export_does_not_depend_on_the_order_files_were_written() -> None:
    content = {"b/2.txt": b"2", "a.txt": b"1", "b/1.txt": b"11", "Z.txt": b"z", "é.txt": b"e"}
    forward = project(content)
    backward = project(dict(reversed(list(content.items()))))
    assert export(forward)[0] == export(backward)[0]


def test_same_project_exported_at_another_time_differs_only_by_its_manifest() -> None:
    files = sample()
    early, _, _ = export(files)
    late, _, _ = export(files, ExportSource(SOURCE.name, NOW_MS + 1, ENV_KEY, SOURCE.project_id))
    assert early != late
    a, b = zipfile.ZipFile(io.BytesIO(early)), zipfile.ZipFile(io.BytesIO(late))
    assert a.namelist() == b.namelist()
    for name in a.namelist()[:-1]:
        assert a.read(name) == b.read(name)
    assert json.loads(b.read(MANIFEST_NAME))["exported_at"] == iso_instant(NOW_MS + 1)


def test_entries_are_sorted_by_name_and_the_manifest_is_last() -> None:
    data, _, _ = export(sample())
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert names[-1] == MANIFEST_NAME
    assert names[:-1] == sorted(names[:-1])
    assert names[:-1] == [
        "README.md",
        "assets/logo.bin",
        "docs/a b/c.txt",
        "empty/inner/",
        UNICODE_PATH,
    ]


def test_every_entry_has_fixed_time_attributes_and_a_utf8_flagged_name() -> None:
    data, _, _ = export(sample())
    for zi in zipfile.ZipFile(io.BytesIO(data)).infolist():
        assert zi.date_time == FIXED_DATE_TIME
        assert zi.create_system == 3
        assert zi.flag_bits & 0x800, zi.filename
        assert zi.compress_type == zipfile.ZIP_STORED
        if zi.is_dir():
            assert zi.external_attr >> 16 == 0o040755
        else:
            assert zi.external_attr >> 16 == 0o100644


def test_utf8_flag_is_in_the_bytes_of_every_local_and_central_header() -> None:
    data, _, _ = export(sample())
    count = len(zipfile.ZipFile(io.BytesIO(data)).namelist())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        starts = [i for i in range(len(data)) if data.startswith(signature, i)]
        assert len(starts) == count
        for start in starts:
            flags = int.from_bytes(data[start + flag_at : start + flag_at + 2], "little")
            assert flags & 0x800


def test_python_zipfile_opens_the_export_and_the_manifest_sha256s_match() -> None:
    files = sample()
    data, summary, _ = export(files)
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    manifest = json.loads(archive.read(MANIFEST_NAME))
    assert manifest["schema"] == "voicebox-archive-v1"
    assert manifest["name"] == SOURCE.name
    assert manifest["source_env_key"] == ENV_KEY
    assert manifest["source_project"] == SOURCE.project_id
    assert manifest["exported_at"] == "2026-01-01T00:00:00.000Z"
    assert manifest["folders"] == ["empty/inner"]
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == {UNICODE_PATH, "assets/logo.bin", "README.md", "docs/a b/c.txt"}
    for path, item in listed.items():
        content = archive.read(path)
        assert content == run(files.read(parse_path(path)))
        assert item["size"] == len(content)
        assert item["sha256"] == hashlib.sha256(content).hexdigest()
    assert manifest["total_bytes"] == sum(f["size"] for f in manifest["files"])
    assert summary.files == 4 and summary.folders == 1 and summary.skipped == 0
    assert summary.bytes == manifest["total_bytes"]


def test_summary_describes_the_archive_bytes() -> None:
    data, summary, _ = export(sample())
    assert summary.size == len(data)
    manifest = zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST_NAME)
    assert summary.manifest_sha256 == hashlib.sha256(manifest).hexdigest()
    assert summary.name == SOURCE.name
    assert summary.filename == "Проект-ü-📦.zip"


def test_manifest_entry_is_the_manifest_model_serialised_canonically() -> None:
    data, _, _ = export(sample())
    raw = zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST_NAME)
    assert ArchiveManifest.model_validate_json(raw).to_bytes() == raw
    assert raw.endswith(b"}\n")


def test_project_metadata_and_write_temporaries_are_not_exported() -> None:
    files = sample()

    async def add() -> None:
        await files.write(parse_path(".voicebox/manifest.json", allow_meta=True), b"{}")
        await files.write(parse_path(".voicebox/mailbox/00000000.jsonl", allow_meta=True), b"x")
        await files.write(mem_path("docs", ".vbx-tmp-123"), b"half-written")

    run(add())
    names = zipfile.ZipFile(io.BytesIO(export(files)[0])).namelist()
    assert [n for n in names if n.startswith(".voicebox/")] == [MANIFEST_NAME]
    assert not any(".vbx-tmp-" in n for n in names)


def test_names_that_fail_the_path_rule_are_skipped_and_counted() -> None:
    files = project({"ok.txt": b"ok"})
    run(files.write(mem_path("Icon\r"), b"mac"))
    run(files.write(mem_path("back\\slash"), b"win"))
    data, summary, _ = export(files)
    assert summary.skipped == 2
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == ["ok.txt", MANIFEST_NAME]


def test_an_empty_project_exports_a_manifest_only() -> None:
    data, summary, _ = export(project({}))
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.namelist() == [MANIFEST_NAME]
    assert json.loads(archive.read(MANIFEST_NAME))["files"] == []
    assert summary.files == 0


def test_every_entry_is_stored_even_text_that_would_compress() -> None:
    """docs/archives.md §1: stored, so the bytes depend on no runtime's compressor."""
    data, _, _ = export(project({"text.txt": b"abc" * 10_000, "bin": BINARY}))
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
    assert archive.read("text.txt") == b"abc" * 10_000


def test_an_export_streams_once() -> None:
    job = export_archive(sample(), SOURCE)

    async def drop(chunk: bytes) -> None:
        pass

    run(job.write_to(drop))
    with pytest.raises(RuntimeError):
        run(job.write_to(drop))


def test_a_file_that_vanishes_mid_export_refuses_the_export() -> None:
    files = sample()
    job = export_archive(files, SOURCE, chunk_size=16)

    async def sink(chunk: bytes) -> None:
        if await files.stat(parse_path("assets/logo.bin")) is not None:
            await files.delete(parse_path("assets/logo.bin"))

    with pytest.raises(Refused) as caught:
        run(job.write_to(sink))
    assert caught.value.code == Code.FILE_NOT_FOUND


def test_exported_at_is_an_exact_iso_instant_in_utc() -> None:
    assert iso_instant(0) == "1970-01-01T00:00:00.000Z"
    assert iso_instant(1_767_225_600_999) == "2026-01-01T00:00:00.999Z"


def test_download_filename_is_safe_for_any_project_name() -> None:
    assert download_filename('a/b\\c:d*e?f"g<h>i|j') == "a_b_c_d_e_f_g_h_i_j.zip"
    assert download_filename("<img src=x onerror=1>") == "_img src=x onerror=1_.zip"
    assert download_filename("..") == "project.zip"
    assert download_filename("line\nbreak") == "line_break.zip"
    assert len(download_filename("x" * 300)) == 104


@pytest.mark.parametrize(
    "source",
    [
        ExportSource("bad\x00name", NOW_MS),
        ExportSource("ok", NOW_MS, env_key="vbx_not_an_env_key"),
        ExportSource("ok", NOW_MS, project_id="../p"),
        ExportSource("ok", -1),
    ],
)
def test_an_invalid_source_is_refused_before_anything_streams(source: ExportSource) -> None:
    with pytest.raises(ValueError, match=r"validation error|must not be negative"):
        export_archive(sample(), source)


def test_exported_at_is_the_newest_change_so_an_unchanged_project_re_exports_identically() -> None:
    """Issue 4: the same project exported twice is byte-identical, whenever it is exported;
    any change to a file moves ``exported_at`` (and so the bytes)."""
    from core.archive.export import ExportSource, export_archive
    from core.memory.adapters import FixedClock, MemoryProjectFiles
    from core.paths import ProjectPath
    from tests.support import run

    clock = FixedClock(1_700_000_000_000)
    files = MemoryProjectFiles(clock=clock)
    run(files.write(ProjectPath(("a.txt",)), b"one"))
    clock.advance(5_000)
    run(files.write(ProjectPath(("b.txt",)), b"two"))

    async def export() -> tuple[bytes, str]:
        job = export_archive(files, ExportSource("p", None, changed_at_ms=1_600_000_000_000))
        chunks: list[bytes] = []

        async def sink(chunk: bytes) -> None:
            chunks.append(chunk)

        await job.write_to(sink)
        data = b"".join(chunks)
        assert job.manifest is not None
        return data, job.manifest.exported_at

    first, at = run(export())
    clock.advance(60_000)  # time passes, nothing changes
    second, _ = run(export())
    assert first == second
    assert at == "2023-11-14T22:13:25.000Z"  # b.txt's write, the newest change
    clock.advance(1_000)
    run(files.write(ProjectPath(("a.txt",)), b"one, edited"))
    third, later = run(export())
    assert third != first and later > at


class _ListsAtOnce(MemoryProjectFiles):
    """The in-memory project, able to list several folders in one wait (like a browser folder,
    :class:`~core.ports.ListsFolders`); records each group it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[list[tuple[str, ...]]] = []

    async def list_dirs(self, folders: Sequence[tuple[str, ...]]) -> list[list[Entry]]:
        self.groups.append(list(folders))
        return [await self.list_dir(folder) for folder in folders]


def test_a_store_that_lists_folders_at_once_is_walked_a_depth_at_a_time_to_the_same_archive() -> (
    None
):
    """Issue 18: where a listing is a wait on storage, the walk asks every folder of one depth
    at once (through read-through wrappers too), and the archive is byte for byte the one the
    folder-by-folder walk makes."""
    files = {f"d{i}/e{j}/f.txt": f"{i}.{j}".encode() for i in range(3) for j in range(2)}
    files["top.txt"] = b"top"
    plain = project(files, folders=["d0/empty"])
    at_once = _ListsAtOnce()
    for path, data in files.items():
        run(at_once.write(parse_path(path), data))
    run(at_once.mkdir(parse_path("d0/empty")))
    expected, _, _ = export(plain)
    got, _, _ = export(CaseGuard(at_once))
    assert got == expected
    assert [sorted(g) for g in at_once.groups] == [
        [()],
        [("d0",), ("d1",), ("d2",)],
        [
            ("d0", "e0"),
            ("d0", "e1"),
            ("d0", "empty"),
            ("d1", "e0"),
            ("d1", "e1"),
            ("d2", "e0"),
            ("d2", "e1"),
        ],
    ]


class _RecordingRelay(ChunkRelay):
    """The Python relay, recording every plan item it is handed and each ``begin``."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[RelayItem] = []
        self.begun: list[tuple[ProjectFiles, Sink]] = []

    def begin(self, files: ProjectFiles, sink: Sink) -> None:
        self.begun.append((files, sink))

    async def relay(
        self, files: ProjectFiles, items: Sequence[RelayItem], sink: Sink
    ) -> list[Relayed]:
        self.items.extend(items)
        return await super().relay(files, items, sink)


def test_the_relay_plan_gives_each_files_listed_size_and_the_archive_does_not_change() -> None:
    """Issue 18, round five: each planned file carries its size as listed (the browser's reader
    lanes share the work by it); the archive is the same bytes whatever relay moved them."""
    files = {"a.txt": b"a" * 10, "d/b.bin": bytes(range(256)) * 40, "d/e/empty": b""}
    relay = _RecordingRelay()
    got, _, _ = export(project(files), relay=relay)
    assert {str(item.path): item.size for item in relay.items} == {
        path: len(data) for path, data in files.items()
    }
    assert got == export(project(files))[0]


class _ListingFiles(MemoryProjectFiles):
    """The in-memory project, counting its folder listings."""

    def __init__(self) -> None:
        super().__init__()
        self.listed = 0

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        self.listed += 1
        return await super().list_dir(folder)


def test_the_relay_is_told_once_before_the_walk_that_an_export_begins() -> None:
    """Issue 18, round five: ``begin`` comes once per export, before the first listing (the
    browser starts its reader lanes while the project is walked), with the export's files and
    sink."""
    files = _ListingFiles()
    run(files.write(parse_path("d/a.txt"), b"a"))
    relay = _RecordingRelay()
    listed_at_begin: list[int] = []
    original = relay.begin

    def begin(given: ProjectFiles, sink: Sink) -> None:
        listed_at_begin.append(files.listed)
        original(given, sink)

    relay.begin = begin  # type: ignore[method-assign]
    export(files, relay=relay)
    assert listed_at_begin == [0]
    assert len(relay.begun) == 1 and relay.begun[0][0] is files
    assert files.listed > 0


def test_the_left_out_list_is_bounded_and_the_count_is_whole() -> None:
    """Issue 29 item 14: the summary lists the first MAX_LEFT_OUT names left out, in entry
    order; ``skipped`` counts them all."""
    files = project({"ok.txt": b"ok"})
    for i in range(MAX_LEFT_OUT + 5):
        run(files.write(mem_path(f".vbx-tmp-{i:04d}.md"), b"x"))
    _, summary, _ = export(files)
    assert summary.skipped == MAX_LEFT_OUT + 5
    assert [x.path for x in summary.left_out] == [
        f".vbx-tmp-{i:04d}.md" for i in range(MAX_LEFT_OUT)
    ]
    bidi = project({})
    run(bidi.write(mem_path("evil\u202etxt.md"), b"x"))
    assert export(bidi)[1].left_out[0].path == "evil\\u202etxt.md"


class _AnnouncedSink:
    """A sink that can be told the archive's name and size (:class:`~core.ports.AnnouncedSink`);
    records what it hears and the chunks, in order."""

    def __init__(self) -> None:
        self.heard: list[object] = []

    async def __call__(self, chunk: bytes) -> None:
        self.heard.append(chunk)

    def announce(self, filename: str, file_bytes: int) -> None:
        self.heard.append(("announce", filename, file_bytes))


def test_a_sink_that_can_be_told_hears_the_archives_name_and_size_before_its_first_byte() -> None:
    """Issue 34, round 42: the streamed download opens under the host's name, and shows its
    progress, from the export itself — said once, before any byte — instead of a second walk
    of the project by the page. The name is the summary's; the size is the files' bytes; the
    archive is the one a plain sink gets."""
    files = {"a.txt": b"a" * 10, "d/b.bin": b"\x00" * 300, "d/e/c.txt": b"c"}
    plain, summary, _ = export(project(files, folders=["empty"]))
    told = _AnnouncedSink()
    run(export_archive(project(files, folders=["empty"]), SOURCE).write_to(told))
    assert told.heard[0] == ("announce", summary.filename, 311)
    assert told.heard.count(told.heard[0]) == 1
    assert b"".join(c for c in told.heard[1:] if isinstance(c, bytes)) == plain
    folder = _AnnouncedSink()
    run(export_archive(project(files), SOURCE, folder=parse_path("d")).write_to(folder))
    assert folder.heard[0] == ("announce", f"{SOURCE.name} - d.zip", 301)
