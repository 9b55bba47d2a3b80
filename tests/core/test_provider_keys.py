"""Provider keys: written once, listed by fingerprint, granted per environment, never shown
(issue 31 "Keys"; seed 002 §2). Drives the host the way the page does, over the in-memory
adapters; runs inside Pyodide too.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from core.custody.pairing import PAIRINGS_DOC, OutboundBearer, Pairings
from core.custody.provider_keys import (
    DENIED_NAMES,
    KEYS_DOC,
    keys_for_run,
    load_keys,
)
from core.gestures import HUMAN_UI
from core.refusals import REFUSALS, Code, Refused
from core.secret import REDACTED, Secret
from tests.support import HostHarness, run

VALUE = "sk-ant-CANARY-9f3c1e7a5b2d4c6e8a0b1c2d3e4f5a6b7c8d9e0f"
OTHER = "sk-ant-OTHERKEY-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
PAIRED = "ek_" + "1" * 32
UNPAIRED = "ek_" + "2" * 32


def _harness() -> HostHarness:
    h = HostHarness()
    pairings = Pairings(
        outbound=(OutboundBearer(envKey=PAIRED, bearer=Secret("vbx_" + "b" * 43), recordedAt=1),)
    )
    h.state.docs[PAIRINGS_DOC] = pairings.to_json()
    return h


def _human(h: HostHarness, op: str, **args: Any) -> dict[str, Any]:
    answer, _ = h.call(op, origin=HUMAN_UI, **args)
    return answer


def _fragments(value: str, size: int = 12) -> list[str]:
    return [value[i : i + size] for i in range(len(value) - size + 1)]


def _holds_none(text: str, *values: str) -> bool:
    return not any(f in text for v in values for f in _fragments(v))


def _audit_text(h: HostHarness) -> str:
    return json.dumps(list(h.sink.records.values()))


def test_a_key_value_is_never_in_any_answer_nor_the_audit() -> None:
    h = _harness()
    answers = [
        _human(h, "keys.set", provider="anthropic", variable="ANTHROPIC_API_KEY", value=VALUE),
        _human(h, "keys.list"),
        _human(h, "keys.set", provider="anthropic", variable="ANTHROPIC_API_KEY", value=OTHER),
        _human(
            h,
            "keys.set",
            provider="anthropic",
            variable="ANTHROPIC_API_KEY",
            value=OTHER,
            replace=True,
        ),
        _human(h, "keys.grant", variable="ANTHROPIC_API_KEY", envKey=PAIRED),
        _human(h, "keys.grant", variable="ANTHROPIC_API_KEY", envKey=UNPAIRED),
        _human(h, "keys.set", provider="x", variable="PATH", value=VALUE),
        _human(h, "keys.set", provider="x", variable="OK_NAME", value=VALUE + " \n"),
        _human(h, "keys.set", provider="x", variable="OK_NAME", value=VALUE * 20),
        _human(h, "keys.set", provider="x" * 99, variable="OK_NAME", value=VALUE),
        _human(h, "keys.set", provider="x", variable="OK_NAME", value=VALUE, extra=VALUE),
        _human(h, "keys.revoke_grant", variable="ANTHROPIC_API_KEY", envKey=PAIRED),
        _human(h, "keys.list"),
        h.call("keys.set", provider="x", variable="OK_NAME", value=VALUE)[0],  # no gesture
    ]
    text = json.dumps(answers)
    assert _holds_none(text, VALUE, OTHER), text
    assert [a["ok"] for a in answers] == [True, True, False, True, True, False] + [False] * 5 + [
        True,
        True,
        False,
    ]
    assert _holds_none(_audit_text(h), VALUE, OTHER)
    listed = answers[-2]["result"]["keys"]
    assert listed == [
        {
            "provider": "anthropic",
            "variable": "ANTHROPIC_API_KEY",
            "fingerprint": hashlib.sha256(OTHER.encode()).hexdigest()[:8],
            "set_at": h.clock.ms,
            "replaced_at": h.clock.ms,
            "granted": [],
        }
    ]


def test_the_audit_records_each_change_with_the_fingerprint_only() -> None:
    h = _harness()
    _human(h, "keys.set", provider="openai", variable="OPENAI_API_KEY", value=VALUE)
    _human(h, "keys.set", provider="openai", variable="OPENAI_API_KEY", value=OTHER, replace=True)
    _human(h, "keys.grant", variable="OPENAI_API_KEY", envKey=PAIRED)
    _human(h, "keys.revoke_grant", variable="OPENAI_API_KEY", envKey=PAIRED)
    _human(h, "keys.remove", variable="OPENAI_API_KEY")
    records = [r for r in h.sink.records.values() if str(r.get("op", "")).startswith("keys.")]
    rules = [r.get("rule") for r in records]
    assert rules == ["key-set", "key-replaced", "key-granted", "key-grant-revoked", "key-removed"]
    first = hashlib.sha256(VALUE.encode()).hexdigest()[:8]
    second = hashlib.sha256(OTHER.encode()).hexdigest()[:8]
    fingerprints = [r["details"]["fingerprint"] for r in records]  # type: ignore[index]
    assert fingerprints == [first, second, second, second, second]
    assert _holds_none(json.dumps(records), VALUE, OTHER)


@pytest.mark.parametrize(
    "variable",
    [
        "PATH",
        "HOME",
        "SHELL",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "GIT_SSH_COMMAND",
        "GIT_DIR",
        "NODE_OPTIONS",
        "BASH_ENV",
        "DYLD_INSERT_LIBRARIES",
        "HTTPS_PROXY",
        "VOICEBOX_RUNNER_SECRET",
        "lower_case",
        "A",
        "9LIVES",
        "X" * 65,
        "A-B",
    ],
)
def test_forbidden_variable_names_are_refused_with_their_reason(variable: str) -> None:
    h = _harness()
    answer = _human(h, "keys.set", provider="openai", variable=variable, value=VALUE)
    assert not answer["ok"]
    refusal = answer["refusal"]
    assert refusal["code"] == "args-invalid" and refusal["field"] == "variable"
    if variable in DENIED_NAMES:
        assert DENIED_NAMES[variable] in refusal["message"]
    assert KEYS_DOC not in h.state.docs
    assert _holds_none(json.dumps(answer), VALUE)


def test_a_key_is_held_by_the_redactor_the_moment_it_is_set() -> None:
    h = _harness()
    run(h.ctx.secrets.current(h.ctx.state))  # the redactor before: no key held
    _human(h, "keys.set", provider="mistral", variable="MISTRAL_API_KEY", value=VALUE)
    redactor = run(h.ctx.secrets.current(h.ctx.state))
    assert redactor.redact(f"key={VALUE}.") == f"key={REDACTED}."
    assert VALUE.encode().hex() not in redactor.redact(VALUE.encode().hex())
    _human(h, "keys.remove", variable="MISTRAL_API_KEY")
    assert VALUE in run(h.ctx.secrets.current(h.ctx.state)).redact(VALUE)  # forgotten


def test_a_run_gets_only_keys_granted_to_its_environment() -> None:
    h = _harness()
    _human(h, "keys.set", provider="anthropic", variable="ANTHROPIC_API_KEY", value=VALUE)
    _human(h, "keys.set", provider="openai", variable="OPENAI_API_KEY", value=OTHER)
    with pytest.raises(Refused) as not_yet:
        run(keys_for_run(h.ctx.state, PAIRED, ["ANTHROPIC_API_KEY"]))
    assert not_yet.value.code is Code.KEY_NOT_GRANTED
    assert not_yet.value.field == "ANTHROPIC_API_KEY"
    assert "ANTHROPIC_API_KEY" in not_yet.value.body().message
    assert _holds_none(not_yet.value.body().model_dump_json(), VALUE)

    assert _human(h, "keys.grant", variable="ANTHROPIC_API_KEY", envKey=PAIRED)["ok"]
    given = run(keys_for_run(h.ctx.state, PAIRED, ["ANTHROPIC_API_KEY"]))
    assert list(given) == ["ANTHROPIC_API_KEY"] and given["ANTHROPIC_API_KEY"].reveal() == VALUE
    with pytest.raises(Refused) as other_env:
        run(keys_for_run(h.ctx.state, UNPAIRED, ["ANTHROPIC_API_KEY"]))
    assert other_env.value.code is Code.KEY_NOT_GRANTED
    with pytest.raises(Refused) as ungranted:
        run(keys_for_run(h.ctx.state, PAIRED, ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]))
    assert ungranted.value.field == "OPENAI_API_KEY"
    with pytest.raises(Refused) as unset:
        run(keys_for_run(h.ctx.state, PAIRED, ["GROQ_API_KEY"]))
    assert unset.value.code is Code.KEY_NOT_GRANTED and unset.value.field == "GROQ_API_KEY"

    _human(h, "keys.revoke_grant", variable="ANTHROPIC_API_KEY", envKey=PAIRED)
    with pytest.raises(Refused):
        run(keys_for_run(h.ctx.state, PAIRED, ["ANTHROPIC_API_KEY"]))
    assert REFUSALS[Code.KEY_NOT_GRANTED].status == 403


def test_a_grant_needs_a_paired_environment_and_a_person() -> None:
    h = _harness()
    _human(h, "keys.set", provider="google", variable="GEMINI_API_KEY", value=VALUE)
    unpaired = _human(h, "keys.grant", variable="GEMINI_API_KEY", envKey=UNPAIRED)
    assert unpaired["refusal"]["code"] == "environment-not-paired"
    by_agent, _ = h.call("keys.grant", variable="GEMINI_API_KEY", envKey=PAIRED)
    assert by_agent["refusal"]["code"] == "human_gesture_required"
    assert run(load_keys(h.ctx.state)).keys[0].granted == ()


def test_a_key_set_twice_is_refused_unless_replaced() -> None:
    h = _harness()
    _human(h, "keys.set", provider="openrouter", variable="OPENROUTER_API_KEY", value=VALUE)
    again = _human(h, "keys.set", provider="openrouter", variable="OPENROUTER_API_KEY", value=OTHER)
    assert again["refusal"]["code"] == "already-exists"
    assert run(load_keys(h.ctx.state)).keys[0].value.reveal() == VALUE


def test_keys_at_rest_are_the_only_place_the_value_is_written() -> None:
    """The value is in ``api-keys.json`` (sealed by the browser host's HostState) and in no
    other HOST_DIR document."""
    h = _harness()
    _human(h, "keys.set", provider="xai", variable="XAI_API_KEY", value=VALUE)
    holders = [name for name, data in h.state.docs.items() if VALUE.encode() in data]
    assert holders == [KEYS_DOC]
