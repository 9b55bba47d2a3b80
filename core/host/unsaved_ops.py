"""``tabs.unsaved`` and ``project.unsaved_elsewhere``: which tabs hold unsaved editor text
(issue 33, the fresh tester's tryout: deleting a project another tab had unsaved edits in said
nothing of them).

Each tab says, over its port to the host, which project and paths its editor holds unsaved
text of (``tabs.unsaved``; an empty list when none); the host keeps that per page id in memory
(:class:`core.host.unsaved_tabs.UnsavedTabs`, on ``HostContext.unsaved``) and forgets a page
when the worker learns that page's life lock was released (``browser_host.main`` ``page_gone``)
or when a new host starts (the tabs say it again: ``page/app.mjs``). The delete confirmation
asks ``project.unsaved_elsewhere`` and says "Another tab has unsaved changes in this project".

Presentation state, like the tray's layout: never stored, never audited, allowed in SAFE mode;
no file is read or written. A page id is what the tab itself says (a random UUID, the name of
its life lock); a tab naming another's id could only make a warning wrong, never a write
(docs/security.md, "Every tab a workspace").
"""

from __future__ import annotations

from pydantic import Field

from core.host.operations import Call, Outcome
from core.host.unsaved_tabs import MAX_PATHS, PAGE_ID_PATTERN, UnsavedElsewhere
from core.model import Contract
from core.projects.project import PROJECT_ID_PATTERN
from core.vocabulary import ProjectId

__all__ = [
    "ElsewhereArgs",
    "UnsavedArgs",
    "UnsavedElsewhere",
    "UnsavedKept",
    "project_unsaved_elsewhere",
    "tabs_unsaved",
]


class UnsavedArgs(Contract):
    """``tabs.unsaved``: ``page`` (the reporting tab's id) holds unsaved text of ``paths`` in
    ``project``; no project or no paths: it holds none."""

    page: str = Field(pattern=PAGE_ID_PATTERN)
    project: ProjectId | None = Field(default=None, pattern=PROJECT_ID_PATTERN)
    paths: list[str] = Field(default_factory=list, max_length=MAX_PATHS)


class UnsavedKept(Contract):
    """How many unsaved paths the host now keeps for that page."""

    paths: int


class ElsewhereArgs(Contract):
    """``project.unsaved_elsewhere``: ``project``, asked by tab ``page`` (left out)."""

    project: ProjectId = Field(pattern=PROJECT_ID_PATTERN)
    page: str = Field(pattern=PAGE_ID_PATTERN)


async def tabs_unsaved(call: Call[UnsavedArgs]) -> Outcome:
    """Keep what the calling tab says it holds unsaved. Never refuses (beyond malformed
    arguments)."""
    a = call.args
    return Outcome(UnsavedKept(paths=call.ctx.unsaved.report(a.page, a.project, a.paths)))


async def project_unsaved_elsewhere(call: Call[ElsewhereArgs]) -> Outcome:
    """Which other tabs hold unsaved text in the project
    (:meth:`core.host.unsaved_tabs.UnsavedTabs.elsewhere`). Never refuses (beyond malformed
    arguments); a project no tab reported has none."""
    return Outcome(call.ctx.unsaved.elsewhere(call.args.project, call.args.page))
