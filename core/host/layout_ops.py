"""``files.layout``: the folders a person left open in a project's file tree (issue 17 §1).

Presentation state, kept by the host in HOST_DIR's ``ui-state.json``
(:mod:`core.missions.ui_state`) like the tray's dismissals: the page stores nothing itself
(SPEC §1), so a reload, a new tab or a copied link opens the tree the way the person left it.
Nothing here is a file operation: the folders are not checked to exist (the tree opens those it
still finds and forgets the rest the next time it reports), and nothing is audited.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.host.operations import Call, Outcome
from core.missions.ui_state import MAX_EXPANDED, Position, load_ui_state, save_ui_state
from core.model import Contract
from core.paths import parse_path
from core.vocabulary import ProjectId

__all__ = [
    "FilePosition",
    "FilePositionArgs",
    "FilesLayout",
    "FilesLayoutArgs",
    "file_position",
    "files_layout",
]


class FilesLayoutArgs(Contract):
    """``files.layout``: ``project``, and ``expanded`` — the folders open now (project paths,
    at most :data:`~core.missions.ui_state.MAX_EXPANDED`) to remember, or ``null`` to read."""

    project: ProjectId
    expanded: list[Annotated[str, Field(max_length=4096)]] | None = Field(
        default=None, max_length=MAX_EXPANDED
    )


class FilesLayout(Contract):
    """The folders remembered open in ``project``, shallowest first."""

    project: str
    expanded: list[str]


async def files_layout(call: Call[FilesLayoutArgs]) -> Outcome:
    """Read, or replace then read, a project's open folders. Refuses ``path-invalid``,
    ``path-outside-root``, ``path-reserved`` for a folder the path rule refuses (core.paths);
    nothing is stored then."""
    project, expanded = call.args.project, call.args.expanded
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if expanded is not None:
            folders = [str(parse_path(folder)) for folder in expanded]
            if folders != ui.expanded_in(project):
                ui = ui.with_expanded(project, folders)
                await save_ui_state(call.ctx.state, ui)
    return Outcome(FilesLayout(project=project, expanded=ui.expanded_in(project)))


class FilePositionArgs(Contract):
    """``files.position``: ``project``, ``path`` (a project file), and ``position`` — where the
    editor is now, to remember — or ``null`` to read (``forget: true`` drops it)."""

    project: ProjectId
    path: str = Field(min_length=1, max_length=4096)
    position: Position | None = None
    forget: bool = False


class FilePosition(Contract):
    """Where the editor was in ``path`` (``position``), or ``null`` when nothing is kept."""

    project: str
    path: str
    position: Position | None


async def file_position(call: Call[FilePositionArgs]) -> Outcome:
    """Read, or remember then read, where the editor was in a file (issue 33 item 6: a reload
    restores the cursor, the selection and the scroll). Presentation state in ``ui-state.json``
    like the open folders; the file is not checked to exist (offsets past its end are the
    page's to clamp). Refuses ``path-invalid``, ``path-outside-root``, ``path-reserved`` for a
    path the path rule refuses (core.paths); nothing is stored then."""
    args = call.args
    path = str(parse_path(args.path))
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        wanted = None if args.forget else args.position
        if (args.forget or wanted is not None) and wanted != ui.position_in(args.project, path):
            ui = ui.with_position(args.project, path, wanted)
            await save_ui_state(call.ctx.state, ui)
    return Outcome(
        FilePosition(project=args.project, path=path, position=ui.position_in(args.project, path))
    )
