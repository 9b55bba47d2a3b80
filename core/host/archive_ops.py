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
- ``project.import {name?, case_sensitive?, files_only?}`` takes the zip as the message body,
  validates every entry first (:func:`~core.archive.plan.plan_import`: nothing is created on a
  refusal), then creates a NEW local OPFS project through the catalog and writes the plan into
  it (:func:`~core.archive.apply.apply_import`), then the archive's project memory (issue 33
  item 3). If anything fails after the project was created, the project is deleted again, so
  the project list is unchanged.
- ``project.import_preview {case_sensitive?}`` makes the same plan and writes nothing: what the
  import would create (:class:`ImportPreview`), for the person to confirm (issue 33 item 3).

Memory (issue 33 item 3; :mod:`core.archive.memory`): a whole project's export carries its
block store and mailbox, verified and free of held secrets, or says why it left them out
(``memory_left_out``). An import whose memory does not verify refuses
``archive-memory-broken`` naming what is broken, unless the person chose ``files_only`` after
seeing the preview; then the files are imported and the answer's ``memory_left_out`` says the
memory was not. A ``name`` a person gives must be free (``already-exists``, field ``name``:
the page asks for another); only a name nobody typed (the manifest's) is numbered.
"""

from __future__ import annotations

import logging

from pydantic import Field

from core.archive.apply import apply_import
from core.archive.export import (
    ArchiveSummary,
    ExportSource,
    MemorySummary,
    export_archive,
    memory_summary,
)
from core.archive.memory import collect_memory
from core.archive.plan import ImportBounds, ImportPlan, plan_import
from core.custody.environment import load_environments
from core.custody.held_secrets import refuse_held_in_project_name
from core.host.context import HostContext
from core.host.operations import Call, Outcome
from core.host.project_ops import ExportArgs, ProjectInfo
from core.host.tab_events import ProjectsChanged, tell_tabs
from core.model import Contract
from core.paths import check_project_name, parse_path
from core.ports import Sink
from core.refusals import Code, Refused

__all__ = [
    "IMPORT_BOUNDS",
    "ArchiveSummary",
    "ExportArgs",
    "ImportAnswer",
    "ImportArgs",
    "ImportPreview",
    "PreviewArgs",
]

log = logging.getLogger("voicebox.host")

IMPORT_BOUNDS = ImportBounds()
"""The bounds every ``project.import`` is held to (see
:class:`core.archive.plan.ImportBounds`)."""

FALLBACK_NAME = "Imported project"


class ImportArgs(Contract):
    """``project.import``: the new project's display name (default: the archive manifest's
    name, else "Imported project"); ``case_sensitive`` lets names that differ only by case
    both be imported (OPFS keeps them apart; off by default, the safe choice)."""

    name: str | None = Field(default=None, max_length=1000)
    case_sensitive: bool = False
    files_only: bool = Field(
        default=False,
        description="Import the files only, leaving the archive's project memory out: the "
        "person's choice after a preview said the memory is broken (issue 33 item 3).",
    )


class PreviewArgs(Contract):
    """``project.import_preview``: the archive is the body; ``case_sensitive`` as for
    ``project.import``."""

    case_sensitive: bool = False


class ImportPreview(Contract):
    """What importing the archive (the body) would create, nothing written (issue 33 item 3):
    the ``name`` from its manifest (else "Imported project"), whether another project has it
    (``name_taken``: the import then asks for another; ``suggested_name`` is free), ``files``,
    ``folders`` and their ``bytes``, the archive's ``archive_size`` (bytes) and sha256, whether
    it had a ``manifest`` and which environment exported it; the project ``memory`` it carries
    when every chain verified, else ``memory_problem`` (the ``archive-memory-broken``
    sentence); ``creates``: what the import would create, in plain sentences."""

    name: str
    name_taken: bool
    suggested_name: str
    files: int = Field(ge=0)
    folders: int = Field(ge=0)
    bytes: int = Field(ge=0)
    archive_size: int = Field(ge=0)
    archive_sha256: str
    manifest: bool
    source_env_key: str | None = None
    memory: MemorySummary | None = None
    memory_problem: str | None = None
    creates: list[str]


class ImportAnswer(Contract):
    """The new project, what was written into it, and the archive it came from; ``memory``
    the project memory imported with it, ``memory_left_out`` why the archive's memory was not
    (``files_only`` chosen) — issue 33 item 3."""

    project: ProjectInfo
    files: int
    folders: int
    bytes: int
    archive_size: int
    archive_sha256: str
    manifest: bool = Field(description="True when the archive carried a manifest (checked).")
    source_env_key: str | None = None
    memory: MemorySummary | None = None
    memory_left_out: str | None = None


def _verified_memory(plan: ImportPlan) -> MemorySummary | None:
    """The plan's memory as the manifest states it, when every chain verified (the manifest's
    counts were checked against the records, rule 8)."""
    if plan.memory_counts is None or plan.manifest is None:
        return None
    return memory_summary(plan.manifest.memory)


def _plural(n: int, one: str) -> str:
    return f"{n} {one}" if n == 1 else f"{n} {one}s"


def _creates(plan: ImportPlan, name: str, *, taken: bool) -> list[str]:
    """What an import of ``plan`` creates, in plain sentences (the preview): under ``name``,
    or — ``taken``, another project has it — under the name the person gives next, which
    ``project.import`` checks against every other project's (it never takes a taken name;
    issue 34: the preview promised “name” while saying that name was taken)."""
    project = (
        "A new project, under a name you choose next (“{name}” is taken), in this browser's "
        "storage, with a new id."
        if taken
        else "A new project “{name}” in this browser's storage, with a new id."
    ).format(name=name)
    made = [
        project,
        f"{_plural(plan.files, 'file')} ({plan.total_bytes} bytes) in "
        f"{_plural(len(plan.folders), 'folder')}.",
    ]
    counts = plan.memory_counts
    if counts is not None:
        made.append(
            f"Its memory: a block store of {_plural(counts.blocks, 'block')} "
            f"({counts.green} green) and a mailbox of {_plural(counts.letters, 'letter')} "
            f"in {_plural(counts.missions, 'mission')}."
        )
    elif plan.memory_problem is not None:
        made.append("No memory: the archive's memory is broken (below); only the files.")
    else:
        made.append("No memory: the archive carries no blocks or letters.")
    return made


def _plan(call: Call[ImportArgs] | Call[PreviewArgs]) -> ImportPlan:
    return plan_import(
        call.body or b"",
        bounds=IMPORT_BOUNDS,
        case_insensitive_target=not call.args.case_sensitive,
    )


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
    (a file vanished) refuses the whole answer. A whole project's archive carries its memory
    (:func:`~core.archive.memory.collect_memory`, checked against this host's held secrets),
    or the summary's ``memory_left_out`` says why not (issue 33 item 3)."""
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
    memory = None
    if folder is None:  # a folder's archive is files only; a whole project's carries memory
        redactor = await call.ctx.secrets.current(call.ctx.state)
        memory = await collect_memory(opened.files, redactor)
    export = export_archive(
        opened.files, source, relay=call.ctx.services.file_relay, folder=folder, memory=memory
    )
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
            memory_letters=summary.memory.letters if summary.memory else None,
            memory_blocks=summary.memory.blocks if summary.memory else None,
            memory_left_out=summary.memory_left_out is not None,
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
    ``archive-ratio-exceeded``, ``archive-too-large``; ``archive-memory-broken`` unless
    ``files_only``) with nothing created, ``name-invalid``, ``already-exists`` (field
    ``name``: a name given that another project has; issue 33 item 3), ``sanitizer_refused`` (a
    name given that holds a secret this host keeps),
    ``storage-quota-exceeded``/``storage-failed`` (the new project is removed again)."""
    plan = _plan(call)
    if plan.memory_problem is not None and not call.args.files_only:
        raise plan.memory_problem
    catalog = call.ctx.catalog
    if call.args.name:  # a name a person gave: a clash asks (issue 33 item 3), never numbers
        check_project_name(call.args.name)
        await refuse_held_in_project_name(call.ctx.secrets, call.ctx.state, call.args.name)
        await catalog.check_unique(call.args.name)
    name = call.args.name or (plan.manifest.name if plan.manifest else FALLBACK_NAME)
    memory = () if call.args.files_only else plan.memory
    # Staged: the project has no manifest (is not listed) until every file is written; a tab
    # closed mid-import leaves an unfinished root that the next start sweeps away.
    manifest, files = await catalog.create_staged(name)
    try:
        written = await apply_import(plan, files, staged=True)  # abandoned whole on failure
        for record in memory:  # before the manifest: an unfinished import is never listed
            await files.write(record.path, record.data)
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
        memory=_verified_memory(plan) if memory else None,
        memory_left_out=_memory_left_out(plan) if call.args.files_only else None,
    )
    tell_tabs(call, ProjectsChanged(project=manifest.id, how="created"))
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
            "memory_letters": answer.memory.letters if answer.memory else None,
            "memory_blocks": answer.memory.blocks if answer.memory else None,
            "memory_left_out": call.args.files_only and bool(plan.memory),
        },
    )


def _memory_left_out(plan: ImportPlan) -> str | None:
    """Why an import chosen ``files_only`` has no memory: said even when none was left out."""
    if plan.memory_problem is not None:
        return f"{plan.memory_problem.message} Only the files were imported."
    if plan.memory:
        return "The archive's project memory was left out, as you chose: only the files."
    return None


async def project_import_preview(call: Call[PreviewArgs]) -> Outcome:
    """Plan the body as ``project.import`` would and say what it would create; writes nothing.
    Refuses the archive codes of ``project.import`` (not ``archive-memory-broken``: a broken
    memory is described in ``memory_problem``, so the person can choose)."""
    plan = _plan(call)
    name = plan.manifest.name if plan.manifest else FALLBACK_NAME
    suggested = await call.ctx.catalog.unique_name(name)
    preview = ImportPreview(
        name=name,
        name_taken=suggested != name,
        suggested_name=suggested,
        files=plan.files,
        folders=len(plan.folders),
        bytes=plan.total_bytes,
        archive_size=plan.archive_size,
        archive_sha256=plan.archive_sha256,
        manifest=plan.manifest is not None,
        source_env_key=plan.manifest.source_env_key if plan.manifest else None,
        memory=_verified_memory(plan),
        memory_problem=None if plan.memory_problem is None else plan.memory_problem.message,
        creates=_creates(plan, name, taken=suggested != name),
    )
    return Outcome(preview)
