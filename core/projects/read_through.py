"""The read side of a :class:`~core.ports.ProjectFiles` wrapper, passed through (STYLE §1).

A wrapper that changes only what writing does (:class:`~core.projects.case_guard.CaseGuard`,
:class:`~core.projects.catalog.AdoptOnWrite`) subclasses :class:`ReadThrough` and defines the
writes; reads, streams, stats and listings go to the wrapped files unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from core.paths import ProjectPath
from core.ports import Entry, ListsFolders, ProjectFiles

__all__ = ["WALK_FOLDERS", "ReadThrough", "many_lister"]

WALK_FOLDERS = 32
"""Folders a walk asks a :class:`~core.ports.ListsFolders` to list at once."""


class ReadThrough:
    """Holds the wrapped ``files`` and forwards every read of :class:`~core.ports.ProjectFiles`
    to it; raises what the wrapped files raise (``file-not-found``, ``storage-failed``…)."""

    def __init__(self, files: ProjectFiles) -> None:
        self._files = files

    @property
    def reads_from(self) -> ProjectFiles:
        """The wrapped files, which every read goes to unchanged (a placement's relay reads
        them directly: :class:`~core.ports.FileRelay`)."""
        return self._files

    async def read(self, path: ProjectPath) -> bytes:
        """See :meth:`core.ports.ProjectFiles.read`."""
        return await self._files.read(path)

    def read_chunks(self, path: ProjectPath, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_chunks`."""
        return self._files.read_chunks(path, chunk_size)

    async def read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_ranges`."""
        return await self._files.read_ranges(path, spans)

    async def stat(self, path: ProjectPath) -> Entry | None:
        """See :meth:`core.ports.ProjectFiles.stat`."""
        return await self._files.stat(path)

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        """See :meth:`core.ports.ProjectFiles.list_dir`."""
        return await self._files.list_dir(folder)

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        """See :meth:`core.ports.ProjectFiles.names`."""
        return await self._files.names(folder)


def many_lister(files: ProjectFiles) -> ListsFolders | None:
    """The files under ``files``' read-through wrappers when they list several folders in one
    wait (:class:`~core.ports.ListsFolders`: a browser folder; the wrappers pass listings
    through unchanged), else None. Used by every walk that lists a depth of folders at once:
    the export's (issue 18) and ``file.walk`` (issue 34, round 42)."""
    while isinstance(files, ReadThrough):
        files = files.reads_from
    return files if isinstance(files, ListsFolders) else None
