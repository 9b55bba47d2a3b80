"""Archive operations: ``project.export`` and ``project.import`` (SPEC §10, §11; docs/archives.md).

Both are thin: the rules live in :mod:`core.archive`.

- ``project.export {project}`` streams the project's deterministic ``.zip`` as the answer's
  body (chunks reach the page as they are produced); the final result is the
  :class:`~core.archive.export.ArchiveSummary` ``{name, filename, size, manifest_sha256, files,
  bytes, folders, skipped, left_out}`` (``left_out``: the names left out and why, issue 29
  item 14), and the audit record carries size, manifest sha256 and counts.
  The files' bytes are moved by the placement's relay (``services.file_relay``; the browser
  host's moves them outside the Wasm heap), Python's :class:`~core.archive.export.ChunkRelay`
  where it has none.
- ``project.import {name?, case_sensitive?}`` takes the zip as the message body, validates
  every entry first (:func:`~core.archive.plan.plan_import`: nothing is created on a refusal),
  then creates a NEW local OPFS project through the catalog and writes the plan into it
  (:func:`~core.archive.apply.apply_import`). If anything fails after the project was created, the
  project is deleted again, so the project list is unchanged.
"""

from __future__ import annotations

import logging

from pydantic import Field

from core.archive.apply import apply_import
from core.archive.export import ArchiveSummary, ExportSource, export_archive
from core.archive.plan import ImportBounds, plan_import
from core.custody.environment import load_environments
from core.host.context import HostContext
from core.host.operations import Call, Outcome
from core.host.project_ops import ProjectInfo
from core.model import Contract
from core.paths import parse_path
from core.ports import Sink
from core.refusals import Code, Refused
from core.vocabulary import ProjectId

__all__ = ["IMPORT_BOUNDS", "ArchiveSummary", "ExportArgs", "ImportAnswer", "ImportArgs"]

log = logging.getLogger("voicebox.host")

IMPORT_BOUNDS = ImportBounds()
"""The bounds every ``project.import`` is held to (see
:class:`core.archive.plan.ImportBounds`)."""

FALLBACK_NAME = "Imported project"


class ExportArgs(Contract):
    """``project.export``: the project to export, or only one ``folder`` of it (``""``: the
    whole project)."""

    project: ProjectId
    folder: str = Field(default="", max_length=5000)


class ImportArgs(Contract):
    """``project.import``: the new project's display name (default: the archive manifest's
    name, else "Imported project"); ``case_sensitive`` lets names that differ only by case
    both be imported (OPFS keeps them apart; off by default, the safe choice)."""

    name: str | None = Field(default=None, max_length=1000)
    case_sensitive: bool = False


class ImportAnswer(Contract):
    """The new project, what was written into it, and the archive it came from."""

    project: ProjectInfo
    files: int
    folders: int
    bytes: int
    archive_size: int
    archive_sha256: str
    manifest: bool = Field(description="True when the archive carried a manifest (checked).")
    source_env_key: str | None = None


async def local_env_key(ctx: HostContext) -> str | None:
    """The envKey of the environment this host serves, or ``None`` when it has none yet."""
    try:
        envs = await load_environments(ctx.state)
    except Refused:
        return None
    return next((e.key for e in envs.environments if e.kind == "local"), None)


async def project_export(call: Call[ExportArgs]) -> Outcome:
    """Refuses ``project-not-found``, ``permission-required`` (picked folder), path codes and
    ``not-a-directory``/``file-not-found`` for ``folder``; a storage refusal while streaming
    (a file vanished) refuses the whole answer."""
    opened = await call.ctx.catalog.open(call.args.project)
    folder = parse_path(call.args.folder) if call.args.folder else None
    if folder is not None:
        found = await opened.files.stat(folder)
        if found is None or found.kind != "dir":
            raise Refused(
                Code.NOT_A_DIRECTORY if found else Code.FILE_NOT_FOUND,
                f"'{folder}' is not a folder of the project.",
                field="folder",
            )
    source = ExportSource(
        name=opened.manifest.name,
        exported_at_ms=None,  # as of the newest change it contains: re-exports are identical
        changed_at_ms=opened.manifest.updated_at,
        env_key=await local_env_key(call.ctx),
        project_id=opened.manifest.id,
    )
    export = export_archive(opened.files, source, relay=call.ctx.services.file_relay, folder=folder)
    # The audit record is written after the stream ends; write() fills its details then.
    details: dict[str, str | int | bool | None] = {}

    async def write(sink: Sink) -> ArchiveSummary:
        summary = await export.write_to(sink)
        details.update(
            size=summary.size,
            manifest_sha256=summary.manifest_sha256,
            files=summary.files,
            bytes=summary.bytes,
            folders=summary.folders,
            skipped=summary.skipped,
            folder=str(folder) if folder else None,
        )
        return summary

    placeholder = ArchiveSummary(
        name=source.name,
        filename="",
        size=0,
        manifest_sha256="0" * 64,
        files=0,
        bytes=0,
        folders=0,
        skipped=0,
    )
    return Outcome(placeholder, writer=write, project=opened.manifest.id, details=details)


async def project_import(call: Call[ImportArgs]) -> Outcome:
    """Refuses the archive codes (``archive-invalid``, ``archive-entry-*``,
    ``archive-ratio-exceeded``, ``archive-too-large``) with nothing created, ``name-invalid``,
    ``storage-quota-exceeded``/``storage-failed`` (the new project is removed again)."""
    plan = plan_import(
        call.body or b"",
        bounds=IMPORT_BOUNDS,
        case_insensitive_target=not call.args.case_sensitive,
    )
    name = call.args.name or (plan.manifest.name if plan.manifest else FALLBACK_NAME)
    catalog = call.ctx.catalog
    # Staged: the project has no manifest (is not listed) until every file is written; a tab
    # closed mid-import leaves an unfinished root that the next start sweeps away.
    manifest, files = await catalog.create_staged(name)
    try:
        written = await apply_import(plan, files)
        await catalog.commit(manifest, files)
    except BaseException:
        try:
            await catalog.abandon(manifest.id)
        except Exception:
            log.exception("could not remove the half-imported project %s", manifest.id)
        raise
    source_env = plan.manifest.source_env_key if plan.manifest else None
    answer = ImportAnswer(
        project=ProjectInfo.of(manifest),
        files=written.files,
        folders=written.folders,
        bytes=written.bytes,
        archive_size=plan.archive_size,
        archive_sha256=plan.archive_sha256,
        manifest=plan.manifest is not None,
        source_env_key=source_env,
    )
    return Outcome(
        answer,
        project=manifest.id,
        details={
            "files": written.files,
            "bytes": written.bytes,
            "archive_size": plan.archive_size,
            "archive_sha256": plan.archive_sha256,
            "manifest": plan.manifest is not None,
            "source_env_key": source_env,
        },
    )
