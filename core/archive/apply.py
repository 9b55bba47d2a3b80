"""Applying an import plan: writing it into a project all or nothing (SPEC §10;
docs/archives.md).

:func:`apply_import` writes a plan (:func:`core.archive.plan.plan_import`) into a
:class:`~core.ports.ProjectFiles`: it refuses ``already-exists`` before writing if any target
exists, reads every file back to check its sha256, and on any failure deletes every file and
folder it made.
"""

from __future__ import annotations

import contextlib

from pydantic import Field

from core.archive.plan import ImportPlan, PlannedEntry
from core.model import Contract
from core.paths import ProjectPath
from core.ports import ProjectFiles
from core.projects.write_many import write_many
from core.refusals import Code, Refused

__all__ = ["ImportResult", "apply_import"]


class ImportResult(Contract):
    """What :func:`apply_import` wrote: ``files`` and ``folders`` made, ``bytes`` written."""

    files: int = Field(ge=0)
    folders: int = Field(ge=0)
    bytes: int = Field(ge=0)


IMPORT_BATCH_FILES = 1000
"""The most files handed to storage in one :func:`core.projects.write_many.write_many`
(issue 34: one call per batch, not one per file)."""
IMPORT_BATCH_BYTES = 8 << 20
"""The most bytes in one batch; a file larger than this goes alone (a batch of one). Memory:
one batch's bytes (and the browser's copy of them) besides the archive."""


def _batches(entries: list[PlannedEntry]) -> list[list[PlannedEntry]]:
    """``entries`` cut into batches of at most :data:`IMPORT_BATCH_FILES` files and
    :data:`IMPORT_BATCH_BYTES` bytes (a larger file alone), in order."""
    out: list[list[PlannedEntry]] = []
    batch: list[PlannedEntry] = []
    size = 0
    for entry in entries:
        if batch and (len(batch) >= IMPORT_BATCH_FILES or size + entry.size > IMPORT_BATCH_BYTES):
            out.append(batch)
            batch, size = [], 0
        batch.append(entry)
        size += entry.size
    if batch:
        out.append(batch)
    return out


async def _existing(files: ProjectFiles, plan: ImportPlan) -> set[ProjectPath]:
    """The planned folders that already exist in ``files``; refuses ``already-exists`` when a
    planned file, or a planned folder's name, is taken by anything else. Walked from the root
    down (issue 34): a folder's names are read once, and only when the folder exists — a
    fresh project costs one listing, not one per folder."""
    folders = set(plan.folders)
    children: dict[tuple[str, ...], dict[ProjectPath, None]] = {}
    for path in (*plan.folders, *(e.path for e in plan.entries)):
        children.setdefault(path.parent, {})[path] = None
    existed: set[ProjectPath] = set()
    present: list[tuple[str, ...]] = [()]
    while present:
        folder = present.pop()
        if folder not in children:
            continue
        try:
            names = set(await files.names(folder))
        except Refused as exc:  # gone, or a file stands there: the write there then fails
            if exc.code not in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
                raise
            continue
        for path in children[folder]:
            if path.name not in names:
                continue
            existing = await files.stat(path)
            if existing is None:
                continue
            if existing.kind != "dir" or path not in folders:
                raise Refused(Code.ALREADY_EXISTS, f"'{path}' already exists in the target.")
            existed.add(path)
            present.append(path.parts)
    return existed


def _bare_folders(plan: ImportPlan, new: list[ProjectPath]) -> list[ProjectPath]:
    """The folders of ``new`` that no planned file lies in: the only ones made on their own
    (the files' folders are made by the writes, issue 34)."""
    holding: set[tuple[str, ...]] = set()
    for entry in plan.entries:
        if entry.kind == "file":
            parts = entry.path.parent
            for depth in range(1, len(parts) + 1):
                holding.add(parts[:depth])
    return [folder for folder in new if folder.parts not in holding]


async def apply_import(
    plan: ImportPlan, files: ProjectFiles, *, staged: bool = False
) -> ImportResult:
    """Write ``plan`` into ``files``, all or nothing (SPEC §10).

    Refuses ``already-exists`` (nothing written) if any planned file or folder exists
    (:func:`_existing`: each existing folder's names read once, issue 34). Then writes the
    files in batches (:func:`_batches`; one :func:`core.projects.write_many.write_many` each —
    in the browser one call per batch, issue 34), which make the folders the files lie in
    (``ProjectFiles.write`` makes missing parents); only the folders no file lies in are made
    on their own. Each file atomic (as :meth:`ProjectFiles.write`), its bytes taken from the
    archive without hashing them again (:meth:`~core.archive.plan.ImportPlan.file_bytes`),
    then read back from storage; its sha256 read back must be the plan's — which was checked
    against the archive's manifest when it had one — else ``storage-failed``. A storage
    refusal (``storage-quota-exceeded``, ``storage-failed``, …) is raised as it came. On any
    failure it deletes every file it wrote and every folder it was to make (deepest first),
    and re-raises the original refusal. Memory: one batch's bytes
    (:data:`IMPORT_BATCH_BYTES`, or one larger file) besides the archive.

    ``staged``: ``files`` is a staged root (:meth:`ProjectCatalog.create_staged`) that no one
    sees until the caller commits it and that the caller removes whole on any failure — then
    the files are written in place (``in_place`` of :meth:`~core.ports.WritesMany.write_many`:
    no temporary and move each; issue 34, stop 43), the root being the unit of atomicity.
    Every other law above holds as it is (the read-back, the rollback, the refusals).
    """
    existed = await _existing(files, plan)
    made = [folder for folder in plan.folders if folder not in existed]
    written: list[ProjectPath] = []
    try:
        for folder in _bare_folders(plan, made):
            await files.mkdir(folder)
        for batch in _batches([e for e in plan.entries if e.kind == "file"]):
            body = b"".join(plan.file_bytes(entry) for entry in batch)
            items = [(e.path, e.size) for e in batch]
            done = await write_many(files, items, body, in_place=staged)
            del body
            got_back = list(zip(batch, done.read_back, strict=True))
            written.extend(entry.path for entry, got in got_back if got is not None)
            if done.failure is not None:
                raise done.failure
            for entry, got in got_back:
                if got != entry.sha256:
                    raise Refused(
                        Code.STORAGE_FAILED, f"'{entry.path}' does not read back as written."
                    )
    except BaseException:
        await _roll_back(files, written, made)
        raise
    return ImportResult(files=len(written), folders=len(made), bytes=plan.total_bytes)


async def _roll_back(
    files: ProjectFiles, written: list[ProjectPath], made: list[ProjectPath]
) -> None:
    """Best effort: delete what this import wrote, then the folders it made (or was to make:
    one not made yet is skipped), deepest first."""
    for path in reversed(written):
        with contextlib.suppress(Exception):  # the caller must see the original failure
            await files.delete(path)
    for folder in sorted(made, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(Exception):
            await files.delete(folder)
