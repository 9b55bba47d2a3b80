"""Project operations: ``project.list``, ``project.create``, ``project.open``,
``project.rename``, ``project.delete`` (SPEC §3, §11)."""

from __future__ import annotations

from pydantic import Field

from core.host.operations import Call, Outcome, operation
from core.model import Contract, NoArgs
from core.projects.project import PROJECT_ID_PATTERN, ProjectKind, ProjectManifest
from core.refusals import Code, Refused

__all__ = ["ProjectInfo", "ProjectRef"]

ProjectId = str


class ProjectRef(Contract):
    """Arguments naming one project."""

    project: ProjectId = Field(pattern=PROJECT_ID_PATTERN)


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

    name: str = Field(max_length=1000)


class ProjectRenameArgs(Contract):
    """``project.rename``: the project and its new display name."""

    project: ProjectId = Field(pattern=PROJECT_ID_PATTERN)
    name: str = Field(max_length=1000)


class ProjectAnswer(Contract):
    """One project."""

    project: ProjectInfo


@operation("project.list", args=NoArgs, result=ProjectList, summary="List projects.", audited=False)
async def project_list(call: Call) -> Outcome:
    """Every project the catalog can read (never reads project files beyond manifests)."""
    manifests = await call.ctx.catalog.list()
    return Outcome(ProjectList(projects=[ProjectInfo.of(m) for m in manifests]))


@operation(
    "project.create",
    args=ProjectCreateArgs,
    result=ProjectAnswer,
    summary="Create an empty project.",
    writes=True,
)
async def project_create(call: Call) -> Outcome:
    """Create a project; refuses ``name-invalid``."""
    m = await call.ctx.catalog.create(call.args.name)
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id)


@operation("project.open", args=ProjectRef, result=ProjectAnswer, summary="Open a project.")
async def project_open(call: Call) -> Outcome:
    """Open a project (reads its manifest only); refuses ``project-not-found``."""
    opened = await call.ctx.catalog.open(call.args.project)
    return Outcome(
        ProjectAnswer(project=ProjectInfo.of(opened.manifest)), project=opened.manifest.id
    )


@operation(
    "project.rename",
    args=ProjectRenameArgs,
    result=ProjectAnswer,
    summary="Rename a project (its id stays).",
    writes=True,
)
async def project_rename(call: Call) -> Outcome:
    """Rename; refuses ``project-not-found``, ``name-invalid``."""
    m = await call.ctx.catalog.rename(call.args.project, call.args.name)
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id)


class ProjectRemoved(Contract):
    """The project removed; ``files_deleted`` is false for a picked folder (only forgotten)."""

    project: ProjectInfo
    files_deleted: bool


@operation(
    "project.delete",
    args=ProjectRef,
    result=ProjectRemoved,
    summary="Delete an OPFS project and its files, or forget a picked folder (files stay).",
    writes=True,
)
async def project_delete(call: Call) -> Outcome:
    """Delete or forget; refuses ``project-not-found``."""
    m = await call.ctx.catalog.delete(call.args.project)
    deleted = m.kind == "opfs"
    return Outcome(
        ProjectRemoved(project=ProjectInfo.of(m), files_deleted=deleted),
        project=m.id,
        details={"kind": m.kind, "files_deleted": deleted},
    )


class AddFolderArgs(Contract):
    """``project.add_folder``: the display name; the folder's handle rides as the attachment."""

    name: str = Field(max_length=1000)


@operation(
    "project.add_folder",
    args=AddFolderArgs,
    result=ProjectAnswer,
    summary="Register a folder the user picked as a project (its handle is the attachment).",
    attachment_in=True,
)
async def project_add_folder(call: Call) -> Outcome:
    """Refuses ``message-malformed`` without a handle, ``name-invalid``,
    ``permission-required``/``permission-denied``. Writes nothing into the folder."""
    if call.attachment is None:
        raise Refused(Code.MESSAGE_MALFORMED, "'project.add_folder' needs the folder's handle.")
    m = await call.ctx.catalog.add_folder(call.attachment, call.args.name)
    return Outcome(
        ProjectAnswer(project=ProjectInfo.of(m)), project=m.id, details={"kind": "directory"}
    )


@operation(
    "project.folder_handle",
    args=ProjectRef,
    result=ProjectAnswer,
    summary="Hand the page a picked folder's handle so a person can grant access again.",
)
async def project_folder_handle(call: Call) -> Outcome:
    """Refuses ``project-not-found`` (also for OPFS projects)."""
    handle = await call.ctx.catalog.folder_handle(call.args.project)
    m = next(p for p in await call.ctx.catalog.list() if p.id == call.args.project)
    return Outcome(ProjectAnswer(project=ProjectInfo.of(m)), project=m.id, attachment=handle)
