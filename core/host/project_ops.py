"""Project operations: ``project.list``, ``project.create``, ``project.open``,
``project.rename``, ``project.delete`` (SPEC §3, §11)."""

from __future__ import annotations

from pydantic import Field

from core import vocabulary
from core.custody.held_secrets import refuse_held_in_project_name
from core.host.operations import Call, Outcome
from core.host.tab_events import ProjectsChanged, tell_tabs
from core.model import Contract, NoArgs
from core.projects.project import PROJECT_ID_PATTERN, ProjectKind, ProjectManifest

__all__ = ["ExportArgs", "ProjectInfo", "ProjectRef"]

ProjectId = str


class ProjectRef(Contract):
    """Arguments naming one project."""

    project: ProjectId = Field(pattern=PROJECT_ID_PATTERN)


# Declared here, among the operations imported before ``ready``, not in core/host/archive_ops.py:
# the built-in tool project.export registers this model as its arguments when the host is
# built, and the archive module is a late one, imported after ``ready`` (issue 34, cold boot).
# Its docstring is its schema's description (docs/protocol.schema.json).
class ExportArgs(Contract):
    """``project.export``: the project to export, or only one ``folder`` of it (``""``: the
    whole project)."""

    project: vocabulary.ProjectId
    folder: str = Field(default="", max_length=5000)


class ProjectInfo(Contract):
    """A project as the page sees it."""

    id: str
    name: str
    kind: ProjectKind
    created_at: int
    updated_at: int

    @classmethod
    def of(cls, m: ProjectManifest) -> ProjectInfo:
        """The page's view of a manifest."""
        return cls(
            id=m.id, name=m.name, kind=m.kind, created_at=m.created_at, updated_at=m.updated_at
        )


class ProjectList(Contract):
    """Every project, by name."""

    projects: list[ProjectInfo]


class ProjectCreateArgs(Contract):
    """``project.create``: the display name (1–200 characters, no control characters)."""

    name: str = Field(max_length=1000, title="Project name")


class ProjectRenameArgs(Contract):
    """``project.rename``: the project and its new display name."""

    project: ProjectId = Field(pattern=PROJECT_ID_PATTERN)
    name: str = Field(max_length=1000, title="Project name")


class ProjectAnswer(Contract):
    """One project."""

    project: ProjectInfo


async def project_list(call: Call[NoArgs]) -> Outcome:
    """Every project the catalog can read (never reads project files beyond manifests)."""
    manifests = await call.ctx.catalog.list()
    return Outcome(ProjectList(projects=[ProjectInfo.of(m) for m in manifests]))


async def project_create(call: Call[ProjectCreateArgs]) -> Outcome:
    """Create a project; refuses ``name-invalid``, ``sanitizer_refused``."""
    await refuse_held_in_project_name(call.ctx.secrets, call.ctx.state, call.args.name)
    m = await call.ctx.catalog.create(call.args.name)
    tell_tabs(call, ProjectsChanged(project=m.id, how="created"))
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id)


async def project_open(call: Call[ProjectRef]) -> Outcome:
    """Open a project (reads its manifest only); refuses ``project-not-found``."""
    opened = await call.ctx.catalog.open(call.args.project)
    return Outcome(
        ProjectAnswer(project=ProjectInfo.of(opened.manifest)), project=opened.manifest.id
    )


async def project_rename(call: Call[ProjectRenameArgs]) -> Outcome:
    """Rename; refuses ``project-not-found``, ``name-invalid``, ``sanitizer_refused``."""
    await refuse_held_in_project_name(call.ctx.secrets, call.ctx.state, call.args.name)
    m = await call.ctx.catalog.rename(call.args.project, call.args.name)
    tell_tabs(call, ProjectsChanged(project=m.id, how="renamed"))
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id)


class ProjectRemoved(Contract):
    """The project removed; ``files_deleted`` is false for a picked folder (only forgotten)."""

    project: ProjectInfo
    files_deleted: bool


async def project_delete(call: Call[ProjectRef]) -> Outcome:
    """Delete or forget; refuses ``project-not-found``."""
    m = await call.ctx.catalog.delete(call.args.project)
    tell_tabs(call, ProjectsChanged(project=m.id, how="removed"))
    deleted = m.kind == "opfs"
    return Outcome(
        ProjectRemoved(project=ProjectInfo.of(m), files_deleted=deleted),
        project=m.id,
        details={"kind": m.kind, "files_deleted": deleted},
    )


class AddFolderArgs(Contract):
    """``project.add_folder``: the display name; the folder's handle rides as the attachment."""

    name: str = Field(max_length=1000)


async def project_add_folder(call: Call[AddFolderArgs]) -> Outcome:
    """Refuses ``name-invalid``, ``sanitizer_refused``, ``permission-required``/
    ``permission-denied``. Writes nothing into the folder (the pipeline refuses a call without
    the folder's handle)."""
    await refuse_held_in_project_name(call.ctx.secrets, call.ctx.state, call.args.name)
    m = await call.ctx.catalog.add_folder(call.attachment, call.args.name)
    tell_tabs(call, ProjectsChanged(project=m.id, how="created"))
    return Outcome(
        ProjectAnswer(project=ProjectInfo.of(m)), project=m.id, details={"kind": "directory"}
    )


async def project_folder_handle(call: Call[ProjectRef]) -> Outcome:
    """Refuses ``project-not-found`` (also for OPFS projects)."""
    handle = await call.ctx.catalog.folder_handle(call.args.project)
    m = next(p for p in await call.ctx.catalog.list() if p.id == call.args.project)
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id, attachment=handle)
