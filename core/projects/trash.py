"""The project trash: a delete is a move into ``.voicebox/trash/`` that can be undone (issue 17).

Layout, inside the project's metadata folder (which no file operation may name — only the
trash operations write it)::

    .voicebox/trash/<id>/entry.json      the TrashEntry (schema voicebox-trash-v1)
    .voicebox/trash/<id>/data/<leaf>…    the deleted file, or the deleted folder's tree

``<id>`` is ``t<ms>-<8 hex>``: the deletion time (ms since the epoch, 13 digits) and 4 random
bytes, so ids sort by time and never repeat. :meth:`Trash.put` lists the path
(:func:`~core.projects.tree.survey`), hashes every file (sha256, streamed), writes
``entry.json``, then moves the files (:func:`~core.projects.tree.move_tree`: rolled back on a
failure, and ``entry.json`` removed, so a refused delete changes nothing). :meth:`Trash.restore`
first checks every file in the trash against the sha256 recorded when it was deleted — a
mismatch or a missing file is refused ``storage-failed`` with nothing moved — then moves the
tree back (or beside it, "Keep both"), so what comes back is byte-identical. :meth:`Trash.empty`
deletes entries for good.

Why a trash and not an undo: a delete must survive a reload, a closed tab and a restart of the
host before a person notices it (an undo stack lives in one page's memory), it must work the
same for a folder of thousands of files, and it must cost no copy (a move within one storage is
a rename of each file). A trash also gives the person a list to look at.

An entry whose ``entry.json`` cannot be read is listed as damaged (``damaged=True``, only its
id), never dropped, so :meth:`Trash.empty` can still remove it.
"""

from __future__ import annotations

import hashlib
from typing import Final, Literal

from pydantic import Field, ValidationError

from core.model import Contract
from core.paths import META_DIR, ProjectPath, parse_path
from core.ports import Clock, ProjectFiles, Randomness
from core.projects.tree import Tree, free_path, move_tree, survey
from core.refusals import Code, Refused

__all__ = ["TRASH_ID_PATTERN", "Trash", "TrashEntry", "TrashFile"]

TRASH_DIR = (META_DIR, "trash")
SCHEMA: Final = "voicebox-trash-v1"
TRASH_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
"""What a trash id argument may look like (the ids made here are ``t<13 digits>-<8 hex>``)."""


class TrashFile(Contract):
    """One file of a trash entry: ``path`` relative to the deleted item (``""`` when the item
    is that file), size in bytes, sha256 (hex) when it was deleted."""

    path: str
    size: int
    sha256: str


class TrashEntry(Contract):
    """One delete: the ``path`` it removed, ``kind`` ``file``/``dir``, when (ms), its files
    and its folders (relative to the item), ``bytes`` in all. ``damaged`` marks an entry whose
    record could not be read (then only ``id`` is meaningful)."""

    schema_: Literal["voicebox-trash-v1"] = Field(default=SCHEMA, alias="schema")
    id: str
    path: str
    kind: Literal["file", "dir"]
    deleted_at: int
    files: list[TrashFile]
    folders: list[str] = Field(default_factory=list)
    bytes: int = 0
    damaged: bool = False


def _meta(*parts: str) -> ProjectPath:
    return parse_path("/".join((*TRASH_DIR, *parts)), allow_meta=True)


def _rel(path: str) -> tuple[str, ...]:
    return tuple(path.split("/")) if path else ()


async def _sha256(files: ProjectFiles, path: ProjectPath) -> str:
    digest = hashlib.sha256()
    async for chunk in files.read_chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


class Trash:
    """The trash of one project's ``files`` (module docstring). ``clock`` dates entries,
    ``random`` makes their ids unique."""

    def __init__(self, files: ProjectFiles, clock: Clock, random: Randomness) -> None:
        self._files = files
        self._clock = clock
        self._random = random

    def _data(self, entry: TrashEntry) -> ProjectPath:
        return _meta(entry.id, "data", parse_path(entry.path).name)

    async def put(self, path: ProjectPath) -> TrashEntry:
        """Move the file or folder ``path`` into the trash; returns its entry.

        Refuses as :func:`~core.projects.tree.survey` and
        :func:`~core.projects.tree.move_tree` do; on a refusal nothing is in the trash and
        ``path`` is as it was."""
        tree = await survey(self._files, path)
        now = self._clock.now_ms()
        entry = TrashEntry(
            id=f"t{now:013d}-{self._random.token_bytes(4).hex()}",
            path=str(path),
            kind="file" if tree.kind == "file" else "dir",
            deleted_at=now,
            files=[
                TrashFile(
                    path="/".join(rel),
                    size=size,
                    sha256=await _sha256(self._files, ProjectPath((*path.parts, *rel))),
                )
                for rel, size in tree.files
            ],
            folders=["/".join(rel) for rel in tree.folders],
            bytes=tree.bytes,
        )
        record = _meta(entry.id, "entry.json")
        await self._files.write(record, entry.model_dump_json(by_alias=True).encode())
        try:
            await move_tree(self._files, tree, self._data(entry))
        except Refused as exc:
            if exc.code != Code.STORAGE_FAILED:  # rolled back: the entry goes too
                await self._files.delete(_meta(entry.id), recursive=True)
            raise
        return entry

    async def entries(self) -> list[TrashEntry]:
        """Every entry, newest first."""
        try:
            ids = [e.name for e in await self._files.list_dir(TRASH_DIR) if e.kind == "dir"]
        except Refused as exc:
            if exc.code in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
                return []
            raise
        out = [await self._load(i) for i in ids]
        return sorted(out, key=lambda e: (e.deleted_at, e.id), reverse=True)

    async def _load(self, entry_id: str) -> TrashEntry:
        try:
            raw = await self._files.read(_meta(entry_id, "entry.json"))
            entry = TrashEntry.model_validate_json(raw)
            if entry.id != entry_id:
                raise ValueError("entry id")
            parse_path(entry.path)
            return entry
        except (Refused, ValidationError, ValueError):
            return TrashEntry(
                id=entry_id, path="", kind="file", deleted_at=0, files=[], damaged=True
            )

    async def get(self, entry_id: str) -> TrashEntry:
        """The entry ``entry_id``; refuses ``file-not-found`` (also for a damaged one)."""
        parse_path(entry_id)  # one segment, no '..', no reserved name
        if await self._files.stat(_meta(entry_id)) is None:
            raise Refused(Code.FILE_NOT_FOUND, "That item is not in the trash.", field="id")
        entry = await self._load(entry_id)
        if entry.damaged:
            raise Refused(
                Code.FILE_NOT_FOUND,
                "That trash item's record is damaged; it cannot be restored (it can be emptied).",
                field="id",
            )
        return entry

    async def restore(
        self, entry_id: str, *, on_conflict: Literal["refuse", "keep-both"] = "refuse"
    ) -> tuple[TrashEntry, ProjectPath]:
        """Put entry ``entry_id`` back where it was (or, ``keep-both``, beside what is there
        now); returns the entry and the path restored to.

        Refuses ``file-not-found`` (no such entry), ``already-exists`` (something is at the
        path and ``on_conflict`` is ``refuse``), ``storage-failed`` when a file in the trash
        is missing or its bytes differ from the sha256 recorded at delete (nothing moved),
        and what the storage refuses (rolled back)."""
        entry = await self.get(entry_id)
        target = parse_path(entry.path)
        if await self._files.stat(target) is not None:
            if on_conflict != "keep-both":
                raise Refused(
                    Code.ALREADY_EXISTS,
                    f"'{target}' exists again; restore it beside that under a new name, or "
                    "move that away first.",
                    field="id",
                )
            target = await free_path(self._files, target)
        data = self._data(entry)
        for f in entry.files:
            at = ProjectPath((*data.parts, *_rel(f.path)))
            found = await self._files.stat(at)
            if found is None or found.kind != "file" or await _sha256(self._files, at) != f.sha256:
                raise Refused(
                    Code.STORAGE_FAILED,
                    f"'{'/'.join((entry.path, f.path)) if f.path else entry.path}' in the trash "
                    "is missing or not the bytes that were deleted; nothing was restored.",
                    field="id",
                )
        tree = Tree(
            data,
            entry.kind,
            tuple((_rel(f.path), f.size) for f in entry.files),
            tuple(_rel(d) for d in entry.folders),
        )
        await move_tree(self._files, tree, target)
        await self._files.delete(_meta(entry.id), recursive=True)
        return entry, target

    async def empty(self, entry_id: str | None = None) -> list[TrashEntry]:
        """Delete entry ``entry_id`` for good, or every entry (``None``); returns what went.
        Refuses ``file-not-found`` for an unknown id."""
        if entry_id is not None:
            parse_path(entry_id)
            if await self._files.stat(_meta(entry_id)) is None:
                raise Refused(Code.FILE_NOT_FOUND, "That item is not in the trash.", field="id")
            gone = [await self._load(entry_id)]
        else:
            gone = await self.entries()
        for entry in gone:
            await self._files.delete(_meta(entry.id), recursive=True)
        return gone
