"""Import: every entry of an archive is checked before anything is written (SPEC §10).

One test per rule, each expecting the rule's own refusal code (core.refusals).
"""

from __future__ import annotations

import json
import stat
import zipfile
import zlib

import pytest

from core.archive.apply import apply_import
from core.archive.manifest import MANIFEST_NAME
from core.archive.plan import ImportBounds, plan_import
from core.memory.adapters import MemoryProjectFiles
from core.paths import parse_path
from core.refusals import Code, Refused
from tests.archive.kit import (
    export,
    info,
    many_entries,
    patch,
    project,
    sample,
    tree,
    zip_of,
)
from tests.support import run


def refused(data: bytes, **kwargs: object) -> Refused:
    with pytest.raises(Refused) as caught:
        plan_import(data, **kwargs)  # type: ignore[arg-type]
    return caught.value


def code_of(data: bytes, **kwargs: object) -> Code:
    return refused(data, **kwargs).code


# ---- names -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["/etc/passwd", "\\windows\\win.ini", "//server/share/x"])
def test_absolute_entry_names_are_refused(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_ABSOLUTE


@pytest.mark.parametrize("name", ["C:/x.txt", "c:x.txt", "C:\\Windows\\x.txt", "Z:"])
def test_drive_letter_entry_names_are_refused(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_DRIVE


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../b.txt", "a/b/..", "a/../b.txt"])
def test_dot_dot_anywhere_in_an_entry_name_is_refused(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_TRAVERSAL


def test_sibling_prefix_escape_is_refused() -> None:
    # "../proj-evil/x" would land beside the project in a folder sharing its name's prefix
    assert code_of(zip_of(("../proj-evil/x", b"x"))) == Code.ARCHIVE_ENTRY_TRAVERSAL


@pytest.mark.parametrize("name", ["..\\..\\evil.txt", "a\\..\\..\\b", "ok/..\\x"])
def test_backslash_traversal_is_refused_as_traversal(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_TRAVERSAL


@pytest.mark.parametrize("name", ["a/.../b", "a/.. /b", "a/. ./b"])
def test_segments_windows_reads_as_dot_dot_are_refused(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_TRAVERSAL


def test_a_backslash_inside_a_name_is_refused() -> None:
    problem = refused(zip_of(("dir\\file.txt", b"x")))
    assert problem.code == Code.ARCHIVE_ENTRY_NAME_INVALID
    assert problem.details["path_code"] == "path-invalid"


@pytest.mark.parametrize("name", ["a/\x1b[31m.txt", "a//b", "./a", "a/./b", "a\u0085b", "a\x7f"])
def test_names_the_path_rule_refuses_are_refused(name: str) -> None:
    assert code_of(zip_of((name, b"x"))) == Code.ARCHIVE_ENTRY_NAME_INVALID


def test_nul_truncation_trick_is_refused_by_the_raw_name() -> None:
    # zipfile truncates names at NUL ("evil.sh\0.txt" reads as "evil.sh"); the raw name counts.
    # zipfile will not write such a name, so it is put into the bytes afterwards.
    data = zip_of(("evil.sh_.txt", b"x")).replace(b"evil.sh_.txt", b"evil.sh\x00.txt")
    problem = refused(data)
    assert problem.code == Code.ARCHIVE_ENTRY_NAME_INVALID
    assert "\\x00" in problem.details["entry"]


@pytest.mark.parametrize(
    "name",
    [
        ".voicebox/manifest.json",
        ".voicebox/mailbox.index",
        ".voicebox/trash/x",
        "a/.vbx-tmp-1",
        ".voicebox/",
    ],
)
def test_reserved_names_are_refused(name: str) -> None:
    problem = refused(zip_of((name, b"")))
    assert problem.code == Code.ARCHIVE_ENTRY_NAME_INVALID
    assert problem.details["path_code"] == "path-reserved"


@pytest.mark.parametrize("case_insensitive", [True, False])
def test_reserved_names_in_another_case_are_refused_for_every_target(
    case_insensitive: bool,
) -> None:
    """The path rule folds case everywhere it is asked (issue 13): a project imported into
    case-sensitive OPFS is exported again, and unpacked on a case-insensitive disk
    ``.VoiceBox/`` would be its metadata folder."""
    for name in [".VoiceBox/skeleton.json", "a/.VBX-TMP-1"]:
        with pytest.raises(Refused) as caught:
            plan_import(zip_of((name, b"{}")), case_insensitive_target=case_insensitive)
        assert caught.value.code == Code.ARCHIVE_ENTRY_NAME_INVALID
        assert caught.value.details["path_code"] == "path-reserved"


def test_a_refusal_names_the_entry_quoted_and_shortened() -> None:
    problem = refused(zip_of(("../" + "x" * 500, b"")))
    assert problem.details["entry"].startswith("'../xxx")
    assert len(problem.details["entry"]) <= 120
    assert problem.show_details
    assert problem.body().details == {"entry": problem.details["entry"]}


# ---- duplicates and collisions -----------------------------------------------------------


def test_duplicate_entry_names_are_refused() -> None:
    assert code_of(zip_of(("a.txt", b"1"), ("a.txt", b"2"))) == Code.ARCHIVE_ENTRY_DUPLICATE


def test_a_name_that_is_both_file_and_folder_is_refused() -> None:
    assert code_of(zip_of(("a", b"file"), ("a/b", b"x"))) == Code.ARCHIVE_ENTRY_DUPLICATE
    assert code_of(zip_of(("a/b", b"x"), ("a", b"file"))) == Code.ARCHIVE_ENTRY_DUPLICATE
    assert code_of(zip_of(("a/", b""), ("a", b"file"))) == Code.ARCHIVE_ENTRY_DUPLICATE


def test_names_colliding_after_case_folding_are_refused_by_default() -> None:
    data = zip_of(("Readme.md", b"1"), ("README.md", b"2"))
    assert code_of(data) == Code.ARCHIVE_ENTRY_CASE_COLLISION


def test_folders_colliding_after_case_folding_are_refused() -> None:
    data = zip_of(("Docs/a.txt", b"1"), ("docs/b.txt", b"2"))
    assert code_of(data) == Code.ARCHIVE_ENTRY_CASE_COLLISION


def test_case_folding_includes_unicode_normalisation_and_full_folding() -> None:
    # an NFD spelling breaks the one name rule itself (core/paths.py, rule d): refused by name
    problem = refused(zip_of(("é.txt", b"1"), ("e\u0301.txt", b"2")))
    assert problem.code == Code.ARCHIVE_ENTRY_NAME_INVALID
    assert problem.details["path_code"] == "path-invalid"
    assert code_of(zip_of(("straße", b"1"), ("STRASSE", b"2"))) == (
        Code.ARCHIVE_ENTRY_CASE_COLLISION
    )
    assert code_of(zip_of(("\ufb01le", b"1"), ("FILE", b"2"))) == (
        Code.ARCHIVE_ENTRY_CASE_COLLISION
    )


def test_case_variants_are_allowed_for_a_case_sensitive_target() -> None:
    data = zip_of(("Readme.md", b"1"), ("README.md", b"2"))
    plan = plan_import(data, case_insensitive_target=False)
    assert [str(e.path) for e in plan.entries] == ["README.md", "Readme.md"]


# ---- entry types ---------------------------------------------------------------------------


def test_symlink_entries_are_refused() -> None:
    link = info("link", mode=stat.S_IFLNK | 0o777)
    assert code_of(zip_of((link, b"../../etc/passwd"))) == Code.ARCHIVE_ENTRY_SYMLINK


@pytest.mark.parametrize("kind", [stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK])
def test_other_special_entries_are_refused_with_the_symlink_code(kind: int) -> None:
    assert code_of(zip_of((info("dev", mode=kind | 0o644), b""))) == Code.ARCHIVE_ENTRY_SYMLINK


def test_windows_reparse_points_are_refused_with_the_symlink_code() -> None:
    junction = info("junction", mode=None, system=0)
    junction.external_attr = 0x400
    assert code_of(zip_of((junction, b""))) == Code.ARCHIVE_ENTRY_SYMLINK


def test_entries_without_unix_mode_are_plain_files() -> None:
    plan = plan_import(zip_of((info("dos.txt", mode=None, system=0), b"dos")))
    assert plan.files == 1


def test_encrypted_entries_are_refused() -> None:
    data = patch(zip_of(("secret.txt", b"x")), "secret.txt", flags=0x1)
    assert code_of(data) == Code.ARCHIVE_INVALID


def test_compression_methods_other_than_store_and_deflate_are_refused() -> None:
    assert code_of(zip_of((info("x.txt", compress=zipfile.ZIP_BZIP2), b"x" * 100))) == (
        Code.ARCHIVE_INVALID
    )


def test_a_folder_entry_carrying_data_is_refused() -> None:
    assert code_of(zip_of(("dir/", b"data"))) == Code.ARCHIVE_ENTRY_SIZE_MISMATCH


# ---- sizes and bounds --------------------------------------------------------------------


def test_an_entry_holding_more_than_it_declares_is_refused() -> None:
    # a zip bomb whose headers lie: 8 MiB of zeros declared as 1000 bytes
    bomb = zip_of((info("bomb.bin", compress=zipfile.ZIP_DEFLATED), bytes(8 << 20)))
    data = patch(bomb, "bomb.bin", size=1000)
    problem = refused(data)
    assert problem.code == Code.ARCHIVE_ENTRY_SIZE_MISMATCH
    assert problem.details["declared"] == 1000


def test_an_entry_holding_less_than_it_declares_is_refused() -> None:
    data = patch(zip_of(("short.txt", b"x" * 100)), "short.txt", size=200)
    assert code_of(data) == Code.ARCHIVE_ENTRY_SIZE_MISMATCH


def test_a_lying_stored_entry_whose_crc_matches_its_real_bytes_is_still_refused() -> None:
    real = b"y" * 5000
    data = patch(zip_of(("liar.txt", real)), "liar.txt", size=10, crc=zlib.crc32(real))
    assert code_of(data) == Code.ARCHIVE_ENTRY_SIZE_MISMATCH


def test_corrupt_entry_data_fails_the_crc_check() -> None:
    data = bytearray(zip_of(("a.txt", b"hello world")))
    data[data.index(b"hello world")] ^= 0x01
    assert code_of(bytes(data)) == Code.ARCHIVE_INVALID


def test_expansion_ratio_over_the_bound_is_refused() -> None:
    data = zip_of((info("zeros", compress=zipfile.ZIP_DEFLATED), bytes(4 << 20)))
    assert code_of(data) == Code.ARCHIVE_RATIO_EXCEEDED
    plan = plan_import(data, max_ratio=100_000.0)
    assert plan.total_bytes == 4 << 20


def test_small_archives_are_not_held_to_the_ratio() -> None:
    data = zip_of((info("zeros", compress=zipfile.ZIP_DEFLATED), bytes(512 << 10)))
    assert plan_import(data).total_bytes == 512 << 10


def test_total_size_over_the_bound_is_refused() -> None:
    data = zip_of(("a", b"x" * 600), ("b", b"x" * 600))
    assert code_of(data, max_total=1000) == Code.ARCHIVE_TOO_LARGE
    assert plan_import(data, max_total=1200).total_bytes == 1200


def test_declared_sizes_over_the_bound_are_refused_before_anything_is_read() -> None:
    names = [f"part{i}" for i in range(5)]
    data = zip_of(*((name, b"x") for name in names))
    for name in names:
        data = patch(data, name, size=250 << 20)
    problem = refused(data)
    assert problem.code == Code.ARCHIVE_TOO_LARGE
    assert problem.details["declared"] == 5 * (250 << 20)


def test_one_entry_over_the_entry_bound_is_refused() -> None:
    data = patch(zip_of(("huge", b"x")), "huge", size=(256 << 20) + 1)
    assert code_of(data) == Code.ARCHIVE_TOO_LARGE


def test_too_many_entries_are_refused() -> None:
    data = zip_of(*((f"f{i}", b"") for i in range(11)))
    assert code_of(data, max_entries=10) == Code.ARCHIVE_TOO_LARGE
    assert plan_import(data, max_entries=11).files == 11


def test_entries_are_counted_before_zipfile_parses_the_directory() -> None:
    # a directory of 100,001 records and nothing else: refused by the count, not by zipfile
    problem = refused(many_entries(100_001))
    assert problem.code == Code.ARCHIVE_TOO_LARGE
    assert "100000" in problem.message


def test_bounds_can_be_given_as_one_value() -> None:
    data = zip_of(("a", b"x" * 10))
    assert code_of(data, bounds=ImportBounds(max_total=5)) == Code.ARCHIVE_TOO_LARGE


# ---- not a zip -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data", [b"", b"hello", b"PK\x05\x06" + bytes(10), b"<html>not a zip</html>" * 100]
)
def test_bytes_that_are_not_a_zip_are_refused(data: bytes) -> None:
    assert code_of(data) == Code.ARCHIVE_INVALID


def test_an_empty_zip_is_an_empty_plan() -> None:
    plan = plan_import(b"PK\x05\x06" + bytes(18))
    assert plan.entries == () and plan.manifest is None


def test_a_truncated_zip_is_refused() -> None:
    data = export(sample())[0]
    assert code_of(data[: len(data) // 2]) == Code.ARCHIVE_INVALID
    assert code_of(data[len(data) // 3 :]) == Code.ARCHIVE_INVALID


# ---- the manifest --------------------------------------------------------------------------


def _with_manifest(files: dict[str, bytes], manifest: dict[str, object]) -> bytes:
    return zip_of(*files.items(), (MANIFEST_NAME, json.dumps(manifest).encode()))


def _manifest(files: dict[str, bytes]) -> dict[str, object]:
    import hashlib

    return {
        "schema": "voicebox-archive-v1",
        "name": "p",
        "exported_at": "2026-01-01T00:00:00.000Z",
        "files": [
            {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
            for p, d in files.items()
        ],
        "folders": [],
        "total_bytes": sum(len(d) for d in files.values()),
    }


def test_a_matching_manifest_is_read_and_kept() -> None:
    files = {"a.txt": b"a", "b/c.txt": b"c"}
    plan = plan_import(_with_manifest(files, _manifest(files)))
    assert plan.manifest is not None and plan.manifest.name == "p"
    assert plan.files == 2


def test_a_manifest_sha256_that_differs_from_the_entry_is_refused() -> None:
    files = {"a.txt": b"a"}
    manifest = _manifest(files)
    manifest["files"][0]["sha256"] = "0" * 64  # type: ignore[index]
    assert code_of(_with_manifest(files, manifest)) == Code.ARCHIVE_INVALID


def test_a_manifest_size_that_differs_from_the_entry_is_refused() -> None:
    files = {"a.txt": b"a"}
    manifest = _manifest(files)
    manifest["files"][0]["size"] = 2  # type: ignore[index]
    assert code_of(_with_manifest(files, manifest)) == Code.ARCHIVE_ENTRY_SIZE_MISMATCH


def test_a_manifest_that_lists_other_files_is_refused() -> None:
    files = {"a.txt": b"a"}
    assert code_of(_with_manifest({**files, "extra": b"e"}, _manifest(files))) == (
        Code.ARCHIVE_INVALID
    )
    assert code_of(_with_manifest({}, _manifest(files))) == Code.ARCHIVE_INVALID


def test_a_manifest_that_does_not_parse_is_refused() -> None:
    assert code_of(zip_of((MANIFEST_NAME, b"{not json"))) == Code.ARCHIVE_INVALID
    bad_name = _manifest({})
    bad_name["name"] = "bad\x07name"
    assert code_of(zip_of((MANIFEST_NAME, json.dumps(bad_name).encode()))) == (Code.ARCHIVE_INVALID)


def test_archives_without_a_manifest_are_accepted() -> None:
    plan = plan_import(zip_of(("x/y.txt", b"y"), ("z/", b"")))
    assert plan.manifest is None
    assert [(str(e.path), e.kind) for e in plan.entries] == [("x/y.txt", "file"), ("z", "dir")]


# ---- all or nothing ------------------------------------------------------------------------


def test_a_bad_entry_after_good_ones_refuses_the_whole_archive_before_writing() -> None:
    data = zip_of(("good1.txt", b"1"), ("good2.txt", b"2"), ("../bad", b"3"))
    with pytest.raises(Refused):
        plan_import(data)  # nothing to apply: the plan never exists


class FailingFiles(MemoryProjectFiles):
    """Refuses the ``fail_at``-th write with ``storage-quota-exceeded``."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.writes = 0

    async def write(self, path, data) -> None:  # type: ignore[no-untyped-def]
        self.writes += 1
        if self.writes == self.fail_at:
            raise Refused(Code.STORAGE_QUOTA_EXCEEDED)
        await super().write(path, data)


def test_a_failed_write_removes_everything_the_import_wrote() -> None:
    plan = plan_import(export(sample())[0])
    target = FailingFiles(fail_at=3)
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_QUOTA_EXCEEDED
    assert tree(target, meta=True) == {}


class CorruptingFiles(MemoryProjectFiles):
    """Stores every file with its first byte flipped."""

    async def write(self, path, data) -> None:  # type: ignore[no-untyped-def]
        await super().write(path, bytes([data[0] ^ 1]) + data[1:] if data else data)


def test_a_file_that_does_not_read_back_as_written_fails_and_rolls_back() -> None:
    plan = plan_import(export(project({"a/b.txt": b"abc"}))[0])
    target = CorruptingFiles()
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.STORAGE_FAILED
    assert tree(target, meta=True) == {}


def test_apply_refuses_a_target_that_already_holds_a_planned_file() -> None:
    plan = plan_import(export(project({"a/b.txt": b"new", "c.txt": b"c"}))[0])
    target = project({"a/b.txt": b"old"})
    before = tree(target, meta=True)
    with pytest.raises(Refused) as caught:
        run(apply_import(plan, target))
    assert caught.value.code == Code.ALREADY_EXISTS
    assert tree(target, meta=True) == before


def test_apply_writes_into_existing_folders_and_rolls_back_only_its_own() -> None:
    plan = plan_import(export(project({"shared/new.txt": b"n", "own/x.txt": b"x"}))[0])
    target = FailingFiles(fail_at=2)
    run(target.mkdir(parse_path("shared")))
    run(MemoryProjectFiles.write(target, parse_path("shared/keep.txt"), b"k"))
    with pytest.raises(Refused):
        run(apply_import(plan, target))
    assert tree(target) == {"shared": None, "shared/keep.txt": b"k"}


class CountingFiles(MemoryProjectFiles):
    """Counts the existence checks an import makes: ``stat`` calls and folder ``names``."""

    def __init__(self) -> None:
        super().__init__()
        self.stats = 0
        self.listed = 0

    async def stat(self, path):  # type: ignore[no-untyped-def]
        self.stats += 1
        return await super().stat(path)

    async def names(self, folder):  # type: ignore[no-untyped-def]
        self.listed += 1
        return await super().names(folder)


def test_an_import_checks_what_is_taken_by_each_folders_names_not_a_stat_per_file() -> None:
    # issue 34: a 10,000-file zip paid a storage stat per path before writing anything
    files = {f"d{n % 5}/f{n:03d}.txt": f"{n}".encode() for n in range(200)}
    plan = plan_import(export(project(files))[0])
    target = CountingFiles()
    run(apply_import(plan, target))
    assert target.stats == 0
    assert target.listed == 1  # the root only: d0…d4 are not there, so nothing in them is taken
    assert {k: v for k, v in tree(target).items() if v is not None} == files


def test_an_entry_whose_data_runs_into_the_next_entry_is_refused() -> None:
    # issue 34: entries are read from the archive's bytes; one entry's data may not cover
    # another's header (the overlap a zip bomb uses to expand the same bytes twice)
    data = zip_of(("a.txt", b"A" * 10), ("b.txt", b"B" * 10))
    covered = data[data.index(b"A" * 10) : data.index(b"B" * 10) + 10]
    lying = patch(
        data, "a.txt", compressed=len(covered), size=len(covered), crc=zlib.crc32(covered)
    )
    with pytest.raises(Refused) as caught:
        plan_import(lying)
    assert caught.value.code == Code.ARCHIVE_INVALID
    assert caught.value.details["entry"] == "'a.txt'"


def test_an_entry_whose_local_header_names_another_file_is_refused() -> None:
    data = zip_of(("a.txt", b"A" * 10))
    with pytest.raises(Refused) as caught:
        plan_import(data.replace(b"a.txt", b"z.txt", 1))  # the local header's name only
    assert caught.value.code == Code.ARCHIVE_INVALID
