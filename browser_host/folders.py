"""Picked folders as projects: ``FileSystemDirectoryHandle``s kept in IndexedDB (SPEC §3).

The page obtains a handle with ``showDirectoryPicker({mode: "readwrite"})`` (a person's
gesture) and sends it beside a ``project.add_folder`` request. The handle is stored in the
``handles`` object store (handles structured-clone into IndexedDB), so the project is listed
after reload and restart. Opening checks ``queryPermission({mode: "readwrite"})``: not granted
→ ``permission-required`` (the page then asks the person, who may grant access again with
``requestPermission`` — a gesture only the page can make); ``denied`` →
``permission-denied``. Files are served by the same adapter as OPFS projects
(:class:`~browser_host.opfs.HandleProjectFiles`): per-file, fresh reads, atomic writes. Every
``open`` builds a fresh adapter (the handle is read again, its permission asked again), but
each one shares the host's one :class:`~core.projects.temporaries.Temporaries`: a listing through
one ``open`` never sweeps a temporary another call has in flight.
"""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsException, to_js

from browser_host.jsutil import js_options
from browser_host.opfs import HandleProjectFiles
from core.ports import FolderEntry
from core.projects.temporaries import Temporaries
from core.refusals import Code, Refused

__all__ = ["IdbFolderProjects"]

STORE = "handles"


class IdbFolderProjects:
    """:class:`core.ports.FolderProjects` over the ``handles`` store of ``worker/idb.mjs``."""

    def __init__(self, idb: Any, temporaries: Temporaries) -> None:
        self._idb = idb
        self._temporaries = temporaries

    async def _record(self, project_id: str) -> Any:
        record = await self._idb.kvGet(STORE, project_id)
        if record is None or not hasattr(record, "handle"):
            raise Refused(Code.PROJECT_NOT_FOUND)
        return record

    async def add(self, project_id: str, name: str, handle: object, now_ms: int) -> None:
        """See :meth:`core.ports.FolderProjects.add`; refuses anything but a folder handle."""
        if getattr(handle, "kind", None) != "directory":
            raise Refused(Code.MESSAGE_MALFORMED, "The attachment is not a folder handle.")
        from js import Object

        record = to_js(
            {"name": name, "handle": handle, "added_at": now_ms},
            dict_converter=Object.fromEntries,
        )
        await self._idb.kvPut(STORE, project_id, record)

    async def entries(self) -> list[FolderEntry]:
        """See :meth:`core.ports.FolderProjects.entries`."""
        out = []
        for pair in await self._idb.kvEntries(STORE):
            key, record = pair[0], pair[1]
            out.append(FolderEntry(str(key), str(record.name), int(record.added_at)))
        return sorted(out, key=lambda e: e.project_id)

    async def open(self, project_id: str) -> HandleProjectFiles:
        """See :meth:`core.ports.FolderProjects.open`."""
        handle = (await self._record(project_id)).handle
        try:
            state = str(await handle.queryPermission(js_options(mode="readwrite")))
        except JsException:
            state = "prompt"
        if state == "denied":
            raise Refused(Code.PERMISSION_DENIED, "Access to this folder was denied.")
        if state != "granted":
            raise Refused(
                Code.PERMISSION_REQUIRED,
                "Access to this folder lapsed; grant it again to open the project.",
            )
        return HandleProjectFiles(handle, self._temporaries)

    async def handle(self, project_id: str) -> object:
        """See :meth:`core.ports.FolderProjects.handle`."""
        return (await self._record(project_id)).handle

    async def rename(self, project_id: str, name: str) -> None:
        """See :meth:`core.ports.FolderProjects.rename`."""
        record = await self._record(project_id)
        await self.add(project_id, name, record.handle, int(record.added_at))

    async def forget(self, project_id: str) -> None:
        """See :meth:`core.ports.FolderProjects.forget`."""
        await self._record(project_id)
        await self._idb.kvDelete(STORE, project_id)
