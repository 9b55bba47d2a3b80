"""Every tab follows what another tab changed, without a reload (issue 33 item 2).

The host posts one of these to every tab (its own page and every follower,
``worker/host.mjs``) after a call that changed what a tab shows: the files of a project
(``files.changed``: a delete, a move, a trash restore, a new folder, an upload batch — and so a
Python run's applied writes and deletes, which go through ``file.write``/``file.delete``) or
the list of projects (``projects.changed``). ``file.write`` posts its own
:class:`core.projects.edit_version.FileChanged` (path and version, for the editor). An event
names only the project and paths: no bytes, no secret. A tab showing that project lists its
tree again; the Projects surface lists the projects again.
"""

from __future__ import annotations

from typing import Any, Literal

from core.host.operations import Call
from core.model import Contract

__all__ = ["FilesChanged", "ProjectsChanged", "tell_tabs"]


class FilesChanged(Contract):
    """``files.changed``: ``paths`` (project paths, e.g. ``"src/a.py"``; a folder stands for
    everything below it) of ``project`` changed — created, removed or moved (both ends of a
    move are named). ``how`` names the call that changed them."""

    type: Literal["files.changed"] = "files.changed"
    project: str
    paths: list[str]
    how: Literal["delete", "move", "restore", "mkdir", "batch"]


class ProjectsChanged(Contract):
    """``projects.changed``: ``project`` (its id) was created, renamed or removed."""

    type: Literal["projects.changed"] = "projects.changed"
    project: str
    how: Literal["created", "renamed", "removed"]


def tell_tabs(call: Call[Any], event: Contract) -> None:
    """Post ``event`` to every tab when the host has a page to tell (``services.events``);
    never waits, never fails the call (:class:`core.ports.PageEvents`)."""
    events = call.ctx.services.events
    if events is not None:
        events.post(event)
