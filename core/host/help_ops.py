"""``help.guide``: whether the first-run guide is shown (issue 33 item 7); ``editor.prefs``: the
person's editor settings (issue 33 item 6).

Presentation state, kept by the host in HOST_DIR's ``ui-state.json``
(:mod:`core.missions.ui_state`) like the tray's: the page stores nothing itself (SPEC §1), so a
guide a person closed stays closed after a reload and in another tab, and Help opens it again.
Not project data and not a write to any project: SAFE mode does not refuse it, nothing is
audited. The guide's words are :data:`core.missions.words.GUIDE`, in the page's contract module.
"""

from __future__ import annotations

from typing import get_args

from core.editor_prefs import EditorPrefs
from core.host.operations import Call, Outcome
from core.missions.ui_state import load_ui_state, save_ui_state
from core.missions.words import Surface
from core.model import Contract

__all__ = [
    "GUIDE_HOME",
    "EditorPrefsArgs",
    "GuideArgs",
    "GuideState",
    "editor_prefs",
    "guide_surfaces",
    "help_guide",
]

GUIDE_HOME: Surface = "projects"
"""The surface the guide stays on once a project exists: where a person starts."""

EVERY_SURFACE: tuple[Surface, ...] = get_args(Surface)


class GuideArgs(Contract):
    """``help.guide``: ``dismissed`` — true to close the guide, false to show it again, or
    ``null`` (the default) to read."""

    dismissed: bool | None = None


class GuideState(Contract):
    """Whether the first-run guide is closed (``dismissed``: the person closed it), and
    ``shown_on``: the page surfaces it is drawn on (:func:`guide_surfaces`)."""

    dismissed: bool
    shown_on: list[Surface]


def guide_surfaces(*, dismissed: bool, projects: int) -> list[Surface]:
    """Where the page draws the first-run guide (issue 33, the fresh tester's tryout: it sat
    on every surface as furniture while projects existed). Nowhere once the person closed it
    (Help opens it again); on every surface while there is no project yet (each surface's
    first step is to make one); else only on :data:`GUIDE_HOME`, where a person starts.
    ``projects``: how many projects the catalog lists."""
    if dismissed:
        return []
    return list(EVERY_SURFACE) if projects == 0 else [GUIDE_HOME]


async def help_guide(call: Call[GuideArgs]) -> Outcome:
    """Read, or set then read, whether the guide is closed, and where it is drawn
    (:func:`guide_surfaces`; reads the catalog's manifests to count projects). Never refuses
    (beyond malformed arguments)."""
    wanted = call.args.dismissed
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if wanted is not None and wanted != ui.guide_dismissed:
            ui = ui.model_copy(update={"guide_dismissed": wanted})
            await save_ui_state(call.ctx.state, ui)
    projects = len(await call.ctx.catalog.list())
    shown_on = guide_surfaces(dismissed=ui.guide_dismissed, projects=projects)
    return Outcome(GuideState(dismissed=ui.guide_dismissed, shown_on=shown_on))


class EditorPrefsArgs(Contract):
    """``editor.prefs``: ``prefs`` — the settings to keep (all of them), or ``null`` to read."""

    prefs: EditorPrefs | None = None


async def editor_prefs(call: Call[EditorPrefsArgs]) -> Outcome:
    """Read, or replace then read, the editor settings (:class:`core.editor_prefs.EditorPrefs`;
    a value out of its bounds is refused ``message-malformed``, like any malformed argument).
    Presentation state, like the guide's: not audited, allowed in SAFE mode."""
    wanted = call.args.prefs
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if wanted is not None and wanted != ui.editor:
            ui = ui.model_copy(update={"editor": wanted})
            await save_ui_state(call.ctx.state, ui)
    return Outcome(ui.editor)
