"""Archive export speed and memory, over the in-memory adapter, against CPython's zipfile.

Run: ``python -m bench.archive_bench [--size-mb 200]`` (or
``python bench/archive_bench.py``). This is a script, never a timed test.

1. **Export** of a ``--size-mb`` project of mixed files (source-like text, incompressible
   binary, sparse zeros) through :func:`core.archive.export.export_archive`, the chunks counted and
   dropped (standing in for the sink that hands them to the page), against :mod:`zipfile`
   writing the same files (already in memory) with ``writestr`` into a ``BytesIO`` and into a
   temporary file.
   Throughput is MB/s of project bytes (best of ``--repeat``); peak is :mod:`tracemalloc`'s
   peak of the Python heap during the export, measured in a separate run (tracing slows
   everything), with the project's own bytes allocated before tracing starts.
(The compression section that measured deflate is gone with the option: every entry is stored,
docs/archives.md §1.)

Our export does more than the baseline per byte: a sha256 per file for the manifest (one pass),
and it reads through the storage port in 1 MiB chunks (:class:`core.archive.export.ChunkRelay`).
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.archive.export import ExportSource, export_archive
from core.memory.adapters import MemoryProjectFiles
from core.paths import parse_path

T = TypeVar("T")
MB = 1_000_000
SOURCE = ExportSource("bench", 1_767_225_600_000)


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits on real I/O (the in-memory ports never do)."""
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


def mixed_files(total: int, seed: int = 1) -> dict[str, bytes]:
    """About ``total`` bytes: 45 % source-like text in 10–400 kB files, 45 % random binary in
    1–8 MB files, 10 % zeros (sparse assets) in 1–4 MB files. Deterministic for a seed."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(2, 10)))
        for _ in range(4000)
    ]
    lines = []
    while sum(len(x) for x in lines) < 2 * MB:
        indent = "    " * rng.randint(0, 3)
        lines.append(indent + " ".join(rng.choices(words, k=rng.randint(3, 12))) + "\n")
    corpus = "".join(lines).encode()
    files: dict[str, bytes] = {}
    budget = {"text": 0.45 * total, "bin": 0.45 * total, "zero": 0.10 * total}
    i = 0
    while budget["text"] > 0:
        size = rng.randint(10_000, 400_000)
        start = rng.randrange(0, len(corpus) - size)
        files[f"src/m{i // 50:03d}/file{i:05d}.py"] = corpus[start : start + size]
        budget["text"] -= size
        i += 1
    while budget["bin"] > 0:
        size = rng.randint(1 * MB, 8 * MB)
        files[f"media/clip{i:05d}.bin"] = rng.randbytes(size)
        budget["bin"] -= size
        i += 1
    while budget["zero"] > 0:
        size = rng.randint(1 * MB, 4 * MB)
        files[f"assets/sparse{i:05d}.img"] = bytes(size)
        budget["zero"] -= size
        i += 1
    return files


def memory_project(files: dict[str, bytes]) -> MemoryProjectFiles:
    """The files in the in-memory adapter (shares the bytes objects; no copy)."""
    root = MemoryProjectFiles()

    async def fill() -> None:
        for path, data in files.items():
            await root.write(parse_path(path), data)

    drive(fill())
    return root


def ours(project: MemoryProjectFiles) -> int:
    """Export through core.archive.export, the chunks counted and dropped (as a sink that hands
    them on would); return the archive's size."""
    job = export_archive(project, SOURCE)
    seen = 0

    async def count(chunk: bytes) -> None:
        nonlocal seen
        seen += len(chunk)

    summary = drive(job.write_to(count))
    assert summary.size == seen
    return summary.size


def zipfile_bytesio(files: dict[str, bytes]) -> int:
    """CPython's zipfile, stored, into a BytesIO (the whole archive ends up in memory)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name in sorted(files):
            archive.writestr(name, files[name])
    return len(buf.getvalue())


def zipfile_file(files: dict[str, bytes]) -> int:
    """CPython's zipfile, stored, into a temporary file on disk."""
    with tempfile.TemporaryFile() as fh:
        with zipfile.ZipFile(fh, "w") as archive:
            for name in sorted(files):
                archive.writestr(name, files[name])
        return fh.tell()


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def export_section(size_mb: int, repeat: int) -> None:
    files = mixed_files(size_mb * MB)
    total = sum(len(d) for d in files.values())
    project = memory_project(files)
    print(f"\nExport: {len(files)} files, {total / MB:.1f} MB, Python {sys.version.split()[0]}")
    rows = [
        ("core.archive.export export (stored)", lambda: ours(project)),
        ("zipfile writestr → BytesIO", lambda: zipfile_bytesio(files)),
        ("zipfile writestr → temp file", lambda: zipfile_file(files)),
    ]
    figures = {}
    for label, fn in rows:
        seconds = timed(fn, repeat)
        heap = peak(fn)
        figures[label] = (total / MB / seconds, heap)
        print(f"  {label:32s} {total / MB / seconds:8.0f} MB/s   peak heap {heap / 2**20:8.1f} MiB")
    ours_speed, ours_peak = figures["core.archive.export export (stored)"]
    for label in ("zipfile writestr → BytesIO", "zipfile writestr → temp file"):
        speed, heap = figures[label]
        print(
            f"  ratio ours / {label.split(' → ')[1]:9s}: speed {ours_speed / speed:.2f}×, "
            f"peak {ours_peak / max(heap, 1):.3f}×"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    export_section(args.size_mb, args.repeat)


if __name__ == "__main__":
    main()
