"""The export's byte path in the browser: files move OPFS → worker JavaScript → page without
entering the Wasm heap (docs/archives.md §4; issue 18).

:class:`OpfsRelay` is the host's :class:`~core.ports.FileRelay`. The export
(:mod:`core.archive.export`) decides every entry and makes every byte around the files' data;
for a batch of files it hands the relay a plan — each file's path, the bytes before it
(``lead``: headers), the bytes after it (``after``: its data descriptor) and where in those the
measured CRC-32 and size go — and the relay asks ``relayFiles`` in ``worker/byte-path.mjs`` (the
module ``voicebox_bytes``) to post them and the files' bytes to the page. Each file is read once,
through a read-only sync access handle straight into one reused staging buffer that also holds
the headers, and hashed (WebCrypto sha256 for a file within :data:`WHOLE_FILE_BYTES`,
hash-wasm's streaming sha256 beyond; hash-wasm crc32); the page gets one Blob per buffer-full,
copied from the staging buffer (the very bytes hashed; a change the host makes meanwhile waits
for the one file being read, ``lendHandle`` in ``worker/opfs-io.mjs``). Python gets back only
``{size, crc32, sha256}`` per file.

It does so only when the bytes can go straight to the page: the sink is this worker's
:class:`WorkerSink` and the files are an OPFS or picked-folder root
(:class:`~browser_host.opfs.HandleProjectFiles`, possibly behind the catalog's read-through
wrappers). Otherwise — an environment server's export, whose bytes go to a peer — it is
:class:`~core.archive.export.ChunkRelay`, in Python; both give the same archive bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyodide.ffi import to_js

from browser_host.jsutil import JS_ERRORS, js_options, refusal_from_js, settle
from browser_host.opfs import HandleProjectFiles
from core.ports import FileRelay, ProjectFiles, Relayed, RelayItem, Sink
from core.projects.read_through import ReadThrough

if TYPE_CHECKING:
    from core.archive.export import ChunkRelay

__all__ = ["CHUNK_BYTES", "WHOLE_FILE_BYTES", "OpfsRelay", "WorkerSink", "byte_path_figures"]

WHOLE_FILE_BYTES = 8 << 20
"""A file up to this size is read in one piece and hashed by WebCrypto (which cannot stream)."""
CHUNK_BYTES = 8 << 20
"""A larger file is read and hashed in pieces of this size. The staging buffer is the larger of
the two bounds: at most that many bytes go to the page in each Blob posted."""


def _bytes_module() -> Any:
    """The worker's ``voicebox_bytes`` (``worker/byte-path.mjs``), or None where it is not
    registered (an environment server's worker)."""
    try:
        import voicebox_bytes  # type: ignore[import-not-found]  # a JS module the worker registers
    except ImportError:
        return None
    return voicebox_bytes


class WorkerSink:
    """Where one call's streaming answer goes: ``emit``, the worker's JS function that posts a
    chunk to the page (transferred). A :data:`~core.ports.Sink`: call it with bytes; and a
    :class:`~core.ports.PassThroughSink`: ``pass_through`` a JS chunk."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit

    async def __call__(self, chunk: bytes) -> None:
        """Post ``chunk`` (bytes made in Python) to the page."""
        self.emit(to_js(chunk))

    def announce(self, filename: str, file_bytes: int) -> None:
        """An :class:`~core.ports.AnnouncedSink`: hand the archive's name and its files' bytes
        to the call's ``emit.head`` (``worker/host.mjs``: a streamed download's call, issue 34
        round 42), which tells the page before the first byte; nothing where there is none."""
        head = getattr(self.emit, "head", None)
        if head is not None:
            head(filename, file_bytes)

    def pass_through(self, chunk: object) -> None:
        """Post ``chunk``, a JS ``Uint8Array`` a channel adapter holds (a remote's chunk,
        :class:`core.ports.PassThroughSink`; issue 34), to the page as it is: never copied
        into the Wasm heap."""
        self.emit(chunk)


def _handle_files(files: ProjectFiles) -> HandleProjectFiles | None:
    while isinstance(files, ReadThrough):
        files = files.reads_from
    return files if isinstance(files, HandleProjectFiles) else None


class OpfsRelay:
    """See the module docstring; ``fallback`` is the relay used when the bytes cannot go
    straight to the page (by default :class:`~core.archive.export.ChunkRelay`, made on first
    use: the archive modules are imported after ready, issue 18)."""

    def __init__(self, fallback: ChunkRelay | None = None) -> None:
        self._given: FileRelay | None = fallback

    @property
    def _fallback(self) -> FileRelay:
        if self._given is None:
            from core.archive.export import ChunkRelay  # after ready, not at boot

            self._given = ChunkRelay()
        return self._given

    def begin(self, files: ProjectFiles, sink: Sink) -> None:
        """See :meth:`core.ports.FileRelay.begin`: where the bytes will take the byte path, its
        reader lanes start now, while the export walks the project (``startLanes``)."""
        module = _bytes_module()
        if module is not None and _handle_files(files) is not None and isinstance(sink, WorkerSink):
            module.startLanes()
        else:
            self._fallback.begin(files, sink)

    async def relay(
        self, files: ProjectFiles, items: Sequence[RelayItem], sink: Sink
    ) -> list[Relayed]:
        """See :meth:`core.ports.FileRelay.relay`. Refuses ``file-not-found`` (a file went
        away), ``storage-failed`` (one could not be read, e.g. it changed while read)."""
        module = _bytes_module()
        root = _handle_files(files)
        if module is None or root is None or not isinstance(sink, WorkerSink):
            return await self._fallback.relay(files, items, sink)
        plan = [
            js_options(
                parts=to_js(list(item.path.parts)),
                size=item.size,
                lead=to_js(item.lead),
                after=to_js(item.after),
                fill=to_js([list(f) for f in item.fill]),
            )
            for item in items
        ]
        try:
            out = await settle(
                module.relayFiles(
                    root.root_handle, to_js(plan), sink.emit, WHOLE_FILE_BYTES, CHUNK_BYTES
                )
            )
        except JS_ERRORS as exc:
            raise refusal_from_js(exc, "Reading the project's files failed") from None
        return [Relayed(int(r.size), int(r.crc32), str(r.sha256)) for r in out]


def byte_path_figures() -> dict[str, int]:
    """``{"files", "bytes", "peak_held_bytes"}`` the byte path relayed since the worker started
    (``peak_held_bytes``: the most file bytes it held at once); zeros where it is absent."""
    module = _bytes_module()
    if module is None:
        return {"files": 0, "bytes": 0, "peak_held_bytes": 0}
    return {k: int(v) for k, v in module.bytePathFigures().to_py().items()}
