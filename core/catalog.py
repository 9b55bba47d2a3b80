"""The project catalog: create, list, open, rename and delete projects (SPEC §3, §11).

Projects live in :class:`~core.ports.ProjectRoots`, one root per stable id, each described by
its manifest. Creating is all-or-nothing: if the manifest cannot be written the new root is
removed again. Opening reads only the manifest (never every file): lazy by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.paths import check_name
from core.ports import Clock, ProjectFiles, ProjectRoots, Randomness
from core.project import (
    ProjectManifest,
    check_project_id,
    new_project_id,
    read_manifest,
    write_manifest,
)
from core.refusals import Refused

__all__ = ["OpenProject", "ProjectCatalog"]


@dataclass(frozen=True, slots=True)
class OpenProject:
    """An opened project: its manifest and its root."""

    manifest: ProjectManifest
    files: ProjectFiles


class ProjectCatalog:
    """Projects over one :class:`~core.ports.ProjectRoots` (see module docstring)."""

    def __init__(self, roots: ProjectRoots, clock: Clock, random: Randomness) -> None:
        self._roots = roots
        self._clock = clock
        self._random = random

    async def create(self, name: str) -> ProjectManifest:
        """Create an empty project called ``name``; refuses ``name-invalid``."""
        check_name(name)
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

    async def list(self) -> list[ProjectManifest]:
        """Every readable project, by name then id. Folders without a manifest are skipped."""
        found = []
        for project_id in await self._roots.list_ids():
            try:
                files = await self._roots.open(project_id)
                found.append(await read_manifest(files, project_id))
            except Refused:
                continue
        return sorted(found, key=lambda m: (m.name.casefold(), m.id))

    async def open(self, project_id: str) -> OpenProject:
        """Open ``project_id``; refuses ``project-not-found``."""
        check_project_id(project_id)
        files = await self._roots.open(project_id)
        return OpenProject(await read_manifest(files, project_id), files)

    async def rename(self, project_id: str, name: str) -> ProjectManifest:
        """Give ``project_id`` the display name ``name`` (the id and folder stay)."""
        check_name(name)
        opened = await self.open(project_id)
        manifest = opened.manifest.model_copy(
            update={"name": name, "updated_at": self._clock.now_ms()}
        )
        await write_manifest(opened.files, manifest)
        return manifest

    async def delete(self, project_id: str) -> ProjectManifest:
        """Delete ``project_id`` and all its files; returns the manifest it had."""
        opened = await self.open(project_id)
        await self._roots.remove(project_id)
        return opened.manifest
