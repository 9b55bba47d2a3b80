"""File operations inside one project: ``file.list``, ``file.walk``, ``file.read``,
``file.write``, ``file.mkdir``, ``file.delete``, ``file.move`` and the project trash,
``trash.list``, ``trash.restore``, ``trash.empty`` (SPEC §3, §11; issue 17).

No silent loss: ``file.delete`` moves the file or folder into the project trash
(:mod:`core.projects.trash`); only ``trash.empty`` deletes for good. A write or move onto an
existing name is refused ``already-exists`` unless the call says what to do: ``file.write``
replaces by default (saving an open file) and refuses with ``if_absent``; ``keep_both`` writes
beside it as ``name (2).ext`` (:func:`core.projects.tree.free_path`); ``file.move`` takes
``on_conflict`` ``refuse`` / ``replace`` (the file or folder there goes to the trash first) /
``keep-both``. Folders move and rename like files (:func:`core.projects.tree.move_tree`).

Every path passes the one path rule (:func:`core.paths.parse_path`) before storage is touched,
so ``..``, absolute paths, NUL and the project's ``.voicebox/`` (in any letter case) are
refused with nothing written. Listings hide only the project's ``.voicebox/`` (the storage
adapter never lists its own atomic-write temporaries); whatever else a folder holds is shown,
also names the file operations refuse (:func:`visible`).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from core.archive.names import archive_filename
from core.host.operations import Call, Outcome
from core.host.tab_events import FilesChanged, tell_tabs
from core.model import Contract
from core.paths import (
    META_DIR,
    ProjectPath,
    parse_new_path,
    parse_path,
    refuse_windows_characters,
)
from core.ports import Entry, ProjectFiles
from core.projects.composed import refuse_twins
from core.projects.edit_version import FileChanged, require_opened_version
from core.projects.listing_cache import cached_lister
from core.projects.read_through import WALK_FOLDERS, many_lister
from core.projects.trash import TRASH_ID_PATTERN, Trash, TrashEntry
from core.projects.tree import free_path, move_tree, survey
from core.refusals import Code, Refused
from core.vocabulary import ProjectId, Sha256OrEmpty

__all__ = ["EDITOR_TEXT_BYTES", "LISTING_PAGE", "MAX_LISTING_PAGE", "FileDigest", "visible"]

MAX_WALK_ENTRIES = 200_000
EDITOR_TEXT_BYTES = 20 * 1024 * 1024
"""The longest UTF-8 text the page opens in its editor (bytes); a longer one is shown
read-only in pages. Presentation, not a storage limit: the page imports it from
``page/contract.gen.mjs`` (``LIMITS.editor_text_bytes``)."""
LISTING_PAGE = 500
"""Entries in one page of a listing the file tree asks (issue 34: a 10,000-entry folder opens as
fast as a 10-entry one): the first page holds far more rows than the tree shows at once, and the
rest follow a page at a time while the tree is already usable. The page imports it from
``page/contract.gen.mjs`` (``LIMITS.listing_page``)."""
MAX_LISTING_PAGE = 5_000
"""The largest ``limit`` a ``file.list`` call may ask (refused ``message-malformed`` above)."""
OnConflict = Literal["refuse", "replace", "keep-both"]
PathText = str


class FolderArgs(Contract):
    """A folder of a project; ``""`` is the project root."""

    project: ProjectId
    folder: PathText = Field(default="", max_length=5000)


class ListArgs(FolderArgs):
    """``file.list``: a folder, and which of its entries (issue 34). Without ``limit`` the
    answer holds every entry; with it, at most ``limit`` entries from index ``offset`` of the
    listing's name order, and the answer's ``next`` says where the next page starts."""

    offset: int = Field(default=0, ge=0, description="Index of the first entry answered.")
    limit: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LISTING_PAGE,
        description="At most this many entries (LISTING_PAGE is what the tree asks); "
        "absent: every entry from offset.",
    )


class PathArgs(Contract):
    """One path in a project."""

    project: ProjectId
    path: PathText = Field(max_length=5000)


class WriteArgs(PathArgs):
    """``file.write``: the bytes travel as the message body. An existing file is replaced,
    unless ``keep_both`` (the bytes go beside it, ``name (2).ext``) or ``if_absent`` (refused
    ``already-exists``; ``keep_both`` wins when both are set)."""

    if_absent: bool = False
    keep_both: bool = Field(
        default=False, description="Write beside an existing file under the first free name."
    )
    if_sha256: Sha256OrEmpty | None = Field(
        default=None,
        description="The version the editor opened (sha256 hex of its bytes; '' for a file "
        "that did not exist): refused file-changed when the file holds another now "
        "(core/projects/edit_version.py, issue 33 item 2). Absent: a plain write.",
    )


class DeleteArgs(PathArgs):
    """``file.delete``: ``recursive`` is needed for a non-empty folder."""

    recursive: bool = False


class MoveArgs(Contract):
    """``file.move``: rename or move the file or folder ``src`` to ``dst``; ``on_conflict``
    says what happens when ``dst`` exists (``refuse``: ``already-exists``)."""

    project: ProjectId
    src: PathText = Field(max_length=5000)
    dst: PathText = Field(max_length=5000)
    on_conflict: OnConflict = "refuse"


class TrashArgs(Contract):
    """``trash.list``: the project whose trash to list."""

    project: ProjectId


class TrashRef(Contract):
    """One trash entry of a project (``trash.restore``; ``trash.empty`` without ``id``
    empties the whole trash). ``on_conflict`` for a restore onto a name that exists again:
    ``refuse`` (``already-exists``) or ``keep-both``."""

    project: ProjectId
    id: str | None = Field(default=None, pattern=TRASH_ID_PATTERN)
    on_conflict: Literal["refuse", "keep-both"] = "refuse"


class EntryInfo(Contract):
    """One listing entry; ``size`` in bytes for files."""

    name: str
    kind: str
    size: int | None = None


class Listing(Contract):
    """The entries directly inside ``folder``, sorted by name: all of them, or one page
    (``file.list`` with ``limit``; issue 34)."""

    folder: str
    entries: list[EntryInfo]
    total: int = Field(description="Entries in the folder, over every page.")
    next: int | None = Field(
        default=None, description="The offset of the next page; null when this is the last."
    )


class WalkEntry(Contract):
    """One file found by ``file.walk``: project-relative path and size in bytes."""

    path: str
    size: int


class Walk(Contract):
    """Every file under ``folder``, depth-first in name order; ``archive_filename``: the name
    an archive of that folder (of the whole project when ``folder`` is empty) is saved under
    (:func:`core.archive.names.archive_filename`; issue 34: the streamed download names its
    file before the archive's first byte)."""

    folder: str
    files: list[WalkEntry]
    archive_filename: str


class FileDigest(Contract):
    """A file's identity: path, size in bytes, sha256 (hex) of its content; ``composed_from``
    as :class:`PathDone`."""

    path: str
    size: int
    sha256: str
    composed_from: str | None = Field(
        default=None,
        description="The path as sent, when it arrived in Unicode NFD and was stored in NFC "
        "(issue 33 item 4); null when stored as sent.",
    )


class PathDone(Contract):
    """The path an operation acted on; ``composed_from`` the path as sent when it was composed
    to Unicode NFC on the way in (:func:`core.paths.parse_new_path`), else ``None``."""

    path: str
    composed_from: str | None = None


class Moved(PathDone):
    """``file.move``: ``path`` is where ``src`` is now (another name after ``keep-both``);
    ``files`` how many files moved; ``replaced`` the trash id of what was at ``dst`` before
    (``replace``), else ``None``."""

    src: str
    kind: Literal["file", "dir"]
    files: int
    replaced: str | None = None


class Trashed(PathDone):
    """``file.delete``: ``path`` is in the trash as entry ``trash_id`` with ``files`` files of
    ``bytes`` bytes in all."""

    trash_id: str
    kind: Literal["file", "dir"]
    files: int
    bytes: int


class TrashList(Contract):
    """Every trash entry of the project, newest first."""

    entries: list[TrashEntry]


class Restored(Contract):
    """``trash.restore``: the entry, and the ``path`` it is back at (another name after
    ``keep-both``); every file's sha256 was checked against the one recorded at delete."""

    entry: TrashEntry
    path: str


class Emptied(Contract):
    """``trash.empty``: how many entries, files and bytes are gone for good."""

    entries: int
    files: int
    bytes: int


def visible(entry: Entry, folder: tuple[str, ...]) -> bool:
    """False only for the project's own metadata folder (``.voicebox`` at the root, exactly).

    Everything else a folder holds is shown as it is — also names the path rule refuses, such
    as a person's ``.vbx-tmp-my-draft.md`` or ``.VOICEBOX/`` (operations on them are refused
    ``path-reserved``). The host's own atomic-write temporaries never reach a listing: the
    storage adapter leaves them out (:mod:`core.projects.temporaries`)."""
    return not (folder == () and entry.name == META_DIR)


def _folder(text: str) -> tuple[str, ...]:
    return () if text == "" else parse_path(text).parts


async def _files(call: Call[Any]) -> ProjectFiles:
    return (await call.ctx.catalog.open(call.args.project)).files


async def file_list(call: Call[ListArgs]) -> Outcome:
    """Refuses ``project-not-found``, ``file-not-found``, ``not-a-directory``, path codes.

    The listing shown may be a kept one (:func:`core.projects.listing_cache.cached_lister`:
    this host's own changes show at once, another program's once the folder's watch reports
    them). With ``limit``, one page of it (:func:`page_of`)."""
    folder = _folder(call.args.folder)
    files = await _files(call)
    lister = cached_lister(files)
    if lister is None:
        listing = _listing(await files.list_dir(folder), folder)
    else:  # kept with the kept listing (core.projects.listing_cache, "The answer kept beside it")
        listing = await lister.shown(folder, lambda listed: _listing(listed, folder))
    return Outcome(page_of(listing, call.args.offset, call.args.limit), project=call.args.project)


def page_of(listing: Listing, offset: int, limit: int | None) -> Listing:
    """``listing``'s entries from index ``offset``, at most ``limit`` of them (all with
    ``None``), with ``next`` — the offset of the next page, ``None`` after the last (issue 34).
    The whole listing is answered as it is (it may be the kept answer); a page shares its
    entries, already validated, with it."""
    if offset == 0 and limit is None:
        return listing
    end = listing.total if limit is None else min(listing.total, offset + limit)
    return Listing.model_construct(
        folder=listing.folder,
        entries=listing.entries[offset:end],
        total=listing.total,
        next=end if end < listing.total else None,
    )


def _listing(listed: Sequence[Entry], folder: tuple[str, ...]) -> Listing:
    """The answer of ``file.list`` for ``listed``, the entries of ``folder``."""
    # the entries' fields read by pydantic in one call (from_attributes): a third of the
    # cost of one model per entry in Pyodide (issue 18, docs/operations.md "Round five")
    shown = [e for e in listed if visible(e, folder)]
    return Listing.model_validate(
        {"folder": "/".join(folder), "entries": shown, "total": len(shown)}, from_attributes=True
    )


async def walk(files: ProjectFiles, folder: tuple[str, ...]) -> list[WalkEntry]:
    """Every visible file under ``folder`` (sorted by path); at most 200,000, else refuses
    ``file-too-large``. Lists a depth of folders at a time, ``WALK_FOLDERS`` in one wait where
    the storage can (:class:`~core.ports.ListsFolders`, a browser folder; issue 34, round 42:
    one wait per folder made the streamed export's sizing walk a third of its time), one by
    one elsewhere; the answer does not depend on how the listings were asked."""
    out: list[WalkEntry] = []
    lister = many_lister(files)
    level = [folder]
    while level:
        deeper: list[tuple[str, ...]] = []
        for at in range(0, len(level), WALK_FOLDERS):
            group = level[at : at + WALK_FOLDERS]
            listings = (
                await lister.list_dirs(group)
                if lister is not None
                else [await files.list_dir(current) for current in group]
            )
            for current, entries in zip(group, listings, strict=True):
                for e in entries:
                    if not visible(e, current):
                        continue
                    if e.kind == "dir":
                        deeper.append((*current, e.name))
                        continue
                    out.append(WalkEntry(path="/".join((*current, e.name)), size=e.size or 0))
                    if len(out) > MAX_WALK_ENTRIES:
                        raise Refused(
                            Code.FILE_TOO_LARGE, "The folder holds too many files to list."
                        )
        level = deeper
    return sorted(out, key=lambda w: w.path)


async def file_walk(call: Call[FolderArgs]) -> Outcome:
    """Refuses as ``file.list``."""
    folder = _folder(call.args.folder)
    opened = await call.ctx.catalog.open(call.args.project)
    found = await walk(opened.files, folder)
    named = archive_filename(opened.manifest.name, folder)
    return Outcome(
        Walk(folder="/".join(folder), files=found, archive_filename=named),
        project=call.args.project,
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
    ``path-nfc-collision`` (a name sent in NFD whose NFC spelling is taken, unless
    ``keep_both``), ``storage-quota-exceeded`` and path codes (a new file's name holding
    ``< > : " | ? *`` is refused ``path-invalid``, :func:`core.paths.refuse_windows_characters`;
    a file already so named can be saved over); nothing is written on refusal.
    A name sent in NFD is stored in NFC and the answer says so (``composed_from``). With
    ``if_sha256``, refuses ``file-changed`` when the file is no longer the version the editor
    opened (issue 33 item 2)."""
    path, sent = parse_new_path(call.args.path, windows_names=False)
    data = call.body or b""
    files = await _files(call)
    existing = await files.stat(path)
    if existing is None or call.args.keep_both:
        refuse_windows_characters(path)  # rule 9 for a new name; saving over one stays possible
    if existing is not None and call.args.keep_both:
        path = await free_path(files, path)
    else:
        await refuse_twins(files, path, sent)
        if existing is not None and existing.kind == "dir":
            raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.", field="path")
        if existing is not None and call.args.if_absent:
            raise Refused(Code.ALREADY_EXISTS, f"'{path}' already exists.", field="path")
        if call.args.if_sha256 is not None:
            await require_opened_version(files, path, call.args.if_sha256)
    await files.write(path, data)
    digest = FileDigest(
        path=str(path),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        composed_from=sent,
    )
    events = call.ctx.services.events
    if events is not None:  # every tab (issue 33 item 2): a clean editor shows it at once
        events.post(FileChanged(project=call.args.project, path=digest.path, sha256=digest.sha256))
    return Outcome(
        digest,
        project=call.args.project,
        details={"path": str(path), "size": len(data), "sha256": digest.sha256},
    )


async def file_mkdir(call: Call[PathArgs]) -> Outcome:
    """Refuses ``not-a-directory``, ``path-nfc-collision`` (an NFD name whose NFC spelling is
    taken) and path codes."""
    path, sent = parse_new_path(call.args.path)
    files = await _files(call)
    await refuse_twins(files, path, sent)
    await files.mkdir(path)
    tell_tabs(call, FilesChanged(project=call.args.project, paths=[str(path)], how="mkdir"))
    return Outcome(
        PathDone(path=str(path), composed_from=sent),
        project=call.args.project,
        details={"path": str(path)},
    )


def _trash(call: Call[Any], files: ProjectFiles) -> Trash:
    return Trash(files, call.ctx.clock, call.ctx.random)


async def file_delete(call: Call[DeleteArgs]) -> Outcome:
    """Move a file or folder into the project trash (:mod:`core.projects.trash`).

    Refuses ``file-not-found``, ``directory-not-empty`` (a folder with anything in it, without
    ``recursive``), path codes (``.voicebox/`` never), and what the storage refuses — with
    nothing moved."""
    path = parse_path(call.args.path)
    files = await _files(call)
    st = await files.stat(path)
    if st is None:
        raise Refused(Code.FILE_NOT_FOUND, f"Nothing is at '{path}'.", field="path")
    if st.kind == "dir" and not call.args.recursive and await files.list_dir(path.parts):
        raise Refused(
            Code.DIRECTORY_NOT_EMPTY,
            f"'{path}' is not empty; deleting it and everything in it needs recursive.",
            field="path",
        )
    entry = await _trash(call, files).put(path)
    tell_tabs(call, FilesChanged(project=call.args.project, paths=[str(path)], how="delete"))
    return Outcome(
        Trashed(
            path=str(path),
            trash_id=entry.id,
            kind=entry.kind,
            files=len(entry.files),
            bytes=entry.bytes,
        ),
        project=call.args.project,
        details={
            "path": str(path),
            "recursive": call.args.recursive,
            "trash_id": entry.id,
            "files": len(entry.files),
            "bytes": entry.bytes,
        },
    )


async def _occupied(files: ProjectFiles, path: ProjectPath) -> bool:
    """Whether ``path`` itself, in this spelling, exists. On a case-insensitive disk ``stat``
    also finds a sibling spelt in another case; that is not a conflict to resolve but a
    ``path-case-collision`` the storage wrapper refuses (:mod:`core.projects.case_guard`)."""
    if await files.stat(path) is None:
        return False
    try:
        return path.name in await files.names(path.parent)
    except Refused:
        return True


async def file_move(call: Call[MoveArgs]) -> Outcome:
    """Rename or move a file or a whole folder (:func:`core.projects.tree.move_tree`).

    Refuses ``file-not-found``, ``args-invalid`` (``dst`` is ``src``, or a folder into itself
    or below itself),
    ``already-exists`` (``dst`` exists and ``on_conflict`` is ``refuse``), ``not-a-directory``,
    ``path-case-collision`` (picked folder), path codes (``.voicebox/`` on either side), and
    what the storage refuses — rolled back, so nothing is half-moved. ``replace`` first moves
    what is at ``dst`` into the trash (put back if the move then fails)."""
    src: ProjectPath = parse_path(call.args.src)
    dst, sent = parse_new_path(call.args.dst)
    files = await _files(call)
    if dst.parts == src.parts:
        raise Refused(
            Code.ARGS_INVALID,
            f"'{src}' is already there: give it another name or another folder.",
            field="dst",
        )
    if dst.parts[: len(src.parts)] == src.parts:
        raise Refused(
            Code.ARGS_INVALID,
            f"'{src}' cannot be moved into itself; choose a folder outside it.",
            field="dst",
        )
    tree = await survey(files, src)
    replaced: TrashEntry | None = None
    if call.args.on_conflict != "keep-both":
        await refuse_twins(files, dst, sent, field="dst")
    if await _occupied(files, dst):
        if call.args.on_conflict == "refuse":
            raise Refused(Code.ALREADY_EXISTS, f"'{dst}' already exists.", field="dst")
        if call.args.on_conflict == "keep-both":
            dst = await free_path(files, dst)
        else:
            replaced = await _trash(call, files).put(dst)
    try:
        await move_tree(files, tree, dst)
    except Refused:
        if replaced is not None:  # put back; if even that fails it stays in the trash
            with contextlib.suppress(Refused):
                await _trash(call, files).restore(replaced.id)
        raise
    tell_tabs(call, FilesChanged(project=call.args.project, paths=[str(src), str(dst)], how="move"))
    details: dict[str, str | int | bool | None] = {
        "src": str(src),
        "dst": str(dst),
        "kind": tree.kind,
        "files": len(tree.files),
        "replaced": replaced.id if replaced else None,
    }
    return Outcome(
        Moved(
            path=str(dst),
            composed_from=sent,
            src=str(src),
            kind="file" if tree.kind == "file" else "dir",
            files=len(tree.files),
            replaced=replaced.id if replaced else None,
        ),
        project=call.args.project,
        details=details,
    )


async def trash_list(call: Call[TrashArgs]) -> Outcome:
    """Refuses ``project-not-found`` and storage codes."""
    files = await _files(call)
    entries = await Trash(files, call.ctx.clock, call.ctx.random).entries()
    return Outcome(TrashList(entries=entries), project=call.args.project)


async def trash_restore(call: Call[TrashRef]) -> Outcome:
    """Refuses ``args-invalid`` (no ``id``), ``file-not-found``, ``already-exists``,
    ``storage-failed`` (bytes changed in the trash: nothing moved) — see
    :meth:`core.projects.trash.Trash.restore`."""
    if call.args.id is None:
        raise Refused(Code.ARGS_INVALID, "Say which trash item to restore.", field="id")
    files = await _files(call)
    entry, path = await _trash(call, files).restore(call.args.id, on_conflict=call.args.on_conflict)
    tell_tabs(call, FilesChanged(project=call.args.project, paths=[str(path)], how="restore"))
    return Outcome(
        Restored(entry=entry, path=str(path)),
        project=call.args.project,
        details={"trash_id": entry.id, "path": str(path), "files": len(entry.files)},
    )


async def trash_empty(call: Call[TrashRef]) -> Outcome:
    """Delete one trash entry (``id``) or all of them for good. Refuses ``file-not-found``."""
    files = await _files(call)
    gone = await _trash(call, files).empty(call.args.id)
    result = Emptied(
        entries=len(gone),
        files=sum(len(e.files) for e in gone),
        bytes=sum(e.bytes for e in gone),
    )
    return Outcome(
        result,
        project=call.args.project,
        details={"trash_id": call.args.id, "entries": result.entries, "files": result.files},
    )
