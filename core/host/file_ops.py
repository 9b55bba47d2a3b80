"""File operations inside one project: ``file.list``, ``file.walk``, ``file.read``,
``file.write``, ``file.mkdir``, ``file.delete``, ``file.move`` (SPEC §3, §11).

Every path passes the one path rule (:func:`core.paths.parse_path`) before storage is touched,
so ``..``, absolute paths, NUL and the project's ``.voicebox/`` (in any letter case) are
refused with nothing written. Listings hide only the project's ``.voicebox/`` (the storage
adapter never lists its own atomic-write temporaries); whatever else a folder holds is shown,
also names the file operations refuse (:func:`visible`).
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from core.host.operations import Call, Outcome
from core.model import Contract
from core.paths import META_DIR, ProjectPath, parse_path
from core.ports import Entry, ProjectFiles
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused

__all__ = ["FileDigest", "visible"]

MAX_WALK_ENTRIES = 200_000
PathText = str


class FolderArgs(Contract):
    """A folder of a project; ``""`` is the project root."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
    folder: PathText = Field(default="", max_length=5000)


class PathArgs(Contract):
    """One path in a project."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
    path: PathText = Field(max_length=5000)


class WriteArgs(PathArgs):
    """``file.write``: the bytes travel as the message body. ``if_absent`` refuses overwrite."""

    if_absent: bool = False


class DeleteArgs(PathArgs):
    """``file.delete``: ``recursive`` is needed for a non-empty folder."""

    recursive: bool = False


class MoveArgs(Contract):
    """``file.move``: rename the file ``src`` to ``dst`` (files only)."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
    src: PathText = Field(max_length=5000)
    dst: PathText = Field(max_length=5000)


class EntryInfo(Contract):
    """One listing entry; ``size`` in bytes for files."""

    name: str
    kind: str
    size: int | None = None


class Listing(Contract):
    """The entries directly inside ``folder``, sorted by name."""

    folder: str
    entries: list[EntryInfo]


class WalkEntry(Contract):
    """One file found by ``file.walk``: project-relative path and size in bytes."""

    path: str
    size: int


class Walk(Contract):
    """Every file under ``folder``, depth-first in name order."""

    folder: str
    files: list[WalkEntry]


class FileDigest(Contract):
    """A file's identity: path, size in bytes, sha256 (hex) of its content."""

    path: str
    size: int
    sha256: str


class PathDone(Contract):
    """The path an operation acted on."""

    path: str


def visible(entry: Entry, folder: tuple[str, ...]) -> bool:
    """False only for the project's own metadata folder (``.voicebox`` at the root, exactly).

    Everything else a folder holds is shown as it is — also names the path rule refuses, such
    as a person's ``.vbx-tmp-my-draft.md`` or ``.VOICEBOX/`` (operations on them are refused
    ``path-reserved``). The host's own atomic-write temporaries never reach a listing: the
    storage adapter leaves them out (:mod:`core.projects.temporaries`)."""
    return not (folder == () and entry.name == META_DIR)


def _folder(text: str) -> tuple[str, ...]:
    return () if text == "" else parse_path(text).parts


async def _files(call: Call[FolderArgs] | Call[PathArgs]) -> ProjectFiles:
    return (await call.ctx.catalog.open(call.args.project)).files


async def file_list(call: Call[FolderArgs]) -> Outcome:
    """Refuses ``project-not-found``, ``file-not-found``, ``not-a-directory``, path codes."""
    folder = _folder(call.args.folder)
    files = await _files(call)
    entries = [
        EntryInfo(name=e.name, kind=e.kind, size=e.size)
        for e in await files.list_dir(folder)
        if visible(e, folder)
    ]
    return Outcome(Listing(folder="/".join(folder), entries=entries), project=call.args.project)


async def walk(files: ProjectFiles, folder: tuple[str, ...]) -> list[WalkEntry]:
    """Every visible file under ``folder`` (depth-first, name order); at most 200,000."""
    out: list[WalkEntry] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        entries = [e for e in await files.list_dir(current) if visible(e, current)]
        subdirs = []
        for e in entries:
            if e.kind == "dir":
                subdirs.append((*current, e.name))
            else:
                out.append(WalkEntry(path="/".join((*current, e.name)), size=e.size or 0))
                if len(out) > MAX_WALK_ENTRIES:
                    raise Refused(Code.FILE_TOO_LARGE, "The folder holds too many files to list.")
        stack.extend(reversed(subdirs))
    return sorted(out, key=lambda w: w.path)


async def file_walk(call: Call[FolderArgs]) -> Outcome:
    """Refuses as ``file.list``."""
    folder = _folder(call.args.folder)
    files = await _files(call)
    return Outcome(
        Walk(folder="/".join(folder), files=await walk(files, folder)), project=call.args.project
    )


async def file_read(call: Call[PathArgs]) -> Outcome:
    """Refuses ``file-not-found``, ``is-a-directory``, path codes."""
    path = parse_path(call.args.path)
    data = await (await _files(call)).read(path)
    digest = FileDigest(path=str(path), size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return Outcome(
        digest, body=data, project=call.args.project, details={"path": str(path), "size": len(data)}
    )


async def file_write(call: Call[WriteArgs]) -> Outcome:
    """Refuses ``already-exists`` (with ``if_absent``), ``is-a-directory``,
    ``storage-quota-exceeded`` and path codes; nothing is written on refusal."""
    path = parse_path(call.args.path)
    data = call.body or b""
    files = await _files(call)
    existing = await files.stat(path)
    if existing is not None and existing.kind == "dir":
        raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.", field="path")
    if existing is not None and call.args.if_absent:
        raise Refused(Code.ALREADY_EXISTS, f"'{path}' already exists.", field="path")
    await files.write(path, data)
    digest = FileDigest(path=str(path), size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return Outcome(
        digest,
        project=call.args.project,
        details={"path": str(path), "size": len(data), "sha256": digest.sha256},
    )


async def file_mkdir(call: Call[PathArgs]) -> Outcome:
    """Refuses ``not-a-directory`` and path codes."""
    path = parse_path(call.args.path)
    await (await _files(call)).mkdir(path)
    return Outcome(PathDone(path=str(path)), project=call.args.project, details={"path": str(path)})


async def file_delete(call: Call[DeleteArgs]) -> Outcome:
    """Refuses ``file-not-found``, ``directory-not-empty`` and path codes."""
    path = parse_path(call.args.path)
    await (await _files(call)).delete(path, recursive=call.args.recursive)
    return Outcome(
        PathDone(path=str(path)),
        project=call.args.project,
        details={"path": str(path), "recursive": call.args.recursive},
    )


async def file_move(call: Call[MoveArgs]) -> Outcome:
    """Refuses ``file-not-found``, ``already-exists``, ``is-a-directory`` and path codes."""
    src: ProjectPath = parse_path(call.args.src)
    dst: ProjectPath = parse_path(call.args.dst)
    files = await _files(call)
    st = await files.stat(src)
    if st is None:
        raise Refused(Code.FILE_NOT_FOUND, f"No file '{src}'.", field="src")
    if st.kind == "dir":
        raise Refused(
            Code.IS_A_DIRECTORY, "Folders cannot be moved; move their files.", field="src"
        )
    await files.move(src, dst)
    return Outcome(
        PathDone(path=str(dst)),
        project=call.args.project,
        details={"src": str(src), "dst": str(dst)},
    )
