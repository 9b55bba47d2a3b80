"""A corpus of hostile archives, one per import rule, sent through the host's
``project.import``: each is refused with its own code and leaves storage unchanged (SPEC §10).
"""

from __future__ import annotations

import stat
import zipfile

import pytest

from core.refusals import Code
from tests.archive.kit import (
    broken_memory_archive,
    export,
    info,
    many_entries,
    new_project,
    patch,
    sample,
    storage,
    zip_of,
)
from tests.support import HostHarness


def _lying_bomb() -> bytes:
    bomb = zip_of((info("bomb.bin", compress=zipfile.ZIP_DEFLATED), bytes(16 << 20)))
    return patch(bomb, "bomb.bin", size=4096)


def _declared_too_large() -> bytes:
    data = zip_of(*((f"part{i}", b"x") for i in range(5)))
    for i in range(5):
        data = patch(data, f"part{i}", size=250 << 20)
    return data


def _corrupt() -> bytes:
    data = bytearray(export(sample())[0])
    at = data.index(b"# hello")
    data[at] ^= 0xFF
    return bytes(data)


CORPUS: dict[str, tuple[Code, bytes]] = {
    "not-a-zip": (Code.ARCHIVE_INVALID, b"%PDF-1.7 this is not a zip archive" * 20),
    "corrupt-data": (Code.ARCHIVE_INVALID, _corrupt()),
    "encrypted": (Code.ARCHIVE_INVALID, patch(zip_of(("s.txt", b"s")), "s.txt", flags=0x1)),
    "absolute": (Code.ARCHIVE_ENTRY_ABSOLUTE, zip_of(("ok.txt", b"1"), ("/etc/cron.d/x", b""))),
    "unc-backslash": (Code.ARCHIVE_ENTRY_ABSOLUTE, zip_of(("\\\\server\\share\\x", b""))),
    "traversal": (Code.ARCHIVE_ENTRY_TRAVERSAL, zip_of(("a/../../b", b""))),
    "sibling-prefix": (Code.ARCHIVE_ENTRY_TRAVERSAL, zip_of(("../proj-evil/x", b""))),
    "backslash-traversal": (Code.ARCHIVE_ENTRY_TRAVERSAL, zip_of(("..\\..\\evil", b""))),
    "drive": (Code.ARCHIVE_ENTRY_DRIVE, zip_of(("C:\\Windows\\evil.dll", b""))),
    "backslash-name": (Code.ARCHIVE_ENTRY_NAME_INVALID, zip_of(("dir\\file", b""))),
    "control-char": (Code.ARCHIVE_ENTRY_NAME_INVALID, zip_of(("a\x1b[2J", b""))),
    "reserved-meta": (Code.ARCHIVE_ENTRY_NAME_INVALID, zip_of((".voicebox/manifest.json", b""))),
    "host-local-meta": (Code.ARCHIVE_ENTRY_NAME_INVALID, zip_of((".voicebox/mailbox.index", b""))),
    "memory-unlisted": (Code.ARCHIVE_INVALID, zip_of((".voicebox/skeleton.json", b"{}"))),
    "memory-broken": (Code.ARCHIVE_MEMORY_BROKEN, broken_memory_archive()),
    "duplicate": (Code.ARCHIVE_ENTRY_DUPLICATE, zip_of(("a.txt", b"1"), ("a.txt", b"2"))),
    "file-and-folder": (Code.ARCHIVE_ENTRY_DUPLICATE, zip_of(("a", b"1"), ("a/b", b"2"))),
    "case-collision": (
        Code.ARCHIVE_ENTRY_CASE_COLLISION,
        zip_of(("Report.txt", b"1"), ("REPORT.txt", b"2")),
    ),
    "symlink": (
        Code.ARCHIVE_ENTRY_SYMLINK,
        zip_of((info("link", mode=stat.S_IFLNK | 0o777), b"/etc/passwd")),
    ),
    "lying-bomb": (Code.ARCHIVE_ENTRY_SIZE_MISMATCH, _lying_bomb()),
    "short-entry": (
        Code.ARCHIVE_ENTRY_SIZE_MISMATCH,
        patch(zip_of(("s.txt", b"x" * 100)), "s.txt", size=101),
    ),
    "ratio": (
        Code.ARCHIVE_RATIO_EXCEEDED,
        zip_of((info("zeros", compress=zipfile.ZIP_DEFLATED), bytes(8 << 20))),
    ),
    "total-too-large": (Code.ARCHIVE_TOO_LARGE, _declared_too_large()),
    "too-many-entries": (Code.ARCHIVE_TOO_LARGE, many_entries(100_001)),
}


def test_the_corpus_covers_every_archive_refusal_code() -> None:
    archive_codes = {c for c in Code if str(c).startswith("archive-")}
    assert {code for code, _ in CORPUS.values()} == archive_codes
    assert len(CORPUS) >= 12


@pytest.fixture(scope="module")
def host() -> HostHarness:
    h = HostHarness()
    new_project(h, "Existing", {"keep/me.txt": b"keep", "other.bin": bytes(range(256))})
    return h


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_hostile_archive_is_refused_with_its_code_and_storage_is_unchanged(
    host: HostHarness, case: str
) -> None:
    code, data = CORPUS[case]
    before = storage(host)
    refusal = host.refused("project.import", data, name="Hostile")
    assert refusal["code"] == str(code), refusal
    assert refusal["status"] in (413, 422)
    assert storage(host) == before


def test_refusals_are_audited_with_the_entry_named(host: HostHarness) -> None:
    answer, _ = host.call("project.import", CORPUS["sibling-prefix"][1], name="Hostile")
    record = host.sink.records[answer["logged"]]
    assert record["decision"] == "refused"
    assert record["rule"] == "archive-entry-traversal"
    assert record["details"]["entry"] == "'../proj-evil/x'"
    assert answer["refusal"]["details"] == {"entry": "'../proj-evil/x'"}
