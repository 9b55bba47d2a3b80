"""``help.guide``: whether the first-run guide is shown (issue 33 item 7); ``editor.prefs``: the
person's editor settings (issue 33 item 6).

Presentation state, kept by the host in HOST_DIR's ``ui-state.json``
(:mod:`core.missions.ui_state`) like the tray's: the page stores nothing itself (SPEC §1), so a
guide a person closed stays closed after a reload and in another tab, and Help opens it again.
Not project data and not a write to any project: SAFE mode does not refuse it, nothing is
audited. The guide's words are :data:`core.missions.words.GUIDE`, in the page's contract module.
"""

from __future__ import annotations

from core.editor_prefs import EditorPrefs
from core.host.operations import Call, Outcome
from core.missions.ui_state import load_ui_state, save_ui_state
from core.model import Contract

__all__ = ["EditorPrefsArgs", "GuideArgs", "GuideState", "editor_prefs", "help_guide"]


class GuideArgs(Contract):
    """``help.guide``: ``dismissed`` — true to close the guide, false to show it again, or
    ``null`` (the default) to read."""

    dismissed: bool | None = None


class GuideState(Contract):
    """Whether the first-run guide is closed (``dismissed``: the person closed it)."""

    dismissed: bool


async def help_guide(call: Call[GuideArgs]) -> Outcome:
    """Read, or set then read, whether the guide is closed. Never refuses (beyond malformed
    arguments)."""
    wanted = call.args.dismissed
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if wanted is not None and wanted != ui.guide_dismissed:
            ui = ui.model_copy(update={"guide_dismissed": wanted})
            await save_ui_state(call.ctx.state, ui)
    return Outcome(GuideState(dismissed=ui.guide_dismissed))


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
