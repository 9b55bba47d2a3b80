"""Export streams: memory does not grow with the project's bytes (SPEC §10).

Two measures. The portable one (CPython and Pyodide) instruments the storage port: at every
chunk handed out, the bytes read from storage minus the bytes handed out — what the export can
be holding — stay under a bound independent of project size, and whole-file ``read`` is never
used. The second measures the Python heap's peak with :mod:`tracemalloc` for a 48 MiB project;
it is skipped only under Pyodide (Emscripten), where tracemalloc's overhead makes it slow.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest

from core.archive.export import export_archive
from core.memory.adapters import MemoryProjectFiles
from core.paths import ProjectPath, parse_path
from tests.archive.kit import SOURCE, export, project
from tests.support import run

CHUNK = 64 << 10
SLACK = 64 << 10  # headers, data descriptors: far less than this per entry


class CountingFiles(MemoryProjectFiles):
    """In-memory files that count the bytes read and refuse whole-file reads."""

    def __init__(self) -> None:
        super().__init__()
        self.read_bytes = 0

    async def read(self, path: ProjectPath) -> bytes:
        raise AssertionError("export must stream files, never read them whole")

    async def read_chunks(
        self, path: ProjectPath, chunk_size: int = 1 << 20
    ) -> AsyncIterator[bytes]:
        data = self._folder(path.parent)[path.name]
        assert isinstance(data, bytes)
        for start in range(0, len(data), chunk_size):
            piece = data[start : start + chunk_size]
            self.read_bytes += len(piece)
            yield piece


def _big(files: MemoryProjectFiles, total: int, per_file: int) -> None:
    async def fill() -> None:
        for i in range(total // per_file):
            block = hashlib.sha256(str(i).encode()).digest() * (per_file // 32)
            await MemoryProjectFiles.write(files, parse_path(f"data/{i:04d}.bin"), block)

    run(fill())


@pytest.mark.parametrize("size_mib", [4, 32])
def test_bytes_held_in_flight_do_not_grow_with_project_size(size_mib: int) -> None:
    files = CountingFiles()
    _big(files, size_mib << 20, 1 << 20)
    job = export_archive(files, SOURCE, chunk_size=CHUNK)
    handed_out = 0
    worst = 0

    async def sink(chunk: bytes) -> None:
        nonlocal handed_out, worst
        assert len(chunk) <= 2 * CHUNK + SLACK
        handed_out += len(chunk)
        worst = max(worst, files.read_bytes - handed_out)

    run(job.write_to(sink))
    assert files.read_bytes == size_mib << 20
    assert worst <= 2 * CHUNK + SLACK, worst


def test_chunks_are_handed_out_as_files_are_read() -> None:
    files = CountingFiles()
    _big(files, 8 << 20, 1 << 20)
    job = export_archive(files, SOURCE, chunk_size=CHUNK)
    first: list[int] = []

    async def sink(chunk: bytes) -> None:
        first.append(files.read_bytes)

    run(job.write_to(sink))
    assert first[0] <= 2 * CHUNK


@pytest.mark.cpython_only  # tracemalloc does not trace Pyodide's allocator faithfully
def test_python_heap_peak_of_a_48_mib_export_stays_small() -> None:
    import tracemalloc

    files = project({})
    _big(files, 48 << 20, 4 << 20)
    digest = hashlib.sha256()
    job = export_archive(files, SOURCE)

    async def sink(chunk: bytes) -> None:
        digest.update(chunk)

    tracemalloc.start()
    try:
        summary = run(job.write_to(sink))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB"
    assert summary.bytes == 48 << 20


def test_a_small_project_exports_in_few_pieces() -> None:
    """The export's own bytes are gathered and joined to the next file's first bytes: a
    one-file project is two pieces (header and data; descriptor, manifest and directory)."""
    _, _, chunks = export(project({"a.txt": b"a"}))
    assert len(chunks) == 2


def test_an_export_cut_into_batches_is_the_export_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A project of more files than a batch is relayed in several batches (here of two files),
    with folder headers between them, and gives the very bytes and manifest of one batch."""
    from core.archive import export as export_module
    from core.archive.export import ChunkRelay

    files = project(
        {f"d{i % 3}/f{i}.txt": bytes([i]) * (i * 37) for i in range(7)},
        folders=["d1/empty", "e"],
    )
    whole, summary, _ = export(files)
    batches: list[int] = []

    class Counting(ChunkRelay):
        async def relay(self, files, items, sink):  # type: ignore[no-untyped-def]
            batches.append(len(items))
            return await super().relay(files, items, sink)

    monkeypatch.setattr(export_module, "BATCH_FILES", 2)
    cut, cut_summary, _ = export(files, relay=Counting())
    assert batches == [2, 2, 2, 1]
    assert cut == whole
    assert cut_summary == summary
