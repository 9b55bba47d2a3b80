"""The zip framing is the one CPython's :mod:`zipfile` writes, byte for byte, and the archive is
deterministic (SPEC §10; docs/archives.md §3; issue 18).

The export writes headers, data descriptors and the central directory itself
(:mod:`core.archive.zipformat`) so that the files' bytes can be moved without Python. These tests
hold it to the reference: :mod:`zipfile` writing the same entries to a non-seekable file (what the
export used before), on whichever runtime runs the suite (CPython here, CPython 3.14 in Pyodide).
The golden test pins the archive of a fixed project to a committed sha256.
"""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.archive import zipformat
from core.archive.export import ExportSource
from core.archive.manifest import FIXED_DATE_TIME, MANIFEST_NAME
from core.memory.adapters import MemoryProjectFiles
from core.paths import ProjectPath
from core.ports import Entry
from tests.archive.kit import (
    GOLDEN_SHA256,
    GOLDEN_SOURCE,
    SOURCE,
    export,
    golden,
    project,
    sample,
)
from tests.support import run


class _Utf8Info(zipfile.ZipInfo):
    __slots__ = ()

    def _encodeFilenameFlags(self) -> tuple[bytes, int]:  # zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits | 0x800


class _Unseekable:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


def _info(name: str, folder: bool, size: int) -> _Utf8Info:
    info = _Utf8Info(name, date_time=FIXED_DATE_TIME)
    info.create_system = 3
    info.external_attr = (
        (((stat.S_IFDIR | 0o755) << 16) | 0x10) if folder else ((stat.S_IFREG | 0o644) << 16)
    )
    info.file_size = size
    info.CRC = 0
    info.compress_size = 0
    return info


def reference(data: bytes) -> bytes:
    """The archive ``zipfile`` writes for the entries of the export ``data``, in its order,
    each file announced with the size its listing gave (the entries' own sizes here)."""
    entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    spool = _Unseekable()
    with zipfile.ZipFile(spool, "w", allowZip64=True) as archive:  # type: ignore[arg-type]
        source = zipfile.ZipFile(io.BytesIO(data))
        for entry in entries:
            info = _info(entry.filename, entry.is_dir(), entry.file_size)
            if entry.is_dir():
                archive.mkdir(info)
            else:
                with archive.open(info, "w") as out:
                    out.write(source.read(entry))
    return b"".join(spool.parts)


def test_the_sample_export_is_byte_identical_to_zipfiles() -> None:
    data, _, _ = export(sample())
    assert data == reference(data)


names = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters='/\\:*?"<>|'
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip(" .") == s and not s.lower().startswith((".voicebox", ".vbx-tmp")))


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.lists(names, min_size=1, max_size=3).map("/".join),
        st.binary(max_size=3000),
        max_size=8,
    ),
    st.integers(min_value=1, max_value=4096),
)
def test_random_projects_export_byte_identical_to_zipfile_at_any_chunk_size(
    files: dict[str, bytes], chunk: int
) -> None:
    try:
        root = project(files)
    except Exception:  # a file and a folder of one name, or a name the path rule refuses
        return
    data, summary, _ = export(root, chunk_size=chunk)
    assert data == reference(data)
    assert data == export(root)[0]  # gathering differently never changes the bytes
    assert summary.size == len(data)


class _Announced(MemoryProjectFiles):
    """Files whose listing announces ``announced`` bytes for ``big.bin`` (a file that shrank
    after it was listed): its local header gets zip64 sizes, as zipfile gives it."""

    announced = 2_100_000_000

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        rows = await super().list_dir(folder)
        return [Entry(e.name, e.kind, self.announced) if e.name == "big.bin" else e for e in rows]


def test_a_file_listed_over_the_zip64_bound_gets_zip64_sizes_like_zipfile() -> None:
    files = _Announced()
    run(files.write(ProjectPath(("big.bin",)), b"small now"))
    run(files.write(ProjectPath(("z.txt",)), b"z"))
    data, _, _ = export(files)
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.read("big.bin") == b"small now"
    header, zip64 = zipformat.local_header("big.bin", folder=False, size_hint=files.announced)
    assert zip64 and data.startswith(header)
    spool = _Unseekable()
    with zipfile.ZipFile(spool, "w", allowZip64=True) as ref:  # type: ignore[arg-type]
        for name, body, size in (
            ("big.bin", b"small now", files.announced),
            ("z.txt", b"z", 1),
        ):
            with ref.open(_info(name, False, size), "w") as out:
                out.write(body)
        manifest = archive.read(MANIFEST_NAME)
        with ref.open(_info(MANIFEST_NAME, False, len(manifest)), "w") as out:
            out.write(manifest)
    assert data == b"".join(spool.parts)


def test_more_than_65535_entries_get_the_zip64_end_records_like_zipfile() -> None:
    """The framing functions on their own (the export around them is the same for any count):
    65,600 empty files, laid out as the export lays them out."""
    count = 65_600
    parts: list[bytes] = []
    directory: list[zipformat.CentralEntry] = []
    offset = 0
    crc_empty = 0
    for i in range(count):
        name = f"{i:05d}"
        header, zip64 = zipformat.local_header(name, folder=False, size_hint=0)
        descriptor = zipformat.data_descriptor(crc_empty, 0, zip64=zip64)
        directory.append(zipformat.CentralEntry(name, False, 0, crc_empty, offset))
        parts += [header, descriptor]
        offset += len(header) + len(descriptor)
    ours = b"".join(parts) + zipformat.central_directory(directory, offset)
    spool = _Unseekable()
    with zipfile.ZipFile(spool, "w", allowZip64=True) as ref:  # type: ignore[arg-type]
        for i in range(count):
            with ref.open(_info(f"{i:05d}", False, 0), "w"):
                pass
    assert b"PK\x06\x06" in ours[-200:] and b"PK\x06\x07" in ours[-200:]
    assert ours == b"".join(spool.parts)


def test_a_descriptor_refuses_a_size_its_header_did_not_announce() -> None:
    with pytest.raises(ValueError, match="grew past"):
        zipformat.data_descriptor(0, zipformat.ZIP64_LIMIT + 1, zip64=False)


def test_the_golden_project_exports_to_its_committed_sha256() -> None:
    """The same project gives the same bytes on every run, machine and runtime: this suite runs
    on CPython and inside Pyodide, and e2e/test_export_memory.py holds the browser's byte path
    to the same bytes."""
    data, summary, _ = export(golden(), GOLDEN_SOURCE)
    assert data == reference(data)
    assert hashlib.sha256(data).hexdigest() == GOLDEN_SHA256
    assert summary.size == len(data)


def test_two_exports_of_one_project_are_byte_identical() -> None:
    first, _, _ = export(golden(), GOLDEN_SOURCE)
    second, _, _ = export(golden(), GOLDEN_SOURCE)
    assert first == second
    assert export(golden(), ExportSource("Golden ü", SOURCE.exported_at_ms))[0] != first
