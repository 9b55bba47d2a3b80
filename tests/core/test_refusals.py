"""The closed refusal list (core/refusals.py; SPEC §4–§10, seed 002 §5)."""

from __future__ import annotations

import re

from core.refusals import REFUSALS, Code, Refused

SEED_002 = {
    "host-token-required": (403, None),
    "unknown-environment": (404, None),
    "environment-not-paired": (403, None),
    "pairing-revoked": (403, 1008),
    "bearer-refused": (403, 1008),
    "unauthenticated-call": (401, 1008),
    "executor-unauthenticated": (1008, 1008),
    "environment-unreachable": (502, None),
}


def test_every_code_has_a_status_and_a_meaning() -> None:
    assert set(REFUSALS) == set(Code)
    for code, info in REFUSALS.items():
        assert 400 <= info.status <= 599 or info.status == 1008, code
        assert info.meaning.endswith(".") and len(info.meaning) < 120, code


def test_seed_002_codes_have_the_seed_statuses() -> None:
    for code, (status, ws) in SEED_002.items():
        info = REFUSALS[Code(code)]
        assert (info.status, info.ws) == (status, ws), code


def test_codes_are_kebab_case_or_the_seed_004_names() -> None:
    seed_004 = {
        "letter_invalid",
        "stale_head",
        "unknown_block",
        "brain_mismatch",
        "invalid_transition",
        "human_gesture_required",
        "sanitizer_refused",
    }
    for code in Code:
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", code.value) or code.value in seed_004, code


def test_a_refusal_crosses_the_boundary_as_code_status_message() -> None:
    body = Refused(Code.PATH_OUTSIDE_ROOT, "nope", field="path").body()
    assert body.model_dump() == {
        "code": Code.PATH_OUTSIDE_ROOT,
        "status": 403,
        "message": "nope",
        "field": "path",
        "details": None,
    }
    assert Refused(Code.TOOL_DISABLED).message == REFUSALS[Code.TOOL_DISABLED].meaning
