"""``file.write_batch``: many new files in one call, one audit record (issue 34).

The rule is :func:`core.projects.batch_write.write_batch` (atomic per file, nothing
overwritten, nothing lost when the storage refuses, a receipt per file); this module is its
protocol surface. The page's folder upload (``page/ui/files.mjs``) sends files in batches and
asks the person only about the ``conflicts`` a batch answers, each through ``file.write``.
"""

from __future__ import annotations

from pydantic import Field

from core.host.file_ops import FileDigest
from core.host.operations import Call, Outcome
from core.host.tab_events import FilesChanged, tell_tabs
from core.model import Contract
from core.projects.batch_write import MAX_BATCH_FILES, batch_manifest, write_batch
from core.projects.project import PROJECT_ID_PATTERN

__all__ = ["BatchConflict", "BatchFile", "BatchWritten", "WriteBatchArgs", "file_write_batch"]


class BatchFile(Contract):
    """One file of a batch: its path in the project and its size in bytes (its bytes follow
    the previous file's in the message body)."""

    path: str = Field(max_length=5000)
    size: int = Field(ge=0)


class WriteBatchArgs(Contract):
    """``file.write_batch``: new files, their bytes one after another as the message body
    (at most ``MAX_BATCH_FILES`` files; the body's bound is the protocol's)."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
    files: list[BatchFile] = Field(min_length=1, max_length=MAX_BATCH_FILES)


class BatchConflict(Contract):
    """A file the batch did not write: its ``index`` in the batch, its ``path`` as sent, the
    refusal ``code`` and its sentence (``already-exists`` and ``is-a-directory`` are the ones
    the page asks about)."""

    index: int
    path: str
    code: str
    message: str


class BatchWritten(Contract):
    """What a batch did: a receipt per file ``written`` (batch order), the ``conflicts``,
    whether a storage refusal ``stopped`` it, and ``manifest_sha256`` — the sha256 of the
    receipts' lines ``<sha256> <size> <path>``, which the call's audit record holds."""

    written: list[FileDigest]
    conflicts: list[BatchConflict]
    stopped: bool
    manifest_sha256: str


async def file_write_batch(call: Call[WriteBatchArgs]) -> Outcome:
    """Write the batch (:func:`~core.projects.batch_write.write_batch`). Refuses
    ``project-not-found`` and ``args-invalid`` (the sizes do not add up to the body) with
    nothing written; every other refusal is a file's, in ``conflicts``. Audited once, with
    the counts, the bytes, the first and last path written and ``manifest_sha256``."""
    files = (await call.ctx.catalog.open(call.args.project)).files
    entries = [(f.path, f.size) for f in call.args.files]
    done = await write_batch(files, entries, call.body or b"")
    manifest = batch_manifest(done.written)
    if done.written:  # every tab's tree shows the new files (issue 33 item 2)
        paths = [w.path for w in done.written]
        tell_tabs(call, FilesChanged(project=call.args.project, paths=paths, how="batch"))
    result = BatchWritten(
        written=[
            FileDigest(path=w.path, size=w.size, sha256=w.sha256, composed_from=w.composed_from)
            for w in done.written
        ],
        conflicts=[
            BatchConflict(index=c.index, path=c.path, code=c.code, message=c.message)
            for c in done.conflicts
        ],
        stopped=done.stopped,
        manifest_sha256=manifest,
    )
    return Outcome(
        result,
        project=call.args.project,
        details={
            "files": len(done.written),
            "bytes": sum(w.size for w in done.written),
            "conflicts": len(done.conflicts),
            "stopped": done.stopped,
            "first": done.written[0].path if done.written else None,
            "last": done.written[-1].path if done.written else None,
            "manifest_sha256": manifest,
        },
    )
