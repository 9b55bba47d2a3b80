"""Watching a project's OPFS folder for changes made by anyone: the browser's
``FileSystemObserver`` (issue 18, the open row; :mod:`core.projects.listing_cache`).

:class:`ObserverWatcher` is the host's :class:`~core.ports.WatchesFolders`. It watches the root
folder of an OPFS project (:class:`~browser_host.opfs.HandleProjectFiles` made with cached
reads — never a picked folder: a person's own programs write there and the suite cannot check
an observer on a real disk folder, so those listings are never kept) through ``watchFolder``
in ``worker/opfs-io.mjs``, and turns the observer's records into
:class:`~core.ports.FolderChange` values:

- ``appeared``, ``modified`` → ``changed`` at the record's path;
- ``disappeared`` → ``removed``; ``moved`` → ``removed`` at the old path, ``changed`` at the
  new one;
- ``errored`` (the observation ended: the folder itself was removed, the browser gave up),
  ``unknown`` (records were dropped), any other type, or a batch that cannot be read → ``lost``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyodide.ffi import create_proxy

from browser_host.opfs import HandleProjectFiles
from core.json_bound import parse_json
from core.ports import FolderChange, ProjectFiles
from core.projects.read_through import ReadThrough
from core.refusals import Refused

__all__ = ["ObserverWatcher", "changes_of"]


def changes_of(rows: Any) -> list[FolderChange]:
    """The changes one batch of ``watchFolder`` rows (``[type, path, movedFrom]``) means (module
    docstring); ``[lost]`` for anything it cannot read."""
    out: list[FolderChange] = []
    try:
        for kind, path, moved_from in rows:
            where = tuple(str(name) for name in path)
            if kind in ("appeared", "modified"):
                out.append(FolderChange("changed", where))
            elif kind == "disappeared":
                out.append(FolderChange("removed", where))
            elif kind == "moved" and moved_from is not None:
                out.append(FolderChange("removed", tuple(str(n) for n in moved_from)))
                out.append(FolderChange("changed", where))
            else:
                return [FolderChange("lost")]
    except (TypeError, ValueError):
        return [FolderChange("lost")]
    return out


class _ObserverWatch:
    """:class:`~core.ports.FolderWatch` over one ``watchFolder`` watch and the proxy of its
    report function (destroyed when the watch stops)."""

    def __init__(self, js_watch: Any, proxy: Any) -> None:
        self._watch = js_watch
        self._proxy = proxy

    @property
    def active(self) -> bool:
        """See :meth:`core.ports.FolderWatch.active`."""
        return self._proxy is not None and bool(self._watch.active)

    def stop(self) -> None:
        """See :meth:`core.ports.FolderWatch.stop`."""
        if self._proxy is None:
            return
        self._watch.stop()
        self._proxy.destroy()
        self._proxy = None


class ObserverWatcher:
    """:class:`~core.ports.WatchesFolders` through the browser's ``FileSystemObserver`` (module
    docstring). ``io`` is the worker's ``voicebox_io`` module (``worker/opfs-io.mjs``)."""

    def __init__(self, io: Any) -> None:
        self._io = io

    def watch(
        self, files: ProjectFiles, report: Callable[[Sequence[FolderChange]], None]
    ) -> _ObserverWatch | None:
        """See :meth:`core.ports.WatchesFolders.watch`; ``None`` for a picked folder and where
        the browser has no ``FileSystemObserver``."""
        while isinstance(files, ReadThrough):
            files = files.reads_from
        if not isinstance(files, HandleProjectFiles) or not files.in_opfs:
            return None

        def reported(text: str) -> None:
            try:
                changes = changes_of(parse_json(str(text), what="A folder change report"))
            except (Refused, ValueError):
                changes = [FolderChange("lost")]
            report(changes)

        proxy = create_proxy(reported)
        js_watch = self._io.watchFolder(files.root_handle, proxy)
        if js_watch is None:
            proxy.destroy()
            return None
        return _ObserverWatch(js_watch, proxy)
