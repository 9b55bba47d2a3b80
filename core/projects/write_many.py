"""Many files written and each read back, in one call where storage allows (issue 34).

An import of a 10,000-file zip wrote each file through :meth:`ProjectFiles.write` and read it
back through :meth:`ProjectFiles.read_chunks`: in the browser that was one crossing from
Python into JavaScript and several waits on storage per file, against the export's one read.
:func:`write_many` hands a whole batch to an adapter that :class:`~core.ports.WritesMany`
(the browser's: ``write_many`` of ``browser_host/opfs.py``, ``writeMany`` in
``worker/opfs-io.mjs``): one call, the writes and read-backs in lanes there. Over any other
adapter it does the same file by file here (:data:`FALLBACK_LANES` at a time where the
adapter's waits overlap), with the same outcome: a :class:`~core.ports.WrittenMany`.

The adapter only moves the bytes and reports what it read back; whether that is what was
meant is decided by the caller (:func:`core.archive.apply.apply_import` compares each digest
with the archive's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from core.paths import ProjectPath
from core.ports import ProjectFiles, WritesMany, WrittenMany
from core.projects.lanes import in_lanes, overlaps

__all__ = ["FALLBACK_LANES", "READ_BACK_CHUNK", "write_many"]

FALLBACK_LANES = 8
"""Files written and read back at once by the file-by-file way."""
READ_BACK_CHUNK = 1 << 20
"""Bytes read at a time when a file is read back file by file."""


async def write_many(
    files: ProjectFiles,
    items: Sequence[tuple[ProjectPath, int]],
    body: bytes,
    *,
    in_place: bool = False,
) -> WrittenMany:
    """Write each ``(path, size)`` of ``items`` (its bytes the next ``size`` bytes of ``body``)
    atomically, then read it back and hash it: :class:`~core.ports.WrittenMany` (``read_back``
    per file, the first ``failure``; nothing raised for one file's failure). Through
    :meth:`~core.ports.WritesMany.write_many` when ``files`` has it (one call; ``in_place`` as
    it says: only for a staged root), else file by file (each through
    :meth:`ProjectFiles.write`, ``in_place`` or not). Refuses ``args-invalid``-free: the caller
    gives sizes that add up to ``body``."""
    if isinstance(files, WritesMany):
        return await files.write_many(items, body, in_place=in_place)
    read_back: list[str | None] = [None] * len(items)
    failures: list[Exception] = []
    starts = []
    offset = 0
    for _, size in items:
        starts.append(offset)
        offset += size

    async def one(index: int) -> None:
        if failures:
            return
        path, size = items[index]
        data = body[starts[index] : starts[index] + size]
        try:
            await files.write(path, data)
        except Exception as exc:  # reported as the answer's failure, never raised here
            failures.append(exc)
            return
        read_back[index] = ""
        digest = hashlib.sha256()
        try:
            async for chunk in files.read_chunks(path, READ_BACK_CHUNK):
                digest.update(chunk)
        except Exception as exc:
            failures.append(exc)
            return
        read_back[index] = digest.hexdigest()

    await in_lanes(range(len(items)), one, FALLBACK_LANES, overlap=overlaps(files))
    return WrittenMany(tuple(read_back), failures[0] if failures else None)
