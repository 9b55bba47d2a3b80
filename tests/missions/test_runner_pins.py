"""``runners.toml`` (core; this file runs in Pyodide too): a closed file, refused with the
line and the reason (issue 30, pins; seed 004 §5a), and what a pinned runner may post."""

from __future__ import annotations

import pytest

from core.missions.runner_pins import (
    PinsInvalid,
    check_runner_letter,
    expand_argv,
    parse_pins,
)
from core.refusals import Code, Refused

P = "p_0123456789abcdef"
GOOD = f"""# pins
[[runner]]
runner_id = "build-1"
capability = "build-runner"
projects = ["{P}"]
command = ["agent", "--packet", "{{packet_file}}", "--in={{worktree}}", "{{mission_id}}"]
gate_command = ["pytest", "-q"]
env = ["MODEL_KEY"]
"""


def _refused(text: str) -> PinsInvalid:
    with pytest.raises(PinsInvalid) as caught:
        parse_pins(text)
    return caught.value


def test_a_well_formed_pin_file_parses_with_its_defaults() -> None:
    pins = parse_pins(GOOD)
    pin = pins.get("build-1")
    assert pin is not None and pin.capability == "build-runner"
    assert pin.max_parallel == 1 and pin.network is False
    assert pin.projects == [P] and pin.env == ["MODEL_KEY"]
    assert pins.get("other") is None


def test_a_capability_other_than_build_or_naming_is_refused_at_load_naming_its_line() -> None:
    bad = _refused(GOOD.replace('"build-runner"', '"review-runner"'))
    assert bad.line == 4
    assert "build-runner or naming-runner" in bad.reason
    assert str(bad).startswith("runners.toml, line 4:")


def test_a_shell_string_command_is_refused_naming_its_line() -> None:
    text = GOOD.replace('gate_command = ["pytest", "-q"]', 'gate_command = "pytest -q && rm -rf ."')
    bad = _refused(text)
    assert bad.line == 7 and "argv list" in bad.reason


def test_an_unknown_placeholder_is_refused() -> None:
    bad = _refused(GOOD.replace("{mission_id}", "{home}"))
    assert bad.line == 6 and "{home} is not a placeholder" in bad.reason


def test_a_toml_syntax_error_names_its_line() -> None:
    bad = _refused(GOOD + "max_parallel = = 2\n")
    assert bad.line == 9 and bad.reason == "not valid TOML"


def test_an_unknown_key_and_a_second_pin_of_one_id_are_refused() -> None:
    bad = _refused(GOOD + 'shell = "bash"\n')
    assert bad.line == 9 and "shell is not a field" in bad.reason
    twice = _refused(GOOD + "\n" + GOOD.replace("# pins\n", ""))
    assert twice.line == 10 and "pinned twice" in twice.reason
    assert _refused("[other]\nx = 1\n").line == 0


def test_a_pin_may_not_pass_path_or_home_through() -> None:
    bad = _refused(GOOD.replace('env = ["MODEL_KEY"]', 'env = ["PATH"]'))
    assert bad.line == 8 and "PATH" in bad.reason


def test_placeholders_fill_argv_elements_and_never_split_them() -> None:
    pin = parse_pins(GOOD).runner[0]
    argv = expand_argv(
        pin.command, packet_file="a b;c", worktree="w t", mission_id="msn_0123456789ab"
    )
    assert argv == ["agent", "--packet", "a b;c", "--in=w t", "msn_0123456789ab"]


def _letter(**over: object) -> dict:
    body = {
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": "executing",
        "synthetic": False,
    }
    body.update(over)
    return body


@pytest.mark.parametrize(
    "over",
    [
        {"phase": "landed"},
        {"phase": "archived"},
        {"phase": "judging"},
        {"seat": "oracle"},
        {"runner_id": "build-2"},
        {"capability": "naming-runner"},
        {"synthetic": True},
        {"receipt": {"imported": True, "store_version": 3}},
        {"verdict": {"decision": "APPROVE", "gist": "fine"}},
    ],
)
def test_a_runner_posts_only_its_own_run_letters(over: dict) -> None:
    pin = parse_pins(GOOD).runner[0]
    with pytest.raises(Refused) as caught:
        check_runner_letter(pin, P, _letter(**over))
    assert caught.value.code == Code.PERMISSION_DENIED


def test_a_runner_posts_only_in_the_projects_of_its_allowlist() -> None:
    pin = parse_pins(GOOD).runner[0]
    check_runner_letter(pin, P, _letter())
    check_runner_letter(
        pin, P, _letter(phase="failed", verdict={"decision": "REJECT", "gist": "x"})
    )
    with pytest.raises(Refused):
        check_runner_letter(pin, "p_ffffffffffffffff", _letter())


def test_a_pins_harness_keys_are_variable_names_core_allows_refused_naming_their_line() -> None:
    pin = parse_pins(GOOD + 'keys = ["ANTHROPIC_API_KEY"]\n').get("build-1")
    assert pin is not None and pin.keys == ["ANTHROPIC_API_KEY"]
    assert parse_pins(GOOD).get("build-1").keys == []  # type: ignore[union-attr]
    bad = _refused(GOOD + 'keys = ["LD_PRELOAD"]\n')
    assert bad.line == 9 and "LD_" in bad.reason
    bad = _refused(GOOD + 'keys = ["GIT_DIR"]\n')
    assert bad.line == 9 and "GIT_" in bad.reason
    bad = _refused(GOOD + 'keys = ["lower_case"]\n')
    assert bad.line == 9 and bad.reason.startswith("keys:")
    bad = _refused(GOOD + 'keys = ["OPENAI_API_KEY", "OPENAI_API_KEY"]\n')
    assert bad.line == 9 and "twice" in bad.reason
    bad = _refused(GOOD + 'keys = ["MODEL_KEY"]\n')  # GOOD passes it through env
    assert bad.line == 9 and "in env too" in bad.reason
