"""Reading many files at once: the host's one way to read a list of files it chose (issue 33).

A search in files reads every selected file of a project — thousands of small files. Over the
browser adapter one call per file crossed from Python into JavaScript and back once per file,
which cost more than the reading itself (docs/search.md, "Reading"); an adapter that can read a
list in one call (:class:`core.ports.ReadsMany`: the browser's, in reader lanes) is asked for the
whole list, any other one file at a time. The host decides which files (the path rule, the
exclusions) and the size bound; the adapter only moves bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.paths import ProjectPath
from core.ports import Entry, ListsKinds, ManyRead, ProjectFiles, ReadsMany
from core.projects.read_through import ReadThrough
from core.refusals import Refused

__all__ = ["list_for_reading", "read_many"]


def _reader(files: ProjectFiles) -> object:
    """The first of ``files`` and its read-through wrappers that reads many at once
    (:class:`~core.ports.ReadsMany`: the project's kept bytes,
    :class:`core.projects.listing_cache.CachedListings`, or the adapter), else the adapter."""
    inner: object = files
    while not isinstance(inner, ReadsMany) and isinstance(inner, ReadThrough):
        inner = inner.reads_from
    return inner


def _inner(files: ProjectFiles) -> object:
    """The adapter under ``files``' read-through wrappers (every read goes to it unchanged)."""
    inner: object = files
    while isinstance(inner, ReadThrough):
        inner = inner.reads_from
    return inner


async def list_for_reading(files: ProjectFiles, folder: tuple[str, ...]) -> list[Entry]:
    """The entries of ``folder`` as :meth:`~core.ports.ProjectFiles.list_dir` gives them, but
    without the files' sizes (``None``) where the adapter can list so for less
    (:class:`core.ports.ListsKinds`: the browser's, where a size costs a call per file); for
    a walk whose files are then read by :func:`read_many`, which applies the size bound.
    Refuses as ``list_dir``. Issue 33."""
    inner = _inner(files)
    if isinstance(inner, ListsKinds):
        return await inner.list_kinds(folder)
    return await files.list_dir(folder)


async def read_many(
    files: ProjectFiles, paths: Sequence[ProjectPath], max_bytes: int
) -> list[ManyRead]:
    """One :data:`core.ports.ManyRead` per path of ``paths``, in order: the file's bytes,
    ``"large"`` when it is larger than ``max_bytes`` (bytes) — not read where the adapter can
    tell first — or ``"unreadable"`` when reading it is refused (``file-not-found``,
    ``is-a-directory``, ``storage-failed``…). Never refuses for one file. The nearest wrapper
    that reads many answers (an OPFS project's kept bytes first: issue 33). Issue 33."""
    if not paths:
        return []
    many = _reader(files)
    if isinstance(many, ReadsMany):
        return await many.read_many(paths, max_bytes)
    out: list[ManyRead] = []
    for path in paths:
        try:
            data = await files.read(path)
        except Refused:
            out.append("unreadable")
            continue
        out.append("large" if len(data) > max_bytes else data)
    return out
