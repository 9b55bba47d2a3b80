"""The project catalog: create, list, open, rename and delete projects of both kinds (SPEC §3).

- ``opfs`` projects live in :class:`~core.ports.ProjectRoots`, one root per stable id, each
  described by its manifest (``.voicebox/manifest.json``). Creating is all-or-nothing: if the
  manifest cannot be written the new root is removed again.
- ``directory`` projects are folders the user picked, kept in
  :class:`~core.ports.FolderProjects`. Their ``.voicebox/`` lives inside the folder, so the
  folder describes itself; a folder without it is adopted as it is — the manifest is written
  on the project's first write (:class:`AdoptOnWrite`), never on open.
  Removing one forgets the registration and deletes nothing on disk. Its files refuse a new
  name that differs only in letter case from a sibling
  (:class:`~core.projects.case_guard.CaseGuard`).

Opening reads the manifest only (never every file): lazy by construction. An OPFS project
once opened is remembered in ``opened`` (a dict the host keeps between calls), so a file
operation does not read the manifest again on every call: this host is the only writer of
OPFS (it holds the storage lock, SPEC §3) and every manifest change goes through
:meth:`ProjectCatalog.rename` / :meth:`ProjectCatalog.delete`, which update it. Picked folders
are never remembered: their permission is checked on every open.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.paths import MAX_NAME_CHARS, ProjectPath, check_name, check_project_name
from core.ports import Clock, FolderProjects, ProjectFiles, ProjectRoots, Randomness
from core.projects.case_guard import CaseGuard
from core.projects.project import (
    MANIFEST_PATH,
    ProjectManifest,
    check_project_id,
    new_project_id,
    read_manifest,
    write_manifest,
)
from core.projects.read_through import ReadThrough
from core.refusals import Code, Refused

__all__ = ["DUPLICATE_NAME", "AdoptOnWrite", "OpenProject", "ProjectCatalog", "same_name_key"]

DUPLICATE_NAME = "Another project already has this name; choose a different one."
"""The sentence of the ``already-exists`` refusal for a display name already taken."""


def same_name_key(name: str) -> str:
    """What makes two display names the same to a person: Unicode compatibility forms folded
    (NFKC), letter case folded, the ends' spaces ignored — ``Demo``, ``demo `` and ``ＤＥＭＯ``
    are one name (issue 17 item 7: duplicate display names are refused, one rule here)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


@dataclass(frozen=True, slots=True)
class OpenProject:
    """An opened project: its manifest, its root, and whether the manifest is on disk yet."""

    manifest: ProjectManifest
    files: ProjectFiles
    persisted: bool = True


class ProjectCatalog:
    """Projects over :class:`ProjectRoots` and, when given, :class:`FolderProjects`."""

    def __init__(
        self,
        roots: ProjectRoots,
        clock: Clock,
        random: Randomness,
        folders: FolderProjects | None = None,
        opened: dict[str, OpenProject] | None = None,
    ) -> None:
        self._roots = roots
        self._clock = clock
        self._random = random
        self._folders = folders
        self._opened: dict[str, OpenProject] = {} if opened is None else opened

    async def _taken(self, except_id: str | None = None) -> set[str]:
        return {same_name_key(m.name) for m in await self.list() if m.id != except_id}

    async def check_unique(self, name: str, except_id: str | None = None) -> None:
        """Refuse ``already-exists`` (field ``name``) when another project already has the
        display name ``name`` as :func:`same_name_key` compares names — two projects that look
        identical in every picker cannot be told apart (issue 17 item 7)."""
        if same_name_key(name) in await self._taken(except_id):
            raise Refused(Code.ALREADY_EXISTS, DUPLICATE_NAME, field="name")

    async def unique_name(self, name: str) -> str:
        """``name`` itself when no project has it, else the first free ``name (2)``,
        ``name (3)``… — for a name nobody typed (a picked folder's own name, an archive's), so
        such an act never fails on it and still never makes two projects look the same."""
        taken = await self._taken()
        if same_name_key(name) not in taken:
            return name
        n = 2
        while True:
            candidate = f"{name[: MAX_NAME_CHARS - 8]} ({n})"
            if same_name_key(candidate) not in taken:
                return candidate
            n += 1

    async def create(self, name: str) -> ProjectManifest:
        """Create an empty OPFS project called ``name``; refuses ``name-invalid`` and
        ``already-exists`` (another project has that name, :meth:`check_unique`); the name is
        one a person gives (:func:`core.paths.check_project_name`, issue 34)."""
        check_project_name(name)
        await self.check_unique(name)
        project_id = new_project_id(self._random)
        now = self._clock.now_ms()
        manifest = ProjectManifest(id=project_id, name=name, created_at=now, updated_at=now)
        files = await self._roots.create(project_id)
        try:
            await write_manifest(files, manifest)
        except BaseException:
            await self._roots.remove(project_id)
            raise
        return manifest

    async def create_staged(self, name: str) -> tuple[ProjectManifest, ProjectFiles]:
        """A new OPFS project root with NO manifest yet: invisible to :meth:`list` and
        :meth:`open` until :meth:`commit` writes its manifest (the last write). A tab closed
        before that leaves only an unfinished root, removed by :meth:`sweep_unfinished`.
        A name another project has becomes ``name (2)`` (:meth:`unique_name`)."""
        check_name(name)
        name = await self.unique_name(name)
        project_id = new_project_id(self._random)
        now = self._clock.now_ms()
        manifest = ProjectManifest(id=project_id, name=name, created_at=now, updated_at=now)
        return manifest, await self._roots.create(project_id)

    async def commit(self, manifest: ProjectManifest, files: ProjectFiles) -> None:
        """Make a staged project exist: write its manifest."""
        await write_manifest(files, manifest)

    async def abandon(self, project_id: str) -> None:
        """Remove a staged project root (after a failed import)."""
        await self._roots.remove(project_id)

    async def sweep_unfinished(self) -> list[str]:
        """Remove OPFS project roots that have no readable manifest (an import or create cut
        short). Call only while holding the storage lock, before serving requests."""
        removed = []
        for project_id in await self._roots.list_ids():
            try:
                await read_manifest(await self._roots.open(project_id), project_id)
            except Refused as exc:
                if exc.code == Code.PROJECT_NOT_FOUND:
                    await self._roots.remove(project_id)
                    removed.append(project_id)
        return removed

    async def _folder_ids(self) -> dict[str, tuple[str, int]]:
        if self._folders is None:
            return {}
        return {e.project_id: (e.name, e.added_at) for e in await self._folders.entries()}

    async def list(self) -> list[ProjectManifest]:
        """Every project, by name then id. Needs no folder permission (names come from the
        registry); OPFS folders without a readable manifest are skipped."""
        found = []
        for project_id in await self._roots.list_ids():
            try:
                files = await self._roots.open(project_id)
                found.append(await read_manifest(files, project_id))
            except Refused:
                continue
        for project_id, (name, added_at) in (await self._folder_ids()).items():
            found.append(
                ProjectManifest(
                    id=project_id,
                    name=name,
                    kind="directory",
                    created_at=added_at,
                    updated_at=added_at,
                )
            )
        return sorted(found, key=lambda m: (m.name.casefold(), m.id))

    async def add_folder(self, handle: object, name: str) -> ProjectManifest:
        """Register a picked folder as a ``directory`` project named ``name``.

        If the folder already holds a manifest of a directory project (it was a project
        before), its id and name are kept. Refuses ``name-invalid``, and whatever the
        registry refuses (``permission-required``/``permission-denied``).
        """
        if self._folders is None:
            raise Refused(Code.OPERATION_UNKNOWN, "This host cannot keep picked folders.")
        check_name(name)
        name = await self.unique_name(name)
        now = self._clock.now_ms()
        project_id = new_project_id(self._random)
        await self._folders.add(project_id, name, handle, now)
        try:
            files = await self._folders.open(project_id)
            existing = await _existing_manifest(files)
        except BaseException:
            await self._folders.forget(project_id)
            raise
        known = await self._folder_ids()
        if existing is not None and existing.kind == "directory" and existing.id not in known:
            await self._folders.forget(project_id)
            await self._folders.add(existing.id, existing.name, handle, now)
            return existing
        return ProjectManifest(
            id=project_id, name=name, kind="directory", created_at=now, updated_at=now
        )

    async def open(self, project_id: str) -> OpenProject:
        """Open ``project_id``; refuses ``project-not-found`` (and, for a picked folder,
        ``permission-required`` / ``permission-denied``)."""
        check_project_id(project_id)
        known = self._opened.get(project_id)
        if known is not None:
            return known
        folders = await self._folder_ids()
        if project_id not in folders:
            files = await self._roots.open(project_id)
            opened = OpenProject(await read_manifest(files, project_id), files)
            self._opened[project_id] = opened
            return opened
        assert self._folders is not None
        files = await self._folders.open(project_id)
        existing = await _existing_manifest(files)
        if existing is not None and existing.id == project_id:
            return OpenProject(existing, CaseGuard(files))
        name, added_at = folders[project_id]
        manifest = ProjectManifest(
            id=project_id, name=name, kind="directory", created_at=added_at, updated_at=added_at
        )
        # the guard outside: a refused name is refused before adoption writes anything
        return OpenProject(manifest, CaseGuard(AdoptOnWrite(files, manifest)), persisted=False)

    async def rename(self, project_id: str, name: str) -> ProjectManifest:
        """Give ``project_id`` the display name ``name`` (the id and folder stay); refuses
        ``already-exists`` when another project has that name (:meth:`check_unique`) and
        ``name-invalid`` (:func:`core.paths.check_project_name`, issue 34)."""
        check_project_name(name)
        await self.check_unique(name, except_id=project_id)
        opened = await self.open(project_id)
        manifest = opened.manifest.model_copy(
            update={"name": name, "updated_at": self._clock.now_ms()}
        )
        await write_manifest(opened.files, manifest)
        if project_id in self._opened:
            self._opened[project_id] = OpenProject(manifest, opened.files)
        if manifest.kind == "directory" and self._folders is not None:
            await self._folders.rename(project_id, name)
        return manifest

    async def delete(self, project_id: str) -> ProjectManifest:
        """Delete an OPFS project and all its files, or forget a picked folder (its files stay
        on disk). Returns the manifest it had."""
        check_project_id(project_id)
        folders = await self._folder_ids()
        if project_id in folders:
            assert self._folders is not None
            name, added_at = folders[project_id]
            await self._folders.forget(project_id)
            return ProjectManifest(
                id=project_id,
                name=name,
                kind="directory",
                created_at=added_at,
                updated_at=added_at,
            )
        opened = await self.open(project_id)
        self._opened.pop(project_id, None)
        await self._roots.remove(project_id)
        return opened.manifest

    async def folder_handle(self, project_id: str) -> object:
        """The picked folder's handle, so the page can ask for permission again (a gesture)."""
        check_project_id(project_id)
        if project_id not in await self._folder_ids():
            raise Refused(Code.PROJECT_NOT_FOUND, "That project is not a picked folder.")
        assert self._folders is not None
        return await self._folders.handle(project_id)


class AdoptOnWrite(ReadThrough):
    """:class:`~core.ports.ProjectFiles` of an adopted folder: reads pass through; the first
    write of any kind (file, folder, move, delete — by any operation) writes the project's
    manifest first, so the folder becomes self-describing then and not on open (SPEC §3)."""

    def __init__(self, files: ProjectFiles, manifest: ProjectManifest) -> None:
        super().__init__(files)
        self._manifest: ProjectManifest | None = manifest

    async def _adopt(self) -> None:
        if self._manifest is not None:
            manifest, self._manifest = self._manifest, None
            await write_manifest(self._files, manifest)

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write`."""
        await self._adopt()
        await self._files.write(path, data)

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`."""
        await self._adopt()
        await self._files.mkdir(path)

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete`."""
        await self._adopt()
        await self._files.delete(path, recursive=recursive)

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move`."""
        await self._adopt()
        await self._files.move(src, dst)


async def _existing_manifest(files: ProjectFiles) -> ProjectManifest | None:
    try:
        raw = await files.read(MANIFEST_PATH)
    except Refused as exc:
        if exc.code in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
            return None
        raise
    try:
        return ProjectManifest.model_validate_json(raw)
    except ValueError:
        return None
