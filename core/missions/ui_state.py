"""The page's presentation state, kept by the host: ``ui-state.json`` in HOST_DIR (seed 004 §3c).

The page stores nothing itself (it may not touch browser storage, SPEC §1), so what the tray
remembers between reloads lives here, written only through host operations
(:mod:`core.host.tray_ops`):

- ``tray_open`` — whether the tray is expanded (the default), and ``tray_open_by`` — the same
  per project, once a person opened or collapsed it there;
- ``expanded`` — per project, the folders open in the Files surface's tree (issue 17: a reload
  keeps them open);
- ``positions`` — per project, per file, where the editor was: the selection (``anchor``,
  ``head``, character offsets) and the scroll (``top``, CSS pixels) (issue 33 item 6: a reload
  puts the cursor back);
- ``editor`` — the person's editor settings (:class:`core.editor_prefs.EditorPrefs`);
- ``guide_dismissed`` — whether a person closed the first-run guide (issue 33 item 7; Help
  opens it again);
- ``dismissed`` — per project, per mission, the head a person hid from the tray: its content id,
  its phase, why it could be hidden (``failed``, or ``stagnant``: a ``judging``/``executing``
  head unchanged for over 24 h) and when.

It is presentation only. Nothing here is a letter, a receipt or a secret, and nothing in
``core`` other than the tray reads it; letters and the audit are untouched by a dismissal. A
dismissal names the *head* it hid, so it holds only while that letter is still the head: once
the mission moves (a new letter extends it), the tray shows it again (:mod:`core.missions.tray`).

Bounds: at most :data:`MAX_PROJECTS` projects and :data:`MAX_PER_PROJECT` dismissals per
project; past either, the oldest entries are dropped. At most :data:`MAX_EXPANDED` open folders
per project (the shallowest kept) and :data:`MAX_PROJECTS` projects with a layout (the most
recently set kept). A missing or unreadable document reads as
the default (nothing hidden, tray open): losing presentation state can only show more.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, ValidationError

from core.editor_prefs import EditorPrefs
from core.missions.letters import MissionId, Phase
from core.model import Contract, canonical_json
from core.ports import HostState
from core.time import Instant
from core.vocabulary import ProjectId, Sha256Hex

__all__ = [
    "MAX_EXPANDED",
    "MAX_PER_PROJECT",
    "MAX_POSITIONS",
    "MAX_PROJECTS",
    "UI_STATE_NAME",
    "DismissReason",
    "Dismissal",
    "Position",
    "UiState",
    "load_ui_state",
    "save_ui_state",
]

UI_STATE_NAME = "ui-state.json"
MAX_PROJECTS = 500
MAX_PER_PROJECT = 2000
MAX_EXPANDED = 500
"""The most open folders remembered for one project."""
MAX_POSITIONS = 200
"""The most file positions remembered for one project (the most recently set kept)."""

DismissReason = Literal["failed", "stagnant"]
ProjectKey = ProjectId


class Dismissal(Contract):
    """A head a person hid from the tray: its content id, phase, the reason it could be hidden
    and when (host time)."""

    letter_id: Sha256Hex
    phase: Phase
    reason: DismissReason
    at: Instant


class Position(Contract):
    """Where the editor was in one file: ``anchor`` and ``head`` of the main selection
    (character offsets, equal for a bare cursor) and ``top``, the editor's scroll (CSS px)."""

    anchor: int = Field(ge=0, le=2**31 - 1)
    head: int = Field(ge=0, le=2**31 - 1)
    top: int = Field(default=0, ge=0, le=2**31 - 1)


class UiState(Contract):
    """``ui-state.json`` (see module docstring)."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["voicebox-ui-state-v1"] = Field(default="voicebox-ui-state-v1", alias="schema")
    tray_open: bool = True
    tray_open_by: dict[ProjectKey, bool] = Field(default_factory=dict)
    expanded: dict[ProjectKey, list[Annotated[str, Field(max_length=4096)]]] = Field(
        default_factory=dict
    )
    dismissed: dict[ProjectKey, dict[MissionId, Dismissal]] = Field(default_factory=dict)
    guide_dismissed: bool = False
    editor: EditorPrefs = Field(default_factory=EditorPrefs)
    positions: dict[ProjectKey, dict[Annotated[str, Field(max_length=4096)], Position]] = Field(
        default_factory=dict
    )

    def position_in(self, project: str, path: str) -> Position | None:
        """Where the editor was in ``path`` of ``project``, or None."""
        return self.positions.get(project, {}).get(path)

    def with_position(self, project: str, path: str, position: Position | None) -> UiState:
        """A copy remembering ``position`` for ``path`` (None forgets it): at most
        :data:`MAX_POSITIONS` per project, the most recently set kept; newest projects kept."""
        files = {k: v for k, v in self.positions.get(project, {}).items() if k != path}
        if position is not None:
            files[path] = position
        others = {k: v for k, v in self.positions.items() if k != project}
        if files:
            others[project] = dict(list(files.items())[-MAX_POSITIONS:])
        return self.model_copy(update={"positions": dict(list(others.items())[-MAX_PROJECTS:])})

    def tray_open_for(self, project: str) -> bool:
        """Whether the tray is expanded in ``project`` (its own choice, else the default)."""
        return self.tray_open_by.get(project, self.tray_open)

    def with_tray_open(self, project: str, open_: bool) -> UiState:
        """A copy remembering ``open_`` for ``project`` (bounded: newest projects kept)."""
        by = {k: v for k, v in self.tray_open_by.items() if k != project}
        by[project] = open_
        return self.model_copy(update={"tray_open_by": dict(list(by.items())[-MAX_PROJECTS:])})

    def expanded_in(self, project: str) -> list[str]:
        """The folders remembered open in ``project`` (shallowest first)."""
        return list(self.expanded.get(project, []))

    def with_expanded(self, project: str, folders: list[str]) -> UiState:
        """A copy remembering ``folders`` open in ``project``: unique, shallowest first, at most
        :data:`MAX_EXPANDED`; an empty list forgets the project's entry. Newest projects kept."""
        kept = sorted(set(folders), key=lambda f: (f.count("/"), f))[:MAX_EXPANDED]
        others = {k: v for k, v in self.expanded.items() if k != project}
        if kept:
            others[project] = kept
        return self.model_copy(update={"expanded": dict(list(others.items())[-MAX_PROJECTS:])})

    def for_project(self, project: str) -> dict[str, Dismissal]:
        """The dismissals recorded for ``project`` (mission id → dismissal)."""
        return dict(self.dismissed.get(project, {}))

    def with_project(self, project: str, entries: dict[str, Dismissal]) -> UiState:
        """A copy whose dismissals for ``project`` are ``entries`` (bounded, oldest dropped)."""
        kept = dict(sorted(entries.items(), key=lambda kv: kv[1].at)[-MAX_PER_PROJECT:])
        others = {k: v for k, v in self.dismissed.items() if k != project}
        if kept:
            others[project] = kept
        if len(others) > MAX_PROJECTS:
            newest = sorted(others.items(), key=lambda kv: max(d.at for d in kv[1].values()))
            others = dict(newest[-MAX_PROJECTS:])
        return self.model_copy(update={"dismissed": others})


async def load_ui_state(state: HostState) -> UiState:
    """The stored presentation state, or the default when there is none or it is unreadable."""
    raw = await state.load(UI_STATE_NAME)
    if raw is None:
        return UiState()
    try:
        return UiState.model_validate_json(raw)
    except (ValidationError, ValueError):
        return UiState()


async def save_ui_state(state: HostState, ui: UiState) -> None:
    """Replace ``ui-state.json`` atomically with ``ui`` (canonical JSON)."""
    await state.store(UI_STATE_NAME, canonical_json(ui.model_dump(mode="json", by_alias=True)))
