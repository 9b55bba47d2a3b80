"""Search in files: ``file.search`` (streamed) and ``file.search_cancel`` (issue 33 item 1).

The rule — what matches, which files, the regex guard, the bounds — is
:mod:`core.projects.search`; this module walks the project, reads each selected file and
streams what it finds. The answer's body is a stream of lines of JSON, one
:class:`SearchFile` per file with matches, sent as they are found (a batch at most every
:data:`FLUSH_MS`, the first at once); the final answer is a :class:`SearchSummary` saying how
many files were searched and skipped and why the search stopped. The deadline and the cancel
flag are checked before every file and between the steps of a guarded pattern's search.

The walk is lazy (depth-first, name order, the ``exclude`` globs pruning whole folders) so the
first results arrive before the project has been listed in full; a name the path rule refuses
(one another program left in a picked folder) is skipped and counted, never read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Literal

from pydantic import Field

from core.host.operations import Call, Outcome
from core.model import Contract
from core.paths import META_DIR, PathParser, ProjectPath
from core.ports import Entry, ManyRead, ProjectFiles
from core.projects.kept_texts import MAX_KEPT_FILE
from core.projects.lanes import overlaps
from core.projects.listing_cache import CachedListings, cached_lister
from core.projects.many_reads import list_for_reading, read_many
from core.projects.search import (
    MAX_FILE_BYTES,
    MAX_GLOBS,
    MAX_MATCHES,
    MAX_MATCHES_PER_FILE,
    MAX_QUERY_CHARS,
    MAX_TIME_MS,
    Query,
    check_globs,
    compile_query,
    decode_text,
    glob_matches,
    path_selected,
    search_text,
)
from core.refusals import Refused
from core.vocabulary import ProjectId

__all__ = [
    "SEARCH_ID_PATTERN",
    "SearchArgs",
    "SearchFile",
    "SearchSummary",
    "SearchWarmArgs",
    "SearchWarmed",
]

SEARCH_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""The page's name for a search (the id rule of core/secret.py PATTERN_RULES)."""
FLUSH_MS = 50
Stopped = Literal["done", "limit", "time", "cancelled"]


class SearchArgs(Contract):
    """``file.search``: find ``query`` in the project's files (:mod:`core.projects.search`).

    ``search`` is the page's name for this run (``file.search_cancel`` names it; a new search
    under a running one's name cancels that one)."""

    project: ProjectId
    search: str = Field(pattern=SEARCH_ID_PATTERN)
    query: str = Field(max_length=MAX_QUERY_CHARS)
    case_sensitive: bool = False
    whole_word: bool = False
    regex: bool = Field(default=False, description="The query is a (guarded) Python regex.")
    include: list[str] = Field(default_factory=list, max_length=MAX_GLOBS)
    exclude: list[str] = Field(default_factory=list, max_length=MAX_GLOBS)
    max_matches: int = Field(default=2000, ge=1, le=MAX_MATCHES)
    time_limit_ms: int = Field(default=10_000, ge=100, le=MAX_TIME_MS)


class SearchWarmArgs(Contract):
    """``file.search_warm``: read the project's files into the host's kept bytes before a
    search asks for them (issue 33; docs/search.md, "Kept bytes"). ``search`` is the page's
    name for this warm-up (``file.search_cancel`` stops it)."""

    project: ProjectId
    search: str = Field(pattern=SEARCH_ID_PATTERN)
    time_limit_ms: int = Field(default=30_000, ge=100, le=MAX_TIME_MS)


class SearchWarmed(Contract):
    """What ``file.search_warm`` did: ``files`` read (or found kept already), ``kept_bytes``
    the project's bytes kept now; ``stopped``: ``done`` (every file), ``full`` (the kept
    bytes' bound reached), ``time``, ``cancelled``, or ``not-kept`` (this project's bytes are
    never kept: a picked folder, or storage without a watch); ``elapsed_ms`` in ms."""

    files: int
    kept_bytes: int
    stopped: Literal["done", "full", "time", "cancelled", "not-kept"]
    elapsed_ms: int


class SearchCancelArgs(Contract):
    """``file.search_cancel``: stop the search the page named ``search``."""

    search: str = Field(pattern=SEARCH_ID_PATTERN)


class SearchCancelled(Contract):
    """Whether a search of that name was running (and is now stopping)."""

    cancelled: bool


class SearchHit(Contract):
    """One match: ``line`` 1-based, ``column`` 0-based and ``length`` in characters;
    ``preview`` part of the line, the match at ``preview[start:end]``."""

    line: int
    column: int
    length: int
    preview: str
    start: int
    end: int


class SearchFile(Contract):
    """One line of the stream: a file's matches (``more``: it has more than were sent)."""

    path: str
    hits: list[SearchHit]
    more: bool = False


class SearchSummary(Contract):
    """The final answer of ``file.search``: files searched; matched; matches sent; skipped as
    binary, as larger than the bound, or for a name the path rule refuses; why it stopped;
    the window of a guarded pattern (``None``: searched whole, linear); time taken (ms)."""

    files: int
    files_matched: int
    matches: int
    skipped_binary: int
    skipped_large: int
    skipped_names: int
    stopped: Stopped
    window: int | None
    elapsed_ms: int
    max_file_bytes: int = MAX_FILE_BYTES


WALK_AHEAD = 8
"""Folders a walk lists ahead of the one it is in, where the adapter's waits overlap (issue 33:
in the browser each listing is a wait, and 100 of them one after another were most of a
search over kept bytes)."""


async def _walk(
    files: ProjectFiles, exclude: tuple[str, ...]
) -> AsyncIterator[tuple[str, int | None]]:
    """``(path, size)`` of every file, depth-first in name order, lazily; an excluded folder
    is not entered, the project's metadata folder never. ``size`` is ``None`` where the
    listing gave none (:func:`~core.projects.many_reads.list_for_reading`: the read applies
    the bound). Where the adapter's waits overlap (:func:`core.projects.lanes.overlaps`) the
    next :data:`WALK_AHEAD` folders the walk will enter are listed meanwhile, once the first
    two batches' files are out (``FIRST_BATCH + BATCH``: the first results' reads go without
    them — measured, listing ahead from the start delayed a cold search's first results);
    the order is the same."""
    ahead = WALK_AHEAD if overlaps(files) else 0
    listing: dict[tuple[str, ...], asyncio.Future[list[Entry]]] = {}

    def listed(folder: tuple[str, ...]) -> asyncio.Future[list[Entry]]:
        if folder not in listing:
            listing[folder] = asyncio.ensure_future(list_for_reading(files, folder))
        return listing[folder]

    stack: list[tuple[str, ...]] = [()]
    yielded = 0
    try:
        while stack:
            folder = stack.pop()
            if ahead:
                entries = await listed(folder)
                del listing[folder]
            else:
                entries = await list_for_reading(files, folder)
            subdirs: list[tuple[str, ...]] = []
            found: list[tuple[str, int | None]] = []
            for entry in sorted(entries, key=lambda e: e.name):
                parts = (*folder, entry.name)
                if folder == () and entry.name == META_DIR:
                    continue
                if entry.kind == "dir":
                    if not any(glob_matches(g, "/".join(parts)) for g in exclude):
                        subdirs.append(parts)
                else:
                    found.append(("/".join(parts), entry.size))
            stack.extend(reversed(subdirs))
            early = yielded < FIRST_BATCH + BATCH  # the first results' reads go alone
            for later in reversed(stack[-ahead:] if ahead and not early else []):
                if len(listing) >= ahead:
                    break
                listed(later)
            for item in found:
                yielded += 1
                yield item
    finally:
        for pending in listing.values():
            pending.cancel()
            if pending.done() and not pending.cancelled():
                pending.exception()  # a listing begun ahead and never needed: its refusal too


FIRST_BATCH = 32
"""Files in a search's first read (small: the first results come after it, issue 33)."""
BATCH = 512
"""Files in each later read (:func:`core.projects.many_reads.read_many`: one call each)."""


async def _batches(
    files: ProjectFiles, paths: AsyncIterator[tuple[str, ProjectPath]]
) -> AsyncGenerator[list[tuple[str, ManyRead]]]:
    """``(path, read)`` of each of ``paths``, in order, in batches (:data:`FIRST_BATCH` files,
    then :data:`BATCH`), each batch read in one :func:`~core.projects.many_reads.read_many` call
    bounded by :data:`~core.projects.search.MAX_FILE_BYTES`. When the adapter's waits overlap
    (:func:`core.projects.lanes.overlaps`: the browser's), the walk and the reads of the next
    batches (at most two ahead) go on while the caller searches one; otherwise one after
    another. Work still in flight when the caller stops is cancelled."""
    if not overlaps(files):
        group: list[tuple[str, ProjectPath]] = []
        limit = FIRST_BATCH
        async for item in paths:
            group.append(item)
            if len(group) >= limit:
                got = await read_many(files, [t for _, t in group], MAX_FILE_BYTES)
                yield [(p, r) for (p, _), r in zip(group, got, strict=True)]
                group, limit = [], BATCH
        if group:
            got = await read_many(files, [t for _, t in group], MAX_FILE_BYTES)
            yield [(p, r) for (p, _), r in zip(group, got, strict=True)]
        return
    ready: asyncio.Queue[tuple[list[str], asyncio.Future[list[ManyRead]]] | None] = asyncio.Queue(
        maxsize=2
    )
    reading: list[asyncio.Future[list[ManyRead]]] = []  # every read started (cancelled at the end)
    failure: list[BaseException] = []

    async def produce() -> None:
        group: list[tuple[str, ProjectPath]] = []
        limit = FIRST_BATCH

        async def send(group: list[tuple[str, ProjectPath]]) -> None:
            reading.append(
                asyncio.ensure_future(read_many(files, [t for _, t in group], MAX_FILE_BYTES))
            )
            await ready.put(([p for p, _ in group], reading[-1]))

        try:
            async for item in paths:
                group.append(item)
                if len(group) >= limit:
                    await send(group)
                    group, limit = [], BATCH
            if group:
                await send(group)
        except Exception as exc:  # the walk's refusal: raised to the caller, in order
            failure.append(exc)
        await ready.put(None)

    producer = asyncio.ensure_future(produce())
    try:
        while (batch := await ready.get()) is not None:
            names, pending = batch
            yield list(zip(names, await pending, strict=True))
        if failure:
            raise failure[0]
    finally:
        producer.cancel()
        for read in reading:
            read.cancel()


async def file_search(call: Call[SearchArgs]) -> Outcome:
    """Stream the matches of the query (module docstring). Refuses ``args-invalid`` (an empty
    query, a regex that does not compile or that the guard refuses, too many or too long
    globs), ``project-not-found`` and storage codes of the listing; a file that cannot be
    read is skipped, never the whole search."""
    args = call.args
    query = Query(
        text=args.query,
        case_sensitive=args.case_sensitive,
        whole_word=args.whole_word,
        regex=args.regex,
        include=check_globs(args.include, "include"),
        exclude=check_globs(args.exclude, "exclude"),
    )
    matcher = compile_query(query)
    files = (await call.ctx.catalog.open(args.project)).files
    clock = call.ctx.clock
    began = clock.now_ms()
    deadline = began + args.time_limit_ms
    cancels = call.ctx.searches
    flag = cancels.start(args.search)
    n = {"files": 0, "matched": 0, "matches": 0, "binary": 0, "large": 0, "names": 0}
    stopped: list[Stopped] = ["done"]
    details: dict[str, str | int | bool | None] = {"regex": args.regex}

    def halted() -> bool:
        if flag[0]:
            stopped[0] = "cancelled"
        elif clock.now_ms() >= deadline:
            stopped[0] = "time"
        return stopped[0] != "done"

    async def selected() -> AsyncIterator[tuple[str, ProjectPath]]:
        """The files to read, in order; the skipped ones counted. One :class:`PathParser`: the
        folders' names repeat, each is checked once."""
        parser = PathParser()
        async for path, size in _walk(files, query.exclude):
            if halted():
                return
            if not path_selected(path, query.include, query.exclude):
                continue
            if size is not None and size > MAX_FILE_BYTES:
                n["large"] += 1
                continue
            try:
                yield path, parser.parse(path)
            except Refused:
                n["names"] += 1

    first = [True]  # the first results go at once, later ones at most every FLUSH_MS

    async def searched(batch: list[tuple[str, ManyRead]], pending: list[bytes]) -> bool:
        """Search each file of ``batch`` in order, its matches' lines added to ``pending``;
        False when the search must stop (a bound, the time, a cancel)."""
        for path, data in batch:
            if data == "unreadable":
                n["names"] += 1  # it could not be read (gone, or refused by the storage)
                continue
            if data == "large":
                n["large"] += 1  # it grew past the bound since it was listed
                continue
            assert isinstance(data, bytes)
            text = decode_text(data)
            if text is None:
                n["binary"] += 1
            else:
                n["files"] += 1  # searched (maybe in part, when it stopped inside)
                room = min(MAX_MATCHES_PER_FILE, args.max_matches - n["matches"])
                hits, more = search_text(matcher, text, room, halted)
                if hits:
                    n["matched"] += 1
                    n["matches"] += len(hits)
                    line = SearchFile(
                        path=path,
                        hits=[SearchHit.model_validate(h, from_attributes=True) for h in hits],
                        more=more,
                    )
                    pending.append(line.model_dump_json().encode() + b"\n")
            if n["matches"] >= args.max_matches:
                stopped[0] = "limit"
                return False
            if halted():
                return False
        return True

    async def chunks() -> AsyncIterator[bytes]:
        pending: list[bytes] = []
        flushed = began
        reader = _batches(files, selected())
        try:
            async for batch in reader:
                if not await searched(batch, pending):
                    break
                now = clock.now_ms()
                if pending and (first[0] or now - flushed >= FLUSH_MS):
                    yield b"".join(pending)
                    pending, flushed, first[0] = [], now, False
            if pending:
                yield b"".join(pending)
        finally:
            await reader.aclose()  # reads still in flight are cancelled now, not at collection
            cancels.end(args.search, flag)

    async def finish() -> SearchSummary:
        details.update(files=n["files"], matches=n["matches"], stopped=stopped[0])
        return SearchSummary(
            files=n["files"],
            files_matched=n["matched"],
            matches=n["matches"],
            skipped_binary=n["binary"],
            skipped_large=n["large"],
            skipped_names=n["names"],
            stopped=stopped[0],
            window=matcher.window,
            elapsed_ms=clock.now_ms() - began,
        )

    placeholder = SearchSummary(
        files=0,
        files_matched=0,
        matches=0,
        skipped_binary=0,
        skipped_large=0,
        skipped_names=0,
        stopped="done",
        window=matcher.window,
        elapsed_ms=0,
    )
    return Outcome(
        placeholder,
        stream=chunks(),
        finish=finish,
        project=args.project,
        details=details,
    )


WATCH_POLLS = 50
WATCH_POLL_S = 0.01
"""A warm-up waits at most ``WATCH_POLLS × WATCH_POLL_S`` (0.5 s) for the project's watch to
become active (bytes are kept only under an active watch), else answers ``not-kept``."""


async def file_search_warm(call: Call[SearchWarmArgs]) -> Outcome:
    """Read the project's files, as a search with no globs would select them, into the kept
    bytes (:class:`core.projects.listing_cache.CachedListings`), :data:`BATCH` files per read,
    yielding between reads (other calls go on meanwhile); files over
    :data:`~core.projects.kept_texts.MAX_KEPT_FILE` are not read. Stops at the kept bytes'
    bound, its time bound, or ``file.search_cancel`` (docstring of :class:`SearchWarmed`).
    Refuses ``project-not-found`` and storage codes of the listing. Issue 33."""
    args = call.args
    files = (await call.ctx.catalog.open(args.project)).files
    clock = call.ctx.clock
    began = clock.now_ms()
    listings = call.ctx.listings
    kept = cached_lister(files)
    if listings is None or not isinstance(kept, CachedListings):
        return Outcome(SearchWarmed(files=0, kept_bytes=0, stopped="not-kept", elapsed_ms=0))
    texts = listings.texts
    deadline = began + args.time_limit_ms
    for _ in range(WATCH_POLLS):  # a watch just started becomes active a few ms later
        if kept.keeps_bytes():
            break
        await asyncio.sleep(WATCH_POLL_S)
    else:
        return Outcome(
            SearchWarmed(
                files=0, kept_bytes=0, stopped="not-kept", elapsed_ms=clock.now_ms() - began
            )
        )
    cancels = call.ctx.searches
    flag = cancels.start(args.search)
    stopped: Literal["done", "full", "time", "cancelled", "not-kept"] = "done"
    count = 0
    group: list[ProjectPath] = []

    async def read(group: list[ProjectPath]) -> None:
        nonlocal count
        await read_many(files, group, MAX_KEPT_FILE)
        count += len(group)
        await asyncio.sleep(0)  # let the calls waiting go first

    parser = PathParser()  # the folders' names repeat: each checked once
    try:
        async for path, _ in _walk(files, ()):
            if flag[0]:
                stopped = "cancelled"
            elif clock.now_ms() >= deadline:
                stopped = "time"
            elif texts.full:
                stopped = "full"
            if stopped != "done":
                break
            try:
                group.append(parser.parse(path))
            except Refused:
                continue
            if len(group) >= BATCH:
                await read(group)
                group = []
        if group and stopped == "done":
            await read(group)
    finally:
        cancels.end(args.search, flag)
    return Outcome(
        SearchWarmed(
            files=count,
            kept_bytes=texts.project_bytes(kept.key),
            stopped=stopped,
            elapsed_ms=clock.now_ms() - began,
        ),
        project=args.project,
    )


async def file_search_cancel(call: Call[SearchCancelArgs]) -> Outcome:
    """Cancel the running search ``search``: it stops before its next file and answers with
    ``stopped: "cancelled"``. Never refuses (a search that ended already: ``False``)."""
    return Outcome(SearchCancelled(cancelled=call.ctx.searches.cancel(call.args.search)))
