"""Applying an import plan: writing it into a project all or nothing (SPEC §10;
docs/archives.md).

:func:`apply_import` writes a plan (:func:`core.archive.plan.plan_import`) into a
:class:`~core.ports.ProjectFiles`: it refuses ``already-exists`` before writing if any target
exists, reads every file back to check its sha256, and on any failure deletes every file and
folder it made.
"""

from __future__ import annotations

import contextlib
import hashlib

from pydantic import Field

from core.archive.manifest import CHUNK_BYTES
from core.archive.plan import ImportPlan, PlannedEntry, read_entry
from core.model import Contract
from core.paths import ProjectPath
from core.ports import ProjectFiles
from core.projects.lanes import in_lanes, overlaps
from core.refusals import Code, Refused

__all__ = ["ImportResult", "apply_import"]


class ImportResult(Contract):
    """What :func:`apply_import` wrote: ``files`` and ``folders`` made, ``bytes`` written."""

    files: int = Field(ge=0)
    folders: int = Field(ge=0)
    bytes: int = Field(ge=0)


async def _sha256_of(files: ProjectFiles, path: ProjectPath) -> str:
    digest = hashlib.sha256()
    async for chunk in files.read_chunks(path, CHUNK_BYTES):
        digest.update(chunk)
    return digest.hexdigest()


IMPORT_LANES = 8
"""Files written (and read back) at once (issue 34: a 10,000-file zip)."""
LANE_FILE_BYTES = 4 << 20
"""A file larger than this is written alone, so memory holds at most
``IMPORT_LANES`` × this plus one large file."""


async def _taken(
    files: ProjectFiles, folders: set[tuple[str, ...]]
) -> dict[tuple[str, ...], set[str]]:
    """The names in each of ``folders`` (empty for one that does not exist, or that a file
    stands in the way of: the write there then fails and the import rolls back)."""
    out: dict[tuple[str, ...], set[str]] = {}
    for folder in sorted(folders):
        try:
            out[folder] = set(await files.names(folder))
        except Refused as exc:
            if exc.code not in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
                raise
            out[folder] = set()
    return out


async def apply_import(plan: ImportPlan, files: ProjectFiles) -> ImportResult:
    """Write ``plan`` into ``files``, all or nothing (SPEC §10).

    Refuses ``already-exists`` (nothing written) if any planned file or folder exists (each
    folder's names read once, issue 34). Then makes the folders, writes each file (atomic per
    file, :meth:`ProjectFiles.write`), reads it back and checks its sha256 against the plan —
    which was checked against the archive's manifest when it had one — refusing
    ``storage-failed`` on a difference. Files up to :data:`LANE_FILE_BYTES` go
    :data:`IMPORT_LANES` at a time (:func:`core.projects.lanes.in_lanes`), larger ones alone.
    On any failure it deletes every file and folder it made and re-raises the original
    refusal. Memory: at most ``IMPORT_LANES`` small files' bytes and one large file's.
    """
    folders = plan.folders
    targets = (*folders, *(e.path for e in plan.entries))
    taken = await _taken(files, {path.parent for path in targets})
    existed: set[ProjectPath] = set()
    for path in targets:
        if path.name not in taken[path.parent]:
            continue
        existing = await files.stat(path)
        if existing is not None and not (existing.kind == "dir" and path in folders):
            raise Refused(Code.ALREADY_EXISTS, f"'{path}' already exists in the target.")
        if existing is not None:
            existed.add(path)
    made: list[ProjectPath] = []
    written: list[ProjectPath] = []

    async def put(entry: PlannedEntry) -> None:
        _, sha, data = read_entry(plan._zip, plan._infos[str(entry.path)], keep=True)
        assert data is not None
        if sha != entry.sha256:
            raise Refused(Code.ARCHIVE_INVALID, f"'{entry.path}' changed since planning.")
        written.append(entry.path)
        await files.write(entry.path, data)
        del data
        if await _sha256_of(files, entry.path) != entry.sha256:
            raise Refused(Code.STORAGE_FAILED, f"'{entry.path}' does not read back as written.")

    try:
        for folder in folders:
            if folder not in existed:
                await files.mkdir(folder)
                made.append(folder)
        entries = [e for e in plan.entries if e.kind == "file"]
        small = [e for e in entries if e.size <= LANE_FILE_BYTES]
        await in_lanes(small, put, IMPORT_LANES, overlap=overlaps(files))
        await in_lanes([e for e in entries if e.size > LANE_FILE_BYTES], put, 1, overlap=False)
    except BaseException:
        await _roll_back(files, written, made)
        raise
    return ImportResult(files=len(written), folders=len(made), bytes=plan.total_bytes)


async def _roll_back(
    files: ProjectFiles, written: list[ProjectPath], made: list[ProjectPath]
) -> None:
    """Best effort: delete what this import wrote, then the folders it made, deepest first."""
    for path in reversed(written):
        with contextlib.suppress(Exception):  # the caller must see the original failure
            await files.delete(path)
    for folder in sorted(made, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(Exception):
            await files.delete(folder)
