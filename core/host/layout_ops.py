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
from core.missions.ui_state import MAX_EXPANDED, load_ui_state, save_ui_state
from core.model import Contract
from core.paths import parse_path
from core.projects.project import PROJECT_ID_PATTERN

__all__ = ["FilesLayout", "FilesLayoutArgs", "files_layout"]


class FilesLayoutArgs(Contract):
    """``files.layout``: ``project``, and ``expanded`` — the folders open now (project paths,
    at most :data:`~core.missions.ui_state.MAX_EXPANDED`) to remember, or ``null`` to read."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
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
