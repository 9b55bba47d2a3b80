"""The coding-agent harness in core (issue 31 "Harness"; this file runs in Pyodide too): a runner
may pin several agent templates, each with its own keys; what a probe may say of one (a name,
never a path); the person's choice and the keys a spawn asks for (exactly the active
template's)."""

from __future__ import annotations

import pytest

from core.memory.adapters import MemoryHostState
from core.missions.harness import (
    HARNESS_DOC,
    HarnessSettings,
    TemplateProbe,
    TemplateView,
    harness_keys,
    load_harness,
    pin_probes,
    probe_words,
    save_harness,
)
from core.missions.remote_runs import RunnerLive
from core.missions.runner_pins import PinsInvalid, parse_pins
from core.refusals import Code, Refused
from tests.support import run

P = "p_0123456789abcdef"
HEAD = f"""[[runner]]
runner_id = "build-1"
capability = "build-runner"
projects = ["{P}"]
gate_command = ["pytest", "-q"]
env = ["LANG_HINT"]
"""
TWO = (
    HEAD
    + """
[[runner.template]]
label = "vendor-a"
command = ["agent-a", "--packet", "{packet_file}"]
keys = ["ANTHROPIC_API_KEY"]

[[runner.template]]
label = "vendor-b"
command = ["/opt/b/bin/agent-b", "{packet_file}"]
keys = ["OPENAI_API_KEY", "OPENROUTER_API_KEY"]
"""
)
ENV = "ek_" + "0" * 32


def _refused(text: str) -> PinsInvalid:
    with pytest.raises(PinsInvalid) as caught:
        parse_pins(text)
    return caught.value


def test_a_runner_may_pin_several_templates_each_with_its_own_keys() -> None:
    pin = parse_pins(TWO).get("build-1")
    assert pin is not None
    assert [t.label for t in pin.templates()] == ["vendor-a", "vendor-b"]
    assert pin.template_named("vendor-b").keys == ["OPENAI_API_KEY", "OPENROUTER_API_KEY"]  # type: ignore[union-attr]
    assert pin.template_named(None).label == "vendor-a"  # type: ignore[union-attr]
    assert pin.template_named("vendor-c") is None


def test_a_plain_command_still_pins_one_template_labelled_default() -> None:
    text = HEAD + 'command = ["agent", "{packet_file}"]\nkeys = ["MISTRAL_API_KEY"]\n'
    (only,) = parse_pins(text).runner[0].templates()
    assert only.label == "default" and only.command == ["agent", "{packet_file}"]
    assert only.keys == ["MISTRAL_API_KEY"]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (HEAD, 1, "command (or one [[runner.template]] or more) is required"),
        (TWO.replace('"vendor-b"', '"vendor-a"'), 8, "label is used twice"),
        (TWO + 'command = ["x"]\n', 0, ""),  # a key after a template table belongs to it
        (HEAD.replace("env =", 'command = ["x"]\nenv =') + TWO[len(HEAD) :], 1, "never both"),
        (HEAD + 'keys = ["XAI_API_KEY"]\n' + TWO[len(HEAD) :], 1, "keys belong to each template"),
        (TWO.replace('"OPENAI_API_KEY", ', '"LD_PRELOAD", '), 16, "LD_"),
        (TWO.replace('"OPENAI_API_KEY"', '"LANG_HINT"'), 8, "in env too"),
        (TWO.replace('label = "vendor-a"', 'label = "Vendor A"'), 9, "label"),
        (TWO.replace('"--packet", ', '"{home}", '), 10, "{home} is not a placeholder"),
    ],
)
def test_a_template_that_does_not_hold_is_refused_naming_its_line(
    text: str, line: int, words: str
) -> None:
    bad = _refused(text)
    if line:
        assert bad.line == line, bad
    assert words in bad.reason, bad


def test_a_probe_shows_the_executables_name_and_version_line_never_a_path() -> None:
    said = probe_words(b"\n\x1b[1magent-b\x1b[0m 2.0 (/home/ops/.local/lib/agent-b/cli.js)\nmore\n")
    assert said == "[1magent-b[0m 2.0 (cli.js)"
    assert probe_words(b"") is None and probe_words(b"\n  \n") is None
    assert len(probe_words(b"v" * 10_000) or "") == 120
    probe = TemplateProbe.of("vendor-b", "/opt/b/bin/agent-b", found=False, reason="missing")
    assert probe.executable == "agent-b"
    assert probe.said == "not on the agent's PATH, or hidden from it"
    with pytest.raises(ValueError, match="executable"):
        TemplateProbe(label="vendor-b", executable="/opt/b/bin/agent-b", found=True)


def test_the_server_lists_a_probe_by_its_pins_labels_and_executable_never_the_runners_word() -> (
    None
):
    pin = parse_pins(TWO).runner[0]
    reported = [
        TemplateProbe(label="vendor-b", executable="liar", found=True, version="/srv/x/b 2.0"),
        TemplateProbe(label="vendor-z", executable="extra", found=True, version="9"),
    ]
    rows = pin_probes(pin, reported)
    assert [r["label"] for r in rows] == ["vendor-a", "vendor-b"]  # the pin's, in its order
    assert rows[0]["found"] is None and rows[0]["said"] == "not probed yet"
    assert rows[1]["executable"] == "agent-b" and rows[1]["version"] == "b 2.0"
    assert rows[1]["keys"] == ["OPENAI_API_KEY", "OPENROUTER_API_KEY"]
    assert "extra" not in str(rows) and "/srv" not in str(rows)
    # and the browser host cuts them again, whatever a server sends
    shown = TemplateView.model_validate(
        {"label": "vendor-b", "executable": "b", "version": "b 2 (/home/x/.b/cli)", "extra": 1}
    )
    assert shown.version == "b 2 (cli)"


def _runner(rid: str, labels: dict[str, list[str]], live: bool = True) -> RunnerLive:
    templates = [TemplateView(label=k, executable="x", keys=v) for k, v in labels.items()]
    first = next(iter(labels.values()), [])
    return RunnerLive(
        runner_id=rid, capability="build-runner", live=live, busy=0, keys=first, templates=templates
    )


def test_a_spawn_asks_for_exactly_the_active_templates_keys() -> None:
    one = _runner("build-1", {"vendor-a": ["ANTHROPIC_API_KEY"], "vendor-b": ["OPENAI_API_KEY"]})
    assert harness_keys([one], "build-runner", None, None) == ("ANTHROPIC_API_KEY",)
    assert harness_keys([one], "build-runner", None, "vendor-b") == ("OPENAI_API_KEY",)
    assert harness_keys([one], "build-runner", "build-1", "vendor-a") == ("ANTHROPIC_API_KEY",)
    with pytest.raises(Refused) as caught:
        harness_keys([one], "build-runner", None, "vendor-c")
    assert caught.value.code == Code.PERMISSION_DENIED and caught.value.field == "template"
    assert "Settings → Harness" in caught.value.body().message
    other = _runner("build-2", {"vendor-b": ["OPENROUTER_API_KEY"]})
    with pytest.raises(Refused) as caught:
        harness_keys([one, other], "build-runner", None, "vendor-b")
    assert caught.value.code == Code.ARGS_INVALID and caught.value.field == "runner_id"
    assert harness_keys([one, other], "build-runner", "build-2", "vendor-b") == (
        "OPENROUTER_API_KEY",
    )


def test_the_harness_choice_is_kept_per_environment_and_capability_in_host_dir() -> None:
    async def main() -> None:
        state = MemoryHostState()
        assert (await load_harness(state)).active(ENV, "build-runner") is None
        made = HarnessSettings().choose(ENV, "build-runner", "vendor-b", 5)
        await save_harness(state, made)
        assert list(state.docs) == [HARNESS_DOC]
        again = await load_harness(state)
        assert again.active(ENV, "build-runner") == "vendor-b"
        assert again.active(ENV, "naming-runner") is None
        assert again.choose(ENV, "build-runner", None, 6).active(ENV, "build-runner") is None
        state.docs[HARNESS_DOC] = b"{not json"
        with pytest.raises(Refused) as caught:
            await load_harness(state)
        assert caught.value.code == Code.STORAGE_FAILED

    run(main())
