"""The tray's rules for a project of a remote environment (issue 30: "the tray follows the
project being viewed wherever it lives"; "compose → spawn"): a remote head gets the local
tray's pinned failure and stagnation, a status line, and the actions a remote card offers —
open its mission view, review a gate-green one, cancel one that waits for or is under its
runner; the page reads again fast while a mission moves and slowly when none does; Compose
for a remote project offers spawn exactly as ``spawn_option`` decides, never direct."""

from __future__ import annotations

from core.missions.letters import PHASE_MEANINGS, PHASES, parse_letter
from core.missions.packet import ModeOption
from core.missions.remote_runs import (
    FOLLOW_IDLE_MS,
    FOLLOW_LOG_MS,
    FOLLOW_MOVING_MS,
    NO_PIN_REASON,
    NOT_GIT_REASON,
    NOT_LIVE_REASON,
    NOT_PAIRED_REASON,
    REMOTE_DIRECT_REASON,
    RunnerLive,
    follow_ms,
    remote_compose_modes,
    spawn_option,
)
from core.missions.tray import (
    REMOTE_QUEUED,
    dismiss_reason,
    is_stagnant,
    remote_card,
    remote_card_actions,
)
from tests.missions.kit import letter

OLD = "2025-12-30T20:00:00Z"
NOW_MS = 1_767_225_600_000
PREV = "0" * 12


def test_a_remote_card_offers_open_or_review_and_cancel_only_while_its_runner_has_it() -> None:
    expected = {
        "judging": ("open", "cancel"),
        "executing": ("open", "cancel"),
        "gate": ("open", "cancel"),
        "review": ("open",),
        "merge_wait": ("review",),
        "landed": ("review",),
        "failed": ("open",),
        "archived": ("open",),
    }
    assert {p: remote_card_actions(p) for p in PHASES} == expected


def test_a_remote_head_follows_the_local_trays_pinning_and_stagnation() -> None:
    failed = parse_letter(
        letter(
            phase="failed",
            seq=3,
            prev=PREV,
            verdict={"decision": "REJECT", "gist": "cancelled by a person"},
        )
    )
    rules = remote_card(failed, NOW_MS)
    assert rules.pinned is True and rules.reason == "cancelled by a person"
    assert rules.actions == ("open",) and rules.status == PHASE_MEANINGS["failed"]
    stale = parse_letter(
        letter(phase="executing", seq=2, prev=PREV, updated_at=OLD, started_at=OLD)
    )
    assert remote_card(stale, NOW_MS).stagnant is is_stagnant(stale, NOW_MS) is True
    assert dismiss_reason(stale, NOW_MS) == "stagnant"  # the same rule the local tray uses
    queued = parse_letter(letter(phase="judging"))
    assert remote_card(queued, NOW_MS).status == REMOTE_QUEUED
    assert remote_card(queued, NOW_MS).pinned is False


def test_the_page_reads_a_remote_project_again_fast_while_a_mission_moves() -> None:
    for moving in ("judging", "executing", "gate"):
        assert follow_ms(["landed", moving]) == FOLLOW_MOVING_MS
    assert follow_ms(["merge_wait", "failed", "landed"]) == FOLLOW_IDLE_MS
    assert follow_ms([]) == FOLLOW_IDLE_MS
    # "no polling slower than the letter itself": the runner posts a phase seconds apart
    assert FOLLOW_MOVING_MS <= 250 and FOLLOW_LOG_MS <= 100 and FOLLOW_IDLE_MS <= 2500


def _runner(capability: str = "build-runner", live: bool = True) -> RunnerLive:
    return RunnerLive.model_validate(
        {"runnerId": "build-1", "capability": capability, "live": live, "busy": 0}
    )


def test_compose_for_a_remote_project_offers_spawn_with_the_honest_reason_and_never_direct() -> (
    None
):
    def modes(**kw: object) -> list[ModeOption]:
        base: dict[str, object] = {
            "paired": True,
            "runners": [_runner()],
            "capability": "build-runner",
            "git": True,
            "read_only": False,
        }
        return remote_compose_modes(spawn_option(**(base | kw)))  # type: ignore[arg-type]

    clipboard, direct, spawn = modes()
    assert (clipboard.mode, clipboard.available) == ("clipboard", True)
    assert (direct.mode, direct.available, direct.reason) == ("direct", False, REMOTE_DIRECT_REASON)
    assert (spawn.mode, spawn.available, spawn.reason) == ("spawn", True, None)
    reasons = {
        "no environment": modes(paired=False)[2].reason,
        "no runner pinned": modes(runners=[_runner("naming-runner")])[2].reason,
        "runner not live": modes(runners=[_runner(live=False)])[2].reason,
        "not a git repository": modes(git=False)[2].reason,
    }
    assert reasons == {
        "no environment": NOT_PAIRED_REASON,
        "no runner pinned": NO_PIN_REASON.format(capability="build-runner"),
        "runner not live": NOT_LIVE_REASON.format(capability="build-runner"),
        "not a git repository": NOT_GIT_REASON,
    }
