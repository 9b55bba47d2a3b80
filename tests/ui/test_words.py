"""The plain words a newcomer reads come from core, one place, and reach the page through the
generated contract (issue 33 item 7; core/missions/words.py, core/missions/letters.py); the
first-run guide's closing is kept by the host, not the page (core/host/help_ops.py)."""

from __future__ import annotations

from typing import get_args

from core.host.page_contract import page_contract, render
from core.missions.letters import PHASE_LABELS, PHASE_MEANINGS, PHASES, Capability, Seat
from core.missions.ui_state import UiState
from core.missions.words import (
    CAPABILITY_LABELS,
    GUIDE,
    SEAT_LABELS,
    TERMS,
    Surface,
    glossary,
)
from tests.support import HostHarness

RAW_WORDS = ("block", "seat", "capability", "ratify", "boundary")
"""The raw ids issue 33 item 7 names as shown to people without a plain word."""


def test_every_phase_has_a_short_plain_label_other_than_its_id() -> None:
    assert set(PHASE_LABELS) == set(PHASES) == set(PHASE_MEANINGS)
    for phase in PHASES:
        label = PHASE_LABELS[phase]
        assert label and len(label) <= 16, phase
        assert "_" not in label and label != phase, phase


def test_no_phase_reads_as_a_seat_at_work() -> None:
    # a phase is where a mission is, whoever holds its seat: a Doer's first letter (judging,
    # seed 004 §4a) must not read as a Judge's work (stop 44: "Judging" on a Doer's card)
    stems = [word.lower()[:4] for word in SEAT_LABELS.values()]
    for phase in PHASES:
        words = f"{PHASE_LABELS[phase]} {PHASE_MEANINGS[phase]}".lower()
        assert not any(stem in words for stem in stems), (phase, words)


def test_every_seat_and_capability_has_a_plain_word() -> None:
    assert set(SEAT_LABELS) == set(get_args(Seat))
    assert set(CAPABILITY_LABELS) == set(get_args(Capability))
    for word in (*SEAT_LABELS.values(), *CAPABILITY_LABELS.values()):
        assert word and "-" not in word


def test_the_glossary_explains_every_raw_word_and_every_phase() -> None:
    terms = glossary()
    for term in (*RAW_WORDS, *PHASES):
        assert term in terms, term
        assert terms[term].label and terms[term].meaning, term
    for term in RAW_WORDS:
        assert TERMS[term].label.lower() != term or term == "block", term


def test_the_generated_page_contract_carries_the_words() -> None:
    contract = page_contract()
    assert contract["PHASE_LABELS"] == PHASE_LABELS
    assert contract["SEAT_LABELS"] == SEAT_LABELS
    assert contract["CAPABILITY_LABELS"] == CAPABILITY_LABELS
    assert contract["GLOSSARY"]["merge_wait"] == {
        "label": PHASE_LABELS["merge_wait"],
        "meaning": PHASE_MEANINGS["merge_wait"],
    }
    assert set(contract["GLOSSARY"]) >= set(RAW_WORDS) | set(PHASES)
    steps = contract["GUIDE"]["steps"]
    assert [s["title"] for s in steps] == [s.title for s in GUIDE]
    assert {s["surface"] for s in steps} <= {
        "projects",
        "files",
        "blocks",
        "compose",
        "environments",
        "tools",
    }
    text = render()
    assert "export const GLOSSARY" in text and "export const PHASE_LABELS" in text


def test_the_guide_starting_points_cover_the_first_day() -> None:
    titles = " ".join(s.title.lower() for s in GUIDE)
    for start in ("project", "block", "mission", "environment", "python"):
        assert start in titles, start


def test_a_closed_guide_stays_closed_until_help_opens_it_again() -> None:
    h = HostHarness()
    assert h.ok("help.guide")["dismissed"] is False
    assert h.ok("help.guide", dismissed=True)["dismissed"] is True
    assert h.ok("help.guide")["dismissed"] is True
    h.ok("project.create", name="alpha")  # other presentation state does not reset it
    assert h.ok("help.guide")["dismissed"] is True
    assert h.ok("help.guide", dismissed=False)["dismissed"] is False
    assert h.ok("help.guide")["dismissed"] is False


def test_the_guide_shows_everywhere_before_the_first_project_then_only_where_one_starts() -> None:
    """Issue 33 (the fresh tester's tryout): the guide is not furniture over a person's work.
    No project yet: every surface; a project exists: only Projects; closed: nowhere."""
    h = HostHarness()
    every = set(get_args(Surface))
    assert set(h.ok("help.guide")["shown_on"]) == every
    pid = h.ok("project.create", name="alpha")["project"]["id"]
    assert h.ok("help.guide")["shown_on"] == ["projects"]
    assert h.ok("help.guide", dismissed=True)["shown_on"] == []
    assert h.ok("help.guide", dismissed=False)["shown_on"] == ["projects"]
    h.ok("project.delete", project=pid)
    assert set(h.ok("help.guide")["shown_on"]) == every


def test_an_older_ui_state_without_the_guide_reads_as_guide_shown() -> None:
    old = '{"schema": "voicebox-ui-state-v1", "tray_open": true}'
    assert UiState.model_validate_json(old).guide_dismissed is False
