"""The ports: every capability ``core`` needs from its runtime, as small Protocols (STYLE §1).

``browser_host`` implements them over OPFS, picked directories and IndexedDB;
``core.memory.adapters`` implements them in memory (real implementations, used by the tests and by
anything that wants the core without a browser). Nothing in ``core`` asks which runtime it is in.

All storage methods are ``async`` because the browser's storage is. Paths are always
:class:`~core.paths.ProjectPath` values (already validated) or tuples of validated segments
(a folder, ``()`` being the project root).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, runtime_checkable

from core.model import Contract
from core.paths import ProjectPath

__all__ = [
    "AnnouncedSink",
    "AuditKey",
    "AuditSink",
    "CachesListings",
    "Clock",
    "Entry",
    "EnvironmentServers",
    "FileRelay",
    "FolderChange",
    "FolderEntry",
    "FolderProjects",
    "FolderWatch",
    "HostState",
    "ListsFolders",
    "ListsKinds",
    "ModuleStore",
    "OverlapsWaits",
    "PageEvents",
    "PeerChannel",
    "ProjectFiles",
    "ProjectRoots",
    "PythonRuntime",
    "Randomness",
    "ReadsMany",
    "RelayItem",
    "Relayed",
    "RemoteLink",
    "RuntimeProbe",
    "Sandbox",
    "Sink",
    "StoredAuditRecord",
    "WatchesFolders",
    "WritesMany",
    "WrittenMany",
]

ShownAnswer = TypeVar("ShownAnswer")
"""What :meth:`CachesListings.shown` makes from a listing (``file.list``'s answer)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a folder listing: ``name``, ``kind`` and, for files, ``size`` in bytes and
    ``modified_ms`` (last modification, ms since the epoch) where the storage knows it."""

    name: str
    kind: Literal["file", "dir"]
    size: int | None = None
    modified_ms: int | None = None


@runtime_checkable
class ProjectFiles(Protocol):
    """One project's root folder (an OPFS folder or a picked directory), SPEC §3.

    Errors are :class:`~core.refusals.Refused`: ``file-not-found``, ``not-a-directory``,
    ``is-a-directory``, ``already-exists``, ``directory-not-empty``,
    ``storage-quota-exceeded``, ``storage-failed``, ``permission-required``.
    Every write is atomic: a reader sees the old bytes or the new bytes, never a torn file.
    Listing is one folder at a time and never reads file contents (lazy open).
    """

    async def read(self, path: ProjectPath) -> bytes:
        """The whole content of the file at ``path``."""
        ...

    def read_chunks(self, path: ProjectPath, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """The file's content in chunks of at most ``chunk_size`` bytes (streaming reads)."""
        ...

    async def read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """For each ``(offset, length)`` of ``spans``, at most ``length`` bytes of the file at
        ``path`` from byte ``offset`` (fewer at its end, ``b""`` past it), in one storage call
        that reads only those bytes (issue 18: the mailbox index is read by parts). Refuses
        as :meth:`read`."""
        ...

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """Replace (or create) the file at ``path`` atomically; missing parents are created."""
        ...

    async def stat(self, path: ProjectPath) -> Entry | None:
        """The entry at ``path``, or ``None`` when nothing is there."""
        ...

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        """The entries directly inside ``folder`` (``()`` = root), sorted by name."""
        ...

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        """The name of every entry directly inside ``folder`` as the storage holds it, sorted
        — this host's own atomic-write temporaries included (no valid path can name one) —
        asking nothing per entry (a size costs one browser call per file) and removing
        nothing. Cheaper than :meth:`list_dir`; refuses as it does."""
        ...

    async def mkdir(self, path: ProjectPath) -> None:
        """Create the folder ``path`` and any missing parents (no error if it exists)."""
        ...

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """Remove the file or folder at ``path`` (a non-empty folder needs ``recursive``)."""
        ...

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """Rename the file ``src`` to ``dst`` atomically (``already-exists`` if ``dst`` does)."""
        ...


@runtime_checkable
class ListsFolders(Protocol):
    """A :class:`ProjectFiles` that lists several folders in one wait (issue 18: each listing
    of a browser folder is a wait on the browser's storage; the export's walk asks a whole
    depth at once)."""

    async def list_dirs(self, folders: Sequence[tuple[str, ...]]) -> list[list[Entry]]:
        """:meth:`ProjectFiles.list_dir` of each of ``folders``, in the same order; refuses as
        it does."""
        ...


@runtime_checkable
class ListsKinds(Protocol):
    """A :class:`ProjectFiles` that lists a folder's names and kinds without the files' sizes
    (issue 33: in the browser a size costs one call per file — as much as reading a small
    file — and a search's walk needs none: :meth:`ReadsMany.read_many` applies the bound)."""

    async def list_kinds(self, folder: tuple[str, ...]) -> list[Entry]:
        """The entries directly inside ``folder`` as :meth:`ProjectFiles.list_dir` gives them
        (sorted by name, this host's temporaries left out), with ``size`` and ``modified_ms``
        ``None``; refuses as it does. Removes nothing."""
        ...


ManyRead = bytes | Literal["large", "unreadable"]
"""One file of :meth:`ReadsMany.read_many`: its bytes, ``"large"`` (larger than the bound
given: not read) or ``"unreadable"`` (gone, a folder, or the storage refused to read it)."""


@runtime_checkable
class ReadsMany(Protocol):
    """A :class:`ProjectFiles` that reads a list of files in one call (issue 33: a search reads
    thousands of small files, and one call per file cost more than the reading itself in the
    browser). The host decides which files and the bound; the adapter only moves bytes. Used
    through :func:`core.projects.many_reads.read_many`, which reads one file at a time over any
    other adapter."""

    async def read_many(self, paths: Sequence[ProjectPath], max_bytes: int) -> list[ManyRead]:
        """One :data:`ManyRead` per path of ``paths``, in the same order: a file larger than
        ``max_bytes`` bytes is ``"large"`` and not read; one that cannot be read is
        ``"unreadable"`` (never a refusal for the whole list)."""
        ...


@runtime_checkable
class OverlapsWaits(Protocol):
    """A :class:`ProjectFiles` whose calls wait on real storage and may overlap: several
    writes in flight at once from tasks of the host's event loop (issue 34; a browser
    folder's adapter). Many small files are then written in lanes
    (:func:`core.projects.lanes.in_lanes`); over any other adapter one after another."""

    @property
    def overlaps_waits(self) -> bool:
        """True: its waits may overlap."""
        ...


@dataclass(frozen=True, slots=True)
class WrittenMany:
    """What :meth:`WritesMany.write_many` did, per file in the order given: ``read_back[i]``
    is ``None`` when file ``i`` was not written, ``""`` when it was written but could not be
    read back, else the sha256 hex of the bytes read back from storage after the write.
    ``failure`` is the first write's refusal (as :meth:`ProjectFiles.write` would raise it),
    or a read-back's ``storage-failed``; after it no further file was started."""

    read_back: tuple[str | None, ...]
    failure: Exception | None


@runtime_checkable
class WritesMany(Protocol):
    """A :class:`ProjectFiles` that writes many files and reads each back in one call (issue
    34: an import of 10,000 small files paid one crossing into the browser and several waits
    per file). :func:`core.projects.write_many.write_many` uses it, else writes file by file
    with the same outcome."""

    async def write_many(
        self, items: Sequence[tuple[ProjectPath, int]], body: bytes, *, in_place: bool = False
    ) -> WrittenMany:
        """Write each ``(path, size)`` of ``items`` — its bytes the next ``size`` bytes of
        ``body`` — atomically as :meth:`ProjectFiles.write` does (parents made), several at
        once, then read it back from storage and hash it (:class:`WrittenMany`). Never raises
        for one file's failure: it is the answer's ``failure``.

        ``in_place``: each file may be written under its own name, without a temporary and
        its move — only for new files in a root nobody sees until the caller commits it and
        which a failure removes whole (a staged import, :meth:`ProjectCatalog.create_staged`):
        there the root is the unit of atomicity, not the file (issue 34: the move was a third
        wait on the browser's storage per file). A file cut short is then at its name until
        the root goes; its read-back says it was not written."""
        ...


@runtime_checkable
class CachesListings(Protocol):
    """A :class:`ProjectFiles` that can answer a listing shown to a person from listings it
    kept (issue 18, the open row: :mod:`core.projects.listing_cache`). Such a listing shows
    every change this host made at once; a change made by anyone else (another program,
    DevTools) once the folder's watch has reported it. Decisions — a move's survey, an
    export's walk, the trash — read :meth:`ProjectFiles.list_dir`, never this."""

    async def list_dir_cached(self, folder: tuple[str, ...]) -> Sequence[Entry]:
        """:meth:`ProjectFiles.list_dir` of ``folder``, possibly kept from an earlier listing;
        refuses as it does."""
        ...

    async def shown(
        self, folder: tuple[str, ...], make: Callable[[Sequence[Entry]], ShownAnswer]
    ) -> ShownAnswer:
        """``make(entries)`` of :meth:`list_dir_cached`'s entries, kept with the kept listing
        and made again only once that listing changed (``make`` must give the same answer for
        the same entries); refuses as :meth:`list_dir_cached` does."""
        ...


@dataclass(frozen=True, slots=True)
class FolderChange:
    """One change under a watched folder, as :class:`WatchesFolders` reports it.

    ``kind``: ``"changed"`` — the entry at ``path`` appeared or its content or size changed
    (the listing of its folder changed); ``"removed"`` — the entry at ``path`` and everything
    below it are gone; ``"lost"`` — the watch cannot say what changed (the browser dropped
    records, or the watch ended): every listing under the folder is in doubt. ``path`` is
    relative to the watched folder (``()``: the folder itself)."""

    kind: Literal["changed", "removed", "lost"]
    path: tuple[str, ...] = ()


class FolderWatch(Protocol):
    """One folder being watched (:meth:`WatchesFolders.watch`)."""

    @property
    def active(self) -> bool:
        """True while every change under the folder is being reported (False before the
        watch has begun, and for ever once it failed or was stopped)."""
        ...

    def stop(self) -> None:
        """Stop reporting (nothing is reported after this returns)."""
        ...


class WatchesFolders(Protocol):
    """Reports changes under a project's root folder made by anyone — this host included — after
    they happen (the browser's ``FileSystemObserver``: ``browser_host/watch.py``)."""

    def watch(
        self, files: ProjectFiles, report: Callable[[Sequence[FolderChange]], None]
    ) -> FolderWatch | None:
        """Start watching the root folder of ``files``; returns at once. ``report`` is then
        called with each batch of changes, some time after they happened (the delay is the
        runtime's; docs/operations.md measures the browser's); it must not raise. ``None``
        when these files cannot be watched (no observer in this runtime, not a folder it
        can observe)."""
        ...


Sink = Callable[[bytes], Awaitable[None]]
"""Where a streaming answer's bytes go, in order (the transport to the page, or a list)."""


@runtime_checkable
class PassThroughSink(Protocol):
    """A :data:`Sink` that can also take a chunk as the transport holds it, never copied into
    this runtime (issue 34: a remote export's bytes go WebSocket → page in the host worker's
    JavaScript; core only counts them). ``pass_through(chunk)`` relays the transport's chunk
    object, synchronously and in call order."""

    async def __call__(self, chunk: bytes) -> None:
        """Relay ``chunk`` (bytes made here)."""
        ...

    def pass_through(self, chunk: object) -> None:
        """Relay the transport's own chunk object (opaque to core) as it is."""
        ...


@runtime_checkable
class AnnouncedSink(Protocol):
    """A :data:`Sink` that is told, before an archive's first byte, the name the archive is
    saved under and how many bytes its files hold (issue 34, round 42: the page's streamed
    download opens under the host's name, and shows its progress, without a walk of its own —
    that second walk of the project was a third of the export's time).
    ``announce(filename, file_bytes)`` is called once, synchronously, after the export's walk;
    ``file_bytes`` counts the files' bytes only (not the zip's headers)."""

    async def __call__(self, chunk: bytes) -> None:
        """Relay ``chunk``."""
        ...

    def announce(self, filename: str, file_bytes: int) -> None:
        """Say the archive's download name and its files' total bytes."""
        ...


PassThrough = Callable[[str, int], Callable[[object], None] | None]
"""Core's decision about one binary channel message, asked by a channel adapter before any
byte of it is copied (issue 34): ``(request id, chunk size in bytes)`` → a function that takes
the transport's chunk object (relay it as it is, or drop it), or ``None``: deliver its bytes
to ``on_data`` as usual."""


@dataclass(frozen=True, slots=True)
class Relayed:
    """One file's bytes as they were relayed: ``size`` (bytes), ``crc32`` (the zip CRC-32, an
    unsigned 32-bit int) and ``sha256`` (64 lower-case hex digits)."""

    size: int
    crc32: int
    sha256: str


@dataclass(frozen=True, slots=True)
class RelayItem:
    """One file of a relay plan: its ``path``; ``lead``, bytes to hand out before its data;
    ``after``, bytes to hand out after it, into which the relay first writes what it measured:
    each ``fill`` is ``(what, offset, width)`` — ``what`` ``"crc32"`` or ``"size"``, written
    little-endian as ``width`` bytes at ``offset`` of ``after``; ``size``, the file's size in
    bytes when it was listed — a hint a relay may use to share the work (the browser's reader
    lanes, issue 18), never what it relays or reports: that is what it reads."""

    path: ProjectPath
    lead: bytes
    after: bytes = b""
    fill: tuple[tuple[Literal["crc32", "size"], int, int], ...] = ()
    size: int = 0


class FileRelay(Protocol):
    """Moves files' bytes to where a stream goes, hashing them on the way (SPEC §10;
    docs/archives.md §4). The export (:mod:`core.archive.export`) decides what goes around
    them and makes those bytes; a relay only moves, measures and hashes.

    ``relay(files, items, sink)`` hands, for each item in order, its ``lead``, every byte of
    the file at its ``path`` and its ``after`` (filled in) to ``sink``, and returns one
    :class:`Relayed` per item. A placement may move the bytes outside Python (the browser host:
    ``browser_host/byte_path.py``) as long as they reach the same destination in the same
    order. Raises what reading ``files`` raises (``file-not-found``, ``storage-failed``…).
    """

    def begin(self, files: ProjectFiles, sink: Sink) -> None:
        """Called once per export of ``files`` to ``sink``, before the export walks the project:
        a relay may get ready meanwhile without anyone waiting for it (the browser starts its
        reader lanes, issue 18). Never raises; nothing is read or handed out yet."""
        ...

    async def relay(
        self, files: ProjectFiles, items: Sequence[RelayItem], sink: Sink
    ) -> list[Relayed]:
        """Hand each item's lead, file bytes and filled-in after to ``sink``; see class."""
        ...


@runtime_checkable
class ProjectRoots(Protocol):
    """Where projects live: one folder per project id (``projects/<id>/`` in OPFS), SPEC §3."""

    async def create(self, project_id: str) -> ProjectFiles:
        """Make an empty root for ``project_id`` (``already-exists`` if there is one)."""
        ...

    async def open(self, project_id: str) -> ProjectFiles:
        """The root of ``project_id`` (``project-not-found`` if there is none)."""
        ...

    async def remove(self, project_id: str) -> None:
        """Delete ``project_id`` and everything in it."""
        ...

    async def list_ids(self) -> list[str]:
        """Every project id present, sorted."""
        ...


@dataclass(frozen=True, slots=True)
class FolderEntry:
    """A picked folder registered as a project: its project id, display name, when added (ms)."""

    project_id: str
    name: str
    added_at: int


@runtime_checkable
class FolderProjects(Protocol):
    """Folders the user picked (``showDirectoryPicker``), kept as projects of kind ``directory``.

    SPEC §3. The registry keeps each folder's ``FileSystemDirectoryHandle`` (IndexedDB in E1)
    so the project is listed after reload and restart. ``handle`` is an opaque runtime object
    to ``core``. ``open`` checks the folder's permission first and refuses
    ``permission-required`` (access must be granted again by a gesture) or
    ``permission-denied``; it never caches file contents, so changes made outside the browser
    are seen on the next read.
    """

    async def add(self, project_id: str, name: str, handle: object, now_ms: int) -> None:
        """Register ``handle`` under ``project_id``."""
        ...

    async def entries(self) -> list[FolderEntry]:
        """Every registered folder."""
        ...

    async def open(self, project_id: str) -> ProjectFiles:
        """The folder's files, if access is granted; refuses as described above."""
        ...

    async def handle(self, project_id: str) -> object:
        """The stored handle (for the page's permission gesture); ``project-not-found``."""
        ...

    async def rename(self, project_id: str, name: str) -> None:
        """Change the display name kept in the registry."""
        ...

    async def forget(self, project_id: str) -> None:
        """Drop the registration; nothing on disk is touched."""
        ...


@runtime_checkable
class HostState(Protocol):
    """HOST_DIR: the host's own documents (token, environments, pairings), SPEC §3, seed 002 §2.

    Names are plain file names chosen by ``core`` (e.g. ``"pairings.json"``); nothing outside
    the host reaches this store. ``store`` is atomic.
    """

    async def load(self, name: str) -> bytes | None:
        """The bytes stored under ``name``, or ``None``."""
        ...

    async def store(self, name: str, data: bytes) -> None:
        """Replace the document ``name`` atomically."""
        ...


@dataclass(frozen=True, slots=True)
class StoredAuditRecord:
    """An audit record as the sink keeps it: its sequence number and its JSON object."""

    seq: int
    record: dict[str, object]


@runtime_checkable
class AuditSink(Protocol):
    """Append-only storage of audit records keyed by sequence number (IndexedDB in E1), SPEC §5.

    ``append`` is durable when it returns (IndexedDB ``durability: "strict"``) and refuses a
    sequence number that is already taken (a second writer is detected, never merged).
    """

    async def append(self, seq: int, record: dict[str, object]) -> None:
        """Store ``record`` under ``seq``; raise ``storage-failed`` if ``seq`` exists."""
        ...

    async def last(self) -> StoredAuditRecord | None:
        """The record with the highest sequence number, or ``None`` when empty."""
        ...

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        """Records with ``first <= seq <= last``, ascending."""
        ...


@runtime_checkable
class AuditKey(Protocol):
    """The host's audit key: HMAC-SHA256 under a secret that the code asking for a MAC never
    reads (issue 13; docs/security.md, "Audit").

    E1: a non-extractable WebCrypto HMAC key in the host's IndexedDB ``keys`` store
    (``worker/sealed.mjs``), one per environment; a CPython host: a ``0600`` key file in
    HOST_DIR; tests: :class:`core.memory.adapters.MemoryAuditKey`. Raises ``storage-failed`` when
    the key cannot be used.
    """

    async def mac(self, data: bytes) -> str:
        """HMAC-SHA256 of ``data`` under this host's key, as 64 lowercase hex digits."""
        ...

    async def mac_many(self, items: list[bytes]) -> list[str]:
        """:meth:`mac` of each item, in order, in one call (one crossing into WebCrypto for
        a whole batch of records)."""
        ...


@runtime_checkable
class PeerChannel(Protocol):
    """One open channel to a peer environment (a ``MessagePort`` in E1, a WebSocket for a
    network peer), SPEC §6, seed 002 §4.

    Frames are JSON texts. Core sends with :meth:`send` and closes with :meth:`close`; the
    adapter delivers incoming frames and the other side's close to core (it calls the hello
    gate, :class:`core.custody.channels.LiveChannels` and
    :class:`core.custody.peer_calls.PeerCaller`), so the port itself has no receive method and no
    timer.
    """

    async def send(self, frame: str) -> None:
        """Send one frame; refuse ``environment-unreachable`` when the channel is closed."""
        ...

    async def close(self, code: int, reason: str) -> None:
        """Close the channel with a WebSocket-like ``code`` (1008 for refusals) and ``reason``
        (the refusal code). Closing a closed channel does nothing."""
        ...

    async def send_data(self, request_id: str, data: bytes) -> None:
        """Send one chunk of a streaming answer to ``request_id`` (binary, outside the JSON
        frames); refuse ``environment-unreachable`` when the channel is closed."""
        ...


class EnvironmentServers(Protocol):
    """The environment servers this host runs for its peers (SPEC §6): in E1, dedicated workers
    the host worker spawns — the page has no handle to them. Named by environment name.

    ``admin`` carries one admin request (JSON text, :class:`core.custody.env_server.AdminRequest`)
    to the server ``name`` and returns its JSON answer; only this host can send one. ``connect``
    opens a fresh execute channel to it; the adapter delivers what arrives on it to the three
    callbacks: ``on_frame(text)``, ``on_data(request_id, chunk)`` (a streaming answer's bytes)
    and ``on_close(code, reason)``. A server that is not running refuses
    ``environment-unreachable``.
    """

    async def start(self, name: str) -> None:
        """Start the server ``name`` (creating its fenced storage on first start); idempotent."""
        ...

    def running(self, name: str) -> bool:
        """True while the server ``name`` is up and answering."""
        ...

    async def admin(self, name: str, request: str) -> str:
        """One admin request to ``name`` (see above)."""
        ...

    async def connect(
        self,
        name: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        *,
        env_key: str,
    ) -> PeerChannel:
        """A new execute channel to ``name``, opened for the environment ``env_key`` (the
        server's hello gate resolves it before it looks at any bearer, seed 002 §1)."""
        ...


class RemoteLink(Protocol):
    """How this host reaches environment servers on other machines (issue 15): plain HTTP
    requests and WebSocket execute channels, from the host (in E1 the host worker — never the
    page). The adapter carries out what core decided: ``allow`` replaces the egress allow-list
    (origins, ``scheme://host[:port]``, the ``ws``/``wss`` forms included) and the adapter
    refuses every connection outside it. ``request`` sends one request and returns ``(status,
    answer text)``; ``authorization`` goes in the ``Authorization`` header. A server that
    cannot be reached refuses ``environment-unreachable``.

    Bounds (issue 29 item 6; :mod:`core.custody.remote`): the answer's body is streamed into a
    :class:`~core.custody.remote.AnswerBody` and reading stops (the stream cancelled) at its
    bound — ``message-too-large``; the whole exchange ends at ``deadline_ms``
    (:func:`~core.custody.remote.answer_overdue`); a channel message is measured before it is
    converted and one over its bound closes the channel with the reason ``message-too-large``
    (:func:`~core.custody.remote.channel_message_over`). A request the site's own policy kept
    in the browser refuses :func:`~core.custody.remote.blocked_by_site_policy`.
    """

    def allow(self, origins: frozenset[str]) -> None:
        """The origins this host may reach from now on (every other one is refused)."""
        ...

    async def request(
        self,
        method: str,
        url: str,
        body: str | None = None,
        *,
        authorization: str | None = None,
        deadline_ms: int,
    ) -> tuple[int, str]:
        """One HTTP request to ``url`` (an allowed origin); the status and the answer's text
        (at most :data:`~core.custody.remote.MAX_ANSWER_BYTES`), all within ``deadline_ms``."""
        ...

    async def connect(
        self,
        url: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        *,
        pass_through: PassThrough | None = None,
    ) -> PeerChannel:
        """A WebSocket execute channel to ``url`` (``ws``/``wss``, an allowed origin), open
        (the hello not yet sent). Binary messages are chunks in the form of
        :func:`core.custody.wire.parse_chunk_message`; delivered to the callbacks as in
        :meth:`EnvironmentServers.connect`. With ``pass_through`` (issue 34) the adapter asks
        it about each binary message as it arrives — its id read by
        :func:`core.custody.wire.parse_chunk_head` from the message's first bytes, its chunk's
        size measured, nothing else copied — and hands a function it answers the chunk as the
        transport holds it, at once (before any later message is delivered); ``None`` sends
        the message to ``on_data`` as before."""
        ...


class PageEvents(Protocol):
    """How the host tells the page something it shows changed, unasked (issue 29 item 15: a
    remote revoked by its operator, removed, unreachable, back). ``post`` hands one event (a
    :class:`~core.model.Contract`, e.g. :class:`core.custody.remote.RemoteChanged`) to the
    page as its JSON; it never waits and never fails the host (a page that is gone misses it;
    it lists again when it comes back). No secret is ever in an event.
    """

    def post(self, event: Contract) -> None:
        """Send ``event`` to the page."""
        ...


class PythonRuntime(Protocol):
    """The second Python that runs a person's code (issue 32; docs/python.md): its own
    interpreter, holding no secret, reaching no storage and no network, started, stopped and
    restarted by the host. Files reach it only as :class:`core.tools.python_run.RunJob` copies and
    leave it only as a :class:`core.tools.python_run.RunReport` the host decides
    (:mod:`core.tools.python_run`).

    E1: a worker with its own Pyodide inside the opaque-origin frame with ``connect-src
    'none'`` (``browser_host/python_runtime.py``). Refuses ``sandbox-unavailable`` when it
    cannot start or is busy with another run.
    """

    async def run(
        self, job: object, on_output: Callable[[str, str], None], *, limit_s: float
    ) -> object:
        """Run ``job`` (a :class:`~core.tools.python_run.RunJob`); ``on_output(stream, text)`` gets
        stdout/stderr (``"stdout"``/``"stderr"``) as produced, and ``("prompt", prompt)`` when
        the code calls ``input()`` (answered by :meth:`answer`); answers a
        :class:`~core.tools.python_run.RunReport`. Past ``limit_s`` seconds the runtime is
        restarted and the report says ``timed_out``."""
        ...

    async def stop(self) -> bool:
        """End the run in progress now by terminating the runtime and starting it anew (its
        console state is lost); ``True`` if a run was going. Returns within 2 s."""
        ...

    def abandon(self) -> bool:
        """The runtime is gone with the tab that held it (issue 33 item 2): the run in
        progress ends ``stopped`` now, without waiting for an answer no one will send, and
        nothing more is sent to it. ``True`` if a run was going. Returns at once."""
        ...

    async def complete(self, text: str) -> list[str]:
        """Completions of ``text`` in the console's namespace (``rlcompleter``; at most 200);
        ``[]`` while a run goes or the runtime is not up."""
        ...

    def answer(self, text: str) -> bool:
        """Give ``text`` to the ``input()`` the run in progress waits on (it asked through
        ``on_output("prompt", prompt)``); ``False`` when no run is going."""
        ...

    def warm(self) -> None:
        """Start the runtime now if it is not running (returns at once; a failure is said by
        the next run), so that the first Run does not wait for Python to load."""
        ...

    async def offline_set(self) -> str | None:
        """The runtime's offline set as shipped (``runtime/wheels/offline-set.json``, read with
        its pin; :func:`core.tools.python_requirements.parse_offline_set`), or ``None`` when
        this runtime has none. Starts the runtime if needed (refuses as :meth:`run` does)."""
        ...


class Sandbox(Protocol):
    """Where a tool's WebAssembly module runs, with nothing granted (SPEC §8).

    E1: an ``<iframe sandbox="allow-scripts">`` with CSP ``default-src 'none'; connect-src
    'none'``, reached through a ``MessagePort``; each run in a fresh worker with an empty import
    object, stopped after ``time_ms``. The module gets ``args`` and returns bytes; it never
    writes anything. Refuses ``tool-timeout``, ``tool-memory-exceeded``, ``tool-output-invalid``
    or ``sandbox-unavailable``.
    """

    async def run(self, module: bytes, args: bytes, *, time_ms: int, max_output: int) -> bytes:
        """Run ``module`` on ``args``; return its output bytes (at most ``max_output``)."""
        ...

    async def call(
        self,
        module: bytes,
        entry: str,
        input_bytes: bytes,
        *,
        time_ms: int,
        max_output: int,
        max_memory: int | None = None,
        config: Mapping[str, str] | None = None,
    ) -> bytes:
        """Call export ``entry`` of the Extism-PDK-ABI ``module`` once on ``input_bytes``
        (docs/plugins.md): its output. ``max_memory`` bounds linear and host memory (bytes);
        ``config`` is what ``config_get`` sees. Refuses as :meth:`run`, and
        ``network-egress-refused`` for a module that asked for HTTP."""
        ...


class ModuleStore(Protocol):
    """The tool modules this host may run, each with its pinned sha256 (hex)."""

    async def load(self, name: str) -> tuple[bytes, str]:
        """``(module bytes, pinned sha256)`` of tool ``name``; ``sandbox-unavailable`` if
        there is none."""
        ...


class Clock(Protocol):
    """Time as the host sees it."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch (UTC)."""
        ...


class Randomness(Protocol):
    """A cryptographically secure random source (``crypto.getRandomValues`` in the browser)."""

    def token_bytes(self, n: int) -> bytes:
        """``n`` bytes from a CSPRNG."""
        ...


class RuntimeProbe(Protocol):
    """Reads non-secret figures of the runtime the host runs in, for ``host.info`` and the
    benchmark (E1: ``browser_host.diagnostics.runtime_figures``)."""

    def __call__(self) -> dict[str, int]:
        """``{"wasm_memory_bytes": ..., "python_allocated_blocks": ...}`` (any subset)."""
        ...
