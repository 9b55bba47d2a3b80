"""The page's constants come from core (issue 14; SPEC §1: facts the page needs come from
Python): ``page/contract.gen.mjs`` is generated from core's models and constants, the build
writes it, and the page imports it instead of restating any of them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from core.custody.peer_admin import ENV_NAME_PATTERN
from core.host.page_contract import page_contract, render
from core.missions.letters import PHASES
from core.paths import check_project_name
from core.refusals import REFUSALS, Refused
from worker.sitebuild.site import write_page_contract

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "page" / "contract.gen.mjs"
PAGE_MODULES = sorted(p for p in (ROOT / "page").rglob("*.mjs") if p.name != "contract.gen.mjs")
IMPORT = re.compile(r'import\s*\{([^}]*)\}\s*from\s*"(?:\.\./|\./)contract\.gen\.mjs"')


def test_committed_page_contract_is_not_stale() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(), (
        "page/contract.gen.mjs is stale: python -m core.host.page_contract > page/contract.gen.mjs"
    )


def test_the_build_writes_the_page_contract_from_core(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "core", root / "core")
    (root / "page").mkdir()
    (root / "page" / "contract.gen.mjs").write_text("// stale\n", encoding="utf-8")
    written = write_page_contract(root)
    assert written.read_text(encoding="utf-8") == render()


def test_the_contract_carries_the_closed_lists_as_core_has_them() -> None:
    contract = page_contract()
    assert contract["PHASES"] == list(PHASES)
    assert set(contract["PHASE_MEANINGS"]) == set(PHASES) == set(contract["PHASE_ACTIONS"])
    assert set(contract["STAGNANT_PHASES"]) < set(PHASES)
    assert contract["REFUSALS"]["pairing-revoked"] == {
        "status": 403,
        "ws": 1008,
        "meaning": REFUSALS["pairing-revoked"].meaning,
    }
    assert set(contract["REFUSALS"]) == {str(code) for code in REFUSALS}
    assert contract["NAME_PATTERNS"]["environment"]["regex"] == ENV_NAME_PATTERN


@pytest.mark.parametrize("module", PAGE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_restates_no_constant_of_core(module: Path) -> None:
    """No page module spells the gesture token, a phase list, a capability, the environment
    pattern, the tray's agent, or a numeric length limit: each is imported from the contract."""
    text = module.read_text(encoding="utf-8")
    restated = [
        needle
        for needle in (
            '"human-ui"',
            '"operator"',
            '"build-runner"',
            '["judging"',
            "[a-z][a-z0-9",
            "180 * 1024",
        )
        if needle in text
    ]
    restated += re.findall(r'maxlength:\s*"\d+"', text)
    assert restated == []


@pytest.mark.parametrize("module", PAGE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_the_page_imports_from_the_contract_exists(module: Path) -> None:
    exported = set(page_contract())
    for found in IMPORT.finditer(module.read_text(encoding="utf-8")):
        names = {part.split(" as ")[0].strip() for part in found.group(1).split(",")}
        assert names - {""} <= exported, module


def test_the_environment_pattern_means_the_same_in_the_page_and_in_core() -> None:
    """The page's ``pattern`` attribute (compiled with the ``v`` flag) accepts exactly the
    names core's rule accepts."""
    names = ["studio", "a", "a-1", "studio-2", "A", "1a", "-a", "a_b", "a" * 32, "a" * 33, ""]
    html = page_contract()["NAME_PATTERNS"]["environment"]["html"]
    script = (
        f"const re = new RegExp('^(?:' + {json.dumps(html)} + ')$', 'v');"
        f"console.log(JSON.stringify({json.dumps(names)}.map((n) => re.test(n))));"
    )
    done = subprocess.run(
        ["node", "-e", script], capture_output=True, text=True, timeout=30, check=True
    )
    assert json.loads(done.stdout) == [re.fullmatch(ENV_NAME_PATTERN, n) is not None for n in names]


def _node_module(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` as an ES module in Node from the project's root (the page's modules load
    as they do in the browser)."""
    return subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=ROOT,
    )


def test_a_project_name_is_checked_as_typed_by_the_rule_the_host_refuses_by() -> None:
    """Issue 34: a project name with a slash, a backslash or an outer space was refused only
    after the call. The page's own check (``brokenRule`` of page/ui/validate.mjs, from the
    generated contract) says, for every name, exactly the sentence the host's refusal says —
    or nothing where the host admits it."""
    names = [
        "a/b",
        "a\\b",
        "a/b\\c",
        " DEMO",
        "DEMO ",
        "\u00a0nbsp",
        "wide\u3000",
        "in side",
        "Q3 plan: <b>*?</b>",
        "..",
        ".",
        "v1.2",
        "...and more",
        "a\u202eb",
        "x\u2066y",
        "ok",
    ]

    def host_says(name: str) -> str:
        try:
            check_project_name(name)
        except Refused as refused:
            return refused.message
        return ""

    script = (
        "const { brokenRule } = await import('./page/ui/validate.mjs');"
        f"for (const op of ['project.create', 'project.rename'])"
        f" console.log(JSON.stringify({json.dumps(names)}.map((n) => brokenRule(op, 'name', n))));"
    )
    done = _node_module(script)
    expected = [host_says(n) for n in names]
    assert expected[0] and expected[-1] == ""
    assert [json.loads(line) for line in done.stdout.splitlines()] == [expected, expected]


def _keys_set_sentences(field: str, values: list[str]) -> tuple[list[str], list[str]]:
    """For each of ``values`` typed into ``field`` (``variable`` or ``value``) of ``keys.set``:
    the sentence the host refuses it with (its schema, then ``variable_refusal`` or
    ``key_value_refusal``; "" where it admits it), and what the page's ``brokenRule`` says —
    ``(host, page)``, two lists in the order of ``values``."""
    from pydantic import ValidationError

    from core.custody.provider_keys import key_value_refusal, variable_refusal
    from core.host.keys_ops import KeySetArgs
    from core.refusals import Code, invalid_input
    from core.secret import known_names

    def host_says(typed: str) -> str:
        args = {"provider": "openai", "variable": "OPENAI_API_KEY", "value": "sk-" + "a" * 40}
        args[field] = typed
        try:
            parsed = KeySetArgs.model_validate(args)
        except ValidationError as exc:
            return invalid_input(exc, known_names(KeySetArgs), code=Code.ARGS_INVALID).message
        refused = (
            variable_refusal(parsed.variable)
            if field == "variable"
            else key_value_refusal(parsed.value)
        )
        return "" if refused is None else refused.message

    script = (
        "const { brokenRule } = await import('./page/ui/validate.mjs');"
        f"console.log(JSON.stringify({json.dumps(values)}.map((v) =>"
        f" brokenRule('keys.set', {json.dumps(field)}, v))));"
    )
    return [host_says(v) for v in values], json.loads(_node_module(script).stdout)


def test_a_provider_key_is_checked_as_typed_by_the_rules_the_host_refuses_by() -> None:
    """Stop 46's tryout: replacing a key asked "Replace OPENAI_API_KEY?" before the host said
    the new value was too short or held a line break — a confirmation for nothing. The page
    now checks the key as it is typed, from the host's own rules: for each value, ``brokenRule``
    says exactly the sentence ``keys.set`` refuses with (its schema's bound, then
    ``key_value_refusal``), or nothing where the host admits it."""
    values = [
        "short",
        "x" * 15,
        "x" * 16,
        "sk-" + "a" * 40,
        "sk-abc def-1234567890",
        "sk-abc\n" + "d" * 20,
        "\tsk-" + "a" * 20,
        "sk-" + "a" * 20 + "\x7f",
        "sk-" + "a" * 20 + "\u00a0",
        "k" * 512,
        "k" * 513,
        "k" * 5000,
        "ключ-" + "ж" * 20,
    ]

    expected, page_says = _keys_set_sentences("value", values)
    assert expected[0] and expected[2] == "" and expected[-1] == ""
    assert len(set(expected)) == 4  # too short, a space or control, too long, admitted
    assert page_says == expected


def test_a_provider_keys_variable_is_checked_as_typed_by_the_rules_the_host_refuses_by() -> None:
    """Stop 46's leftover: a key set as ``PATH`` or ``LD_PRELOAD`` was refused only after the
    form was sent. The page checks the variable as it is typed: for each name, ``brokenRule``
    says exactly the sentence ``keys.set`` refuses with (``variable_refusal``: its pattern,
    then the denied names, then the prefixes), or nothing where the host admits it."""
    from core.custody.provider_keys import DENIED_NAMES, DENIED_PREFIXES

    variables = [
        *DENIED_NAMES,
        *(f"{prefix}X" for prefix in DENIED_PREFIXES),
        "PYTHONPATH",
        "LD_",
        "PATHS",
        "XPATH",
        "MY_HOME",
        "openai_api_key",
        "A",
        "OPENAI_API_KEY",
        "MY_KEY_2",
    ]

    expected, page_says = _keys_set_sentences("variable", variables)
    said = dict(zip(variables, expected, strict=True))
    assert "as PATH:" in said["PATH"] and "starting with PYTHON" in said["PYTHONPATH"]
    assert said["openai_api_key"] == said["A"] != ""  # VARIABLE_PATTERN's sentence
    assert [said[v] for v in ("LD_", "PATHS", "XPATH", "MY_HOME")] == [said["LD_"], "", "", ""]
    assert said["LD_"] and said["OPENAI_API_KEY"] == said["MY_KEY_2"] == ""
    assert page_says == expected
