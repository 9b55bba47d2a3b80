"""Missions on a remote environment as the browser host shows them (issue 30, the browser
side): when spawn is offered and why not, the log reaching the page as plain text, the board
read into a closed shape, the timeline in words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.missions.packet import compose_modes
from core.missions.remote_runs import (
    RunnerLive,
    candidate_hash,
    evidence_view,
    parse_board,
    parse_log,
    parse_runners,
    spawn_keys,
    spawn_option,
    strip_ansi,
    timeline,
)
from core.refusals import Code, Refused

LIVE = RunnerLive(runnerId="build-1", capability="build-runner", live=True, busy=0)
ASLEEP = RunnerLive(runnerId="build-1", capability="build-runner", live=False, busy=0)


def _letter(mission_id: str = "msn_00000000fe01", **over: Any) -> dict[str, Any]:
    letter = {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission_id,
        "mission_seq": 1,
        "prev_letter_id": None,
        "block_id": "sb_demo",
        "brain_ref": "demo",
        "seat": "hand",
        "capability": "build-runner",
        "phase": "judging",
        "packet_ref": "sha256:" + "0" * 64,
        "started_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    return letter | over


def _board(**over: Any) -> dict[str, Any]:
    board = {
        "brainRef": "demo",
        "skeletonId": "sk_demo",
        "storeVersion": 2,
        "blocks": [{"id": "sb_demo", "name": "Demo", "purpose": "", "boundaryVersion": 1}],
        "git": True,
        "heads": [
            {
                "missionId": "msn_00000000fe01",
                "letterId": "x" * 20,
                "postedAt": "2026-01-01T00:00:00Z",
                "letter": _letter(),
            }
        ],
    }
    return board | over


def test_spawn_is_offered_only_with_a_pairing_a_live_pinned_runner_and_a_git_project() -> None:
    def option(**over: Any) -> tuple[bool, str | None]:
        kw: dict[str, Any] = {
            "paired": True,
            "runners": [LIVE],
            "capability": "build-runner",
            "git": True,
            "read_only": False,
        }
        got = spawn_option(**(kw | over))
        assert got.mode == "spawn"
        return got.available, got.reason

    assert option() == (True, None)
    available, reason = option(paired=False)
    assert not available and reason is not None and reason.startswith("No environment")
    available, reason = option(runners=[])
    assert not available and reason is not None and "No runner is pinned for build-runner" in reason
    available, reason = option(capability="naming-runner")
    assert not available and reason is not None and "naming-runner" in reason
    available, reason = option(runners=[ASLEEP])
    assert not available and reason is not None and "not live" in reason
    available, reason = option(git=False)
    assert not available and reason is not None and "git init" in reason
    available, reason = option(read_only=True)
    assert not available and reason is not None and "read-only" in reason


def test_spawn_for_a_project_in_this_browser_says_it_lives_here() -> None:
    spawn = compose_modes(read_only=False)[-1]
    assert spawn.mode == "spawn" and not spawn.available
    assert spawn.reason is not None and "lives in this browser" in spawn.reason


def test_a_log_reaches_the_page_without_escape_codes_or_control_characters() -> None:
    raw = (
        "\x1b[1;32mPASS\x1b[0m tests\r\n"
        "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ done\n"
        "bell\x07 nul\x00 back\x08 \x9b31mred\ttab\n"
    )
    assert strip_ansi(raw) == "PASS tests\nlink done\nbell nul back red\ttab\n"
    view = parse_log({"text": raw, "bytes": 99, "finished": False, "truncated": False})
    assert "\x1b" not in view.text and "\x07" not in view.text and view.bytes == 99
    with pytest.raises(Refused) as caught:
        parse_log({"text": "x", "bytes": -1, "finished": False, "truncated": False})
    assert caught.value.code == Code.PEER_ANSWER_INVALID


def test_a_board_is_read_into_its_shape_and_a_head_letter_with_a_path_is_refused() -> None:
    board = parse_board(_board())
    assert [b.id for b in board.blocks] == ["sb_demo"] and board.git
    assert board.heads[0].letter["phase"] == "judging"
    bad = [
        _board(git="yes"),
        _board(heads=[{**_board()["heads"][0], "missionId": "msn_00000000fe02"}]),
        _board(
            heads=[
                {
                    **_board()["heads"][0],
                    "letter": _letter(
                        phase="failed",
                        mission_seq=2,
                        prev_letter_id="0" * 12,
                        runner_id="build-1",
                        verdict={"decision": "REJECT", "gist": "see /srv/vbx/wt/x.log"},
                    ),
                }
            ]
        ),
    ]
    for data in bad:
        with pytest.raises(Refused) as caught:
            parse_board(data)
        assert caught.value.code == Code.PEER_ANSWER_INVALID


def test_the_identity_lists_runners_without_anything_else() -> None:
    text = json.dumps(
        {
            "name": "x",
            "runners": [
                {"runnerId": "build-1", "capability": "build-runner", "live": True, "busy": 1}
            ],
        }
    )
    (runner,) = parse_runners(text)
    assert runner.runner_id == "build-1" and runner.live and runner.busy == 1
    assert parse_runners('{"name": "old server"}') == []
    with pytest.raises(Refused):
        parse_runners('{"runners": [{"runnerId": "../x", "capability": "b", "live": 1}]}')


def test_a_spawn_asks_for_exactly_its_runners_keys_and_never_the_union() -> None:
    keyed = RunnerLive(
        runnerId="build-2", capability="build-runner", live=True, busy=0, keys=["OPENAI_API_KEY"]
    )
    both = RunnerLive(
        runnerId="build-3",
        capability="build-runner",
        live=True,
        busy=0,
        keys=["OPENAI_API_KEY", "MISTRAL_API_KEY"],
    )
    runners = [LIVE, keyed, both]
    assert spawn_keys(runners, "build-runner", "build-2") == ("OPENAI_API_KEY",)
    assert spawn_keys(runners, "build-runner", "build-1") == ()
    assert spawn_keys(runners, "build-runner", "unlisted") == ()  # the server refuses it
    assert spawn_keys([keyed], "build-runner", None) == ("OPENAI_API_KEY",)
    assert spawn_keys([keyed, ASLEEP], "build-runner", None) == ("OPENAI_API_KEY",)
    assert spawn_keys([keyed], "naming-runner", None) == ()
    with pytest.raises(Refused) as caught:  # any live runner, needing different keys
        spawn_keys(runners, "build-runner", None)
    assert caught.value.code == Code.ARGS_INVALID and caught.value.field == "runner_id"
    listed = parse_runners(
        json.dumps({"runners": [{**keyed.model_dump(by_alias=True), "keys": ["PATH"]}]})
    )
    assert listed[0].keys == ["PATH"]  # a name shape only; the custody refuses it by its rule
    with pytest.raises(Refused):  # never a value's shape
        parse_runners(
            json.dumps({"runners": [{**keyed.model_dump(by_alias=True), "keys": ["sk-x"]}]})
        )


def test_the_timeline_names_each_phase_in_words() -> None:
    steps = timeline("gate")
    assert [(s.phase, s.state) for s in steps] == [
        ("judging", "done"),
        ("executing", "done"),
        ("gate", "now"),
        ("merge_wait", "next"),
        ("landed", "next"),
    ]
    assert all(s.words and s.words != s.phase for s in steps)
    assert [(s.phase, s.state) for s in timeline("failed")] == [
        ("judging", "done"),
        ("failed", "now"),
    ]


def test_a_candidate_is_checked_by_the_environment_or_said_to_be_only_a_claim() -> None:
    digest = "sha256:" + "a" * 64
    head = _letter(
        phase="merge_wait",
        receipt_candidate={"evidence": {"artifact_hash": digest}},
    )
    assert candidate_hash(head) == digest
    assert candidate_hash(_letter()) is None
    checked = evidence_view(digest, {"checked": True})
    claim = evidence_view(digest, {"checked": False})
    assert checked.checked and "checked by the environment" in checked.words
    assert not claim.checked and "only the poster's claim" in claim.words
    for bad in ({"checked": "yes"}, [], {}):
        with pytest.raises(Refused) as caught:
            evidence_view(digest, bad)
        assert caught.value.code == Code.PEER_ANSWER_INVALID


def test_a_landed_remote_card_says_its_receipt_and_store_version() -> None:
    """The tryout's finding: a remote mission landed, its view read ``receipt ✓ store v2`` but
    its tray card only "receipt imported" — the acceptance asks for ``landed`` with
    ``receipt ✓ store vN`` in the tray too. The card's rules carry the view's words; a head
    that is not landed carries none."""
    from core.missions.letters import parse_letter
    from core.missions.tray import remote_card

    candidate = {
        "block_id": "sb_demo",
        "evidence": {
            "artifact_hash": "sha256:" + "9" * 64,
            "evidence_refs": ["runner-log:msn_00000000fe01"],
            "window": {
                "finished_at": "2026-01-01T00:00:03Z",
                "started_at": "2026-01-01T00:00:01Z",
            },
        },
        "scope": {"boundary_version": 1, "contract_version": 1},
        "type": "test",
    }
    gate = {"artifact_hash": "sha256:" + "6" * 64, "command": "python3 check.py", "exit_status": 0}
    common = {
        "mission_seq": 5,
        "prev_letter_id": "77d9b254ff45",
        "runner_id": "demo-1",
        "synthetic": False,
        "gate": gate,
        "receipt_candidate": candidate,
    }
    landed = parse_letter(
        _letter(phase="landed", receipt={"imported": True, "store_version": 7}, **common)
    )
    assert remote_card(landed, 0).receipt == "receipt ✓ store v7"
    waiting = parse_letter(_letter(phase="merge_wait", **{**common, "mission_seq": 4}))
    assert remote_card(waiting, 0).receipt is None


def test_a_log_writes_out_its_direction_and_invisible_controls() -> None:
    """The tryout's finding: an agent printed ``U+202E`` (right-to-left override), isolates and
    a zero-width space; colour codes were stripped but these reached the page's text node as
    they were, so the log could read backwards or hide a word. They are written out as
    ``<U+XXXX>`` (the host's one rule for relayed text); other letters stay as they are."""
    raw = "gate \u202eevil\u202c ok\nzw:\u200b \u2066x\u2069 café 日本\n\x1b[31mred\x1b[0m\n"
    view = parse_log({"text": raw, "bytes": 1, "finished": True, "truncated": False})
    assert view.text == (
        "gate <U+202E>evil<U+202C> ok\nzw:<U+200B> <U+2066>x<U+2069> café 日本\nred\n"
    )
    plain = "tick 1\n\ttab\n"
    assert parse_log({"text": plain, "bytes": 1, "finished": True, "truncated": False}).text == (
        plain
    )
