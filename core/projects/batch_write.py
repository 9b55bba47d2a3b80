"""Many new files written in one call (issue 34: a folder upload at the platform's speed).

A folder upload of 10,000 one-line files cost one host call, one existence check and one
audit record per file (≈ 92 files/s). :func:`write_batch` writes a batch of new files — the
page sends :data:`UPLOAD_BATCH_FILES` files or :data:`UPLOAD_BATCH_BYTES` bytes at a time —
under the same rules as ``file.write`` with ``if_absent`` (:mod:`core.host.file_ops`):

- **Atomic per file.** Each file goes down through :meth:`ProjectFiles.write` (temporary +
  move): a file is there whole or not at all, whatever happens to the batch.
- **Nothing overwritten by surprise.** A path that is taken (a file or a folder), taken in
  its NFC spelling (``path-nfc-collision``), refused by the path rule, or repeated in the batch
  is not written: it comes back in ``conflicts`` with its refusal code and sentence, and the
  page asks the person (Replace / Keep both) through ``file.write`` for exactly those. The
  existence check reads each parent folder's names once (:meth:`ProjectFiles.names`) instead
  of one ``stat`` per file.
- **One write path.** The files go down as the import's do, through
  :func:`core.projects.write_many.write_many` (issue 34, stop 41: in the browser one call into
  ``writeMany`` a batch, each file written through a temporary and moved, read back and hashed
  beside Python; the upload wrote file by file, one crossing and several storage waits each).
  A file is answered ``written`` only when it read back as sent.
- **Nothing lost.** When the storage refuses one (a full disk), no further write starts; every
  file written (before it, or in flight beside it) stays and is answered in ``written``, the
  refused one and the rest come back in ``conflicts`` with that refusal, and ``stopped`` is
  true.
- **Receipts.** ``written`` holds each file's receipt (path, size, sha256, the spelling it was
  sent in); :func:`batch_manifest` is the sha256 over them in order, which the call's ONE audit
  record holds (``manifest_sha256``, beside the counts and the first and last path): the
  record names the batch, the answer names every file, and anyone holding both can check that
  they belong together. An audit record holds at most 32 scalar details, so it cannot list
  1,000 paths itself.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from core.paths import ProjectPath, parse_new_path
from core.ports import ProjectFiles
from core.projects.composed import twin_refusal
from core.projects.write_many import write_many
from core.refusals import Code, Refused

__all__ = [
    "MAX_BATCH_FILES",
    "UPLOAD_BATCH_BYTES",
    "UPLOAD_BATCH_FILES",
    "BatchOutcome",
    "Conflict",
    "Written",
    "batch_manifest",
    "write_batch",
]

MAX_BATCH_FILES = 1000
"""The most files one ``file.write_batch`` takes (the message's args stay far below 1 MiB)."""
UPLOAD_BATCH_FILES = 200
"""The files the page's folder upload sends per batch (``LIMITS.upload_batch_files``): small
enough that Cancel, checked between batches, stops an upload within about 0.1 s here."""
UPLOAD_BATCH_BYTES = 8 << 20
"""The bytes the page sends per batch (``LIMITS.upload_batch_bytes``); a larger file goes alone
(a batch of one)."""


@dataclass(frozen=True, slots=True)
class Written:
    """One file written: its path as stored, size in bytes, sha256 hex, and the spelling it was
    sent in when that was composed to NFC (else ``None``)."""

    index: int
    path: str
    size: int
    sha256: str
    composed_from: str | None


@dataclass(frozen=True, slots=True)
class Conflict:
    """One file not written: its index in the batch, its path as sent, the refusal code
    (``already-exists``, ``is-a-directory``, ``not-a-directory``, ``path-nfc-collision``, a path
    code, or the storage's refusal) and its sentence."""

    index: int
    path: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What :func:`write_batch` did: files ``written`` and ``conflicts`` (both in batch order)
    and whether a storage refusal ``stopped`` it."""

    written: list[Written]
    conflicts: list[Conflict]
    stopped: bool


def batch_manifest(written: Sequence[Written]) -> str:
    """sha256 hex of the lines ``<sha256> <size> <path>\\n`` of ``written``, in order."""
    digest = hashlib.sha256()
    for w in written:
        digest.update(f"{w.sha256} {w.size} {w.path}\n".encode())
    return digest.hexdigest()


async def _names(files: ProjectFiles, folder: tuple[str, ...]) -> set[str] | Refused:
    """The names in ``folder`` (empty when it does not exist yet), or the refusal saying it
    cannot hold files (a file on the way: ``not-a-directory``)."""
    try:
        return set(await files.names(folder))
    except Refused as exc:
        if exc.code == Code.FILE_NOT_FOUND:
            return set()
        return exc


async def write_batch(
    files: ProjectFiles, entries: Sequence[tuple[str, int]], body: bytes
) -> BatchOutcome:
    """Write the new files ``entries`` (``(path as sent, size in bytes)``, their bytes
    ``body`` one after another) into ``files`` (module docstring).

    Refuses ``args-invalid`` (nothing written) when the sizes do not add up to the body's
    length. Every other refusal is per file, in the outcome."""
    if sum(size for _, size in entries) != len(body):
        raise Refused(
            Code.ARGS_INVALID,
            f"The files' sizes add up to {sum(s for _, s in entries)} bytes; the body holds "
            f"{len(body)}.",
            field="files",
        )
    conflicts: dict[int, Conflict] = {}
    planned: list[tuple[int, ProjectPath, str | None, int, int]] = []
    seen: set[str] = set()
    offset = 0
    for index, (text, size) in enumerate(entries):
        start, offset = offset, offset + size
        try:
            path, sent = parse_new_path(text)
        except Refused as exc:
            conflicts[index] = Conflict(index, text, exc.code.value, exc.message)
            continue
        if str(path) in seen:
            conflicts[index] = Conflict(
                index, text, Code.ALREADY_EXISTS.value, f"'{path}' is twice in this batch."
            )
            continue
        seen.add(str(path))
        planned.append((index, path, sent, start, size))
    parents = sorted({p.parent for _, p, _, _, _ in planned})
    found = {folder: await _names(files, folder) for folder in parents}
    todo = []
    for index, path, sent, start, size in planned:
        names = found[path.parent]
        refused = await _refusal(files, path, sent, names)
        if refused is not None:
            conflicts[index] = Conflict(
                index, entries[index][0], refused.code.value, refused.message
            )
        else:
            todo.append((index, path, sent, start, size))
    written: dict[int, Written] = {}
    stop: list[Refused] = []
    if todo:
        # the first write alone: a wrapper's first-write work (an adopted folder's manifest,
        # core.projects.catalog.AdoptOnWrite) is done before any other write starts
        await _write_many(files, todo[:1], body, written, conflicts, stop)
    if todo[1:] and not stop:
        await _write_many(files, todo[1:], body, written, conflicts, stop)
    elif stop:
        for index, path, _, _, _ in todo[1:]:
            conflicts[index] = Conflict(index, str(path), stop[0].code.value, stop[0].message)
    return BatchOutcome(
        [written[i] for i in sorted(written)],
        [conflicts[i] for i in sorted(conflicts)],
        bool(stop),
    )


async def _write_many(
    files: ProjectFiles,
    todo: Sequence[tuple[int, ProjectPath, str | None, int, int]],
    body: bytes,
    written: dict[int, Written],
    conflicts: dict[int, Conflict],
    stop: list[Refused],
) -> None:
    """Write ``todo`` (``(index, path, spelling sent, start in body, size)``) through the one
    write path of many files, :func:`core.projects.write_many.write_many` (issue 34: the
    import's; in the browser one call into ``writeMany``, the files written and read back
    beside Python), and file each outcome: a file read back as sent is ``written`` (its receipt's
    sha256 is the read-back's); the storage's refusal, and every file not written after it, a
    conflict with that refusal (``stop`` holds it); a file written but not read back as sent is
    removed again (best effort) and answered ``storage-failed``, which stops the batch too. A
    failure that is not a :class:`Refused` is raised as it came."""
    chunk = b"".join(body[start : start + size] for _, _, _, start, size in todo)
    done = await write_many(files, [(path, size) for _, path, _, _, size in todo], chunk)
    failure = done.failure
    if failure is not None and not isinstance(failure, Refused):
        raise failure
    for (index, path, sent, start, size), got in zip(todo, done.read_back, strict=True):
        if got is None:
            refusal = failure if failure is not None else stop[0] if stop else None
            if refusal is None:  # an adapter that answered no file and no failure
                refusal = Refused(Code.STORAGE_FAILED, f"'{path}' was not written.")
                stop.append(refusal)
            conflicts[index] = Conflict(index, str(path), refusal.code.value, refusal.message)
            continue
        sha = hashlib.sha256(body[start : start + size]).hexdigest()
        if got != sha:
            with contextlib.suppress(Exception):  # the answer names it as not written
                await files.delete(path)
            wrong = Refused(Code.STORAGE_FAILED, f"'{path}' does not read back as written.")
            stop.append(wrong)
            conflicts[index] = Conflict(index, str(path), wrong.code.value, wrong.message)
            continue
        written[index] = Written(index, str(path), size, sha, sent)
    if failure is not None:
        stop.insert(0, failure)


async def _refusal(
    files: ProjectFiles, path: ProjectPath, sent: str | None, names: set[str] | Refused
) -> Refused | None:
    """Why ``path`` cannot be written as a new file, or ``None`` (module docstring)."""
    if isinstance(names, Refused):
        return names
    if sent is not None:  # as file.write: the NFC collision is named first
        twin = twin_refusal(path, names)
        if twin is not None:
            return twin
    if path.name in names:
        existing = await files.stat(path)
        if existing is not None and existing.kind == "dir":
            return Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.", field="path")
        return Refused(Code.ALREADY_EXISTS, f"'{path}' already exists.", field="path")
    return None
