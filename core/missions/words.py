"""The plain words a newcomer reads (issue 33 item 7): one place for them, in core.

The host's records use exact ids — phase names (``merge_wait``), ``seat``, ``capability``,
``ratify``, ``boundary`` — and those ids stay what the protocol, the letters and the audit say.
What a person reads beside them comes from here, generated into the page's contract module
(:mod:`core.host.page_contract`), so the page never keeps a word list of its own:

- :data:`TERMS` — the glossary: term id → :class:`Term` (a short plain label and one sentence
  of meaning). The Help panel lists it; a raw id on screen shows its label, with the id and the
  meaning in a tooltip. Every phase is a term too (:data:`core.missions.letters.PHASE_LABELS`
  and :data:`~core.missions.letters.PHASE_MEANINGS` are their words).
- :data:`SEAT_LABELS`, :data:`CAPABILITY_LABELS` — a plain word for each value of the closed
  :data:`~core.missions.letters.Seat` and :data:`~core.missions.letters.Capability` lists.
- :data:`GUIDE` — the first-run guide's steps (:class:`GuideStep`: title, one sentence, and the
  page surface where the step starts).

Nothing here is a rule: changing a word changes no behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.missions.letters import PHASE_LABELS, PHASE_MEANINGS, PHASES

__all__ = [
    "CAPABILITY_LABELS",
    "GUIDE",
    "GUIDE_PURPOSE",
    "SEAT_LABELS",
    "TERMS",
    "GuideStep",
    "Surface",
    "Term",
    "glossary",
]


@dataclass(frozen=True)
class Term:
    """One glossary entry: ``label`` (a few plain words, shown in place of the raw id) and
    ``meaning`` (one sentence, shown in the tooltip and the Help panel)."""

    label: str
    meaning: str


Surface = Literal["projects", "files", "blocks", "compose", "environments", "tools"]


@dataclass(frozen=True)
class GuideStep:
    """One step of the first-run guide: a ``title`` (imperative, short), one sentence of
    ``text``, and the page ``surface`` the step's button opens."""

    title: str
    text: str
    surface: Surface


TERMS: dict[str, Term] = {
    "project": Term("Project", "A folder of files and its memory (blocks, missions, receipts)."),
    "block": Term(
        "Block",
        "A named part of the project with a purpose and a colour; missions work on one block.",
    ),
    "boundary": Term(
        "Scope version",
        "How many times a block's purpose changed; a new purpose makes older proofs stale.",
    ),
    "store_version": Term(
        "Block list version", "Goes up with every change to the project's list of blocks."
    ),
    "ratify": Term(
        "Approve",
        "Record that you accept the list of blocks as it stands now (changes nothing else).",
    ),
    "mission": Term("Mission", "One piece of work on a block, followed from start to landing."),
    "letter": Term("Mission update", "One step of a mission, written by whoever did it."),
    "seat": Term(
        "Role", "The part the addressee plays in a mission: doing the work or judging it."
    ),
    "capability": Term("Worker kind", "Which kind of worker may take the mission."),
    "receipt": Term(
        "Proof of work", "The record that a mission's check passed, imported by a person."
    ),
    "gate": Term("Check", "The command that tests a mission's work; its log is kept by hash."),
    "environment": Term(
        "Environment", "Another host (a server or machine) paired with this one to run work."
    ),
    "safe_mode": Term("Read-only mode", "Every write is refused; reading and exporting work."),
    "audit": Term("Activity log", "Every gesture and write, in a chain a change would break."),
    "tray": Term("Missions tray", "The panel on the right showing each mission's latest step."),
    "plugin": Term("Plugin", "A package of extra operations, admitted by its exact bytes."),
}
"""The glossary (module docstring): term id → :class:`Term`. Phases are added by
:func:`glossary`."""

SEAT_LABELS: dict[str, str] = {"hand": "Doer", "oracle": "Judge"}
"""A plain word for each :data:`~core.missions.letters.Seat`."""

CAPABILITY_LABELS: dict[str, str] = {
    "build-runner": "Builder",
    "naming-runner": "Namer",
    "loop-runner": "Repeating worker",
    "hand-runner": "Manual worker",
    "review-runner": "Reviewer",
}
"""A plain word for each :data:`~core.missions.letters.Capability`."""

GUIDE_PURPOSE = (
    "Voicebox keeps a project's files and the missions that change them, in this browser:"
    " nothing leaves it unless you pair an environment."
)
"""What the product is for, in one sentence (the guide's first line)."""

GUIDE: tuple[GuideStep, ...] = (
    GuideStep("Create a project", "A project holds your files and their memory.", "projects"),
    GuideStep("Add a block", "Name a part of the project and say what it is for.", "blocks"),
    GuideStep("Compose a mission", "Write what should change in a block, and send it.", "compose"),
    GuideStep(
        "Pair an environment", "Connect a server that runs missions for you.", "environments"
    ),
    GuideStep("Run Python", "Open a .py file in Files and run it here, in the page.", "files"),
)
"""The first-run guide's steps, in order (issue 33 item 7)."""


def glossary() -> dict[str, Term]:
    """Every term a person may meet: :data:`TERMS`, then each phase (id → its
    :data:`~core.missions.letters.PHASE_LABELS` label and
    :data:`~core.missions.letters.PHASE_MEANINGS` meaning) that is not a term already
    (``gate`` is both: the term's sentence says more)."""
    out = dict(TERMS)
    for phase in PHASES:
        out.setdefault(phase, Term(PHASE_LABELS[phase], PHASE_MEANINGS[phase]))
    return out
