"""The review and Merge of a remote mission's branch as the browser host reads them (issue 30,
review and Merge): which phases may be merged, the diff answer read into its closed shape (no
absolute path), and a conflict said in this host's own words listing the files."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.missions.remote_runs import MERGEABLE, merge_refusal, parse_diff, parse_merged
from core.refusals import Code, Refused

MISSION = "msn_00000000fe01"


def _diff(**over: Any) -> dict[str, Any]:
    answer = {
        "branch": f"vbx/{MISSION}",
        "base": "a" * 40,
        "head": "b" * 40,
        "into": "main",
        "files": [
            {"path": "AGENT.md", "added": 2, "removed": 0, "binary": False, "patch": "+x\n"},
            {"path": "logo.png", "added": None, "removed": None, "binary": True, "cut": "binary"},
        ],
        "more": 0,
    }
    return answer | over


def test_only_a_mission_whose_gate_passed_may_be_merged() -> None:
    assert {"merge_wait", "landed"} == MERGEABLE


def test_a_diff_answer_is_read_into_its_shape_and_an_absolute_path_is_refused() -> None:
    view = parse_diff(_diff())
    assert [(f.path, f.added, f.binary) for f in view.files] == [
        ("AGENT.md", 2, False),
        ("logo.png", None, True),
    ]
    bad_file = {"path": "/root/env/secret", "added": 1, "removed": 0}
    for bad in (
        _diff(files=[bad_file]),
        _diff(branch="main"),
        _diff(base="not a commit"),
        _diff(files=[{"path": "a", "added": -1, "removed": 0}]),
        ["not", "an", "object"],
    ):
        with pytest.raises(Refused) as refused:
            parse_diff(bad)
        assert refused.value.code is Code.PEER_ANSWER_INVALID


def test_a_merge_answer_is_read_into_its_shape() -> None:
    answer = {"branch": f"vbx/{MISSION}", "into": "main", "how": "fast-forward", "head": "c" * 40}
    merged = parse_merged(MISSION, answer)
    assert (merged.mission_id, merged.how) == (MISSION, "fast-forward")
    with pytest.raises(Refused) as refused:
        parse_merged(MISSION, answer | {"how": "rebased"})
    assert refused.value.code is Code.PEER_ANSWER_INVALID


def _conflict(details: dict[str, Any]) -> str:
    refusal = {"code": "args-invalid", "message": "THE SERVER'S WORDS", "details": details}
    return json.dumps({"ok": False, "refusal": refusal})


def test_a_merge_conflict_is_said_in_this_hosts_words_listing_the_files() -> None:
    text = _conflict({"conflicts": json.dumps(["README.md", "src/a.py"]), "conflictCount": 3})
    said = merge_refusal(Refused(Code.ARGS_INVALID), text)
    assert said.code is Code.ARGS_INVALID
    assert "README.md, src/a.py and 1 more" in said.message
    assert "Nothing was changed" in said.message and "SERVER" not in said.message
    assert said.body().details == {"conflicts": '["README.md","src/a.py"]', "conflictCount": 3}
    # another refusal, or details that are not a list of files, stay the host's generic words
    other = Refused(Code.INVALID_TRANSITION)
    assert merge_refusal(other, text) is other
    for details in ({"conflicts": "not json ["}, {"conflicts": json.dumps({"a": 1})}, {}):
        plain = Refused(Code.ARGS_INVALID)
        assert merge_refusal(plain, _conflict(details)) is plain


def test_a_reviewed_diff_writes_out_direction_and_invisible_controls() -> None:
    """Trojan Source in review (CVE-2021-42574): an agent's change with a ``U+202E`` or an
    isolate reads, in the review's text node, as other code than what Merge brings in. The
    diff reaches the page with each such character written ``<U+XXXX>``, in the patch and in
    a file's name; other text stays exactly as it was."""
    evil = '+if access != "user\u202e \u2066// admin\u2069 \u2066" {\n+café\u200b\n'
    view = parse_diff(
        _diff(
            files=[
                {"path": "a\u202egpj.py", "added": 2, "removed": 0, "binary": False, "patch": evil}
            ]
        )
    )
    (f,) = view.files
    assert f.path == "a<U+202E>gpj.py"
    assert f.patch == (
        '+if access != "user<U+202E> <U+2066>// admin<U+2069> <U+2066>" {\n+café<U+200B>\n'
    )
    assert parse_diff(_diff()).files[0].patch == "+x\n"
