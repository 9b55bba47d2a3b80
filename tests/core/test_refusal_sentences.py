"""Humane refusals (issue 17 item 5): a value that breaks an operation's pattern is refused with
the rule in words, written once in core (``core.secret.PATTERN_RULES``) — never the regex, and
never under a validator location like ``args.to``."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from core.host.pipeline import _validate
from core.host.registry import OPERATIONS
from core.refusals import Code, Refused
from core.secret import PATTERN_RULES, known_names, quiet_error_text


def _patterns(schema: Any) -> list[str]:
    """Every ``pattern`` in a JSON Schema, through properties, items, unions and $defs."""
    if isinstance(schema, dict):
        own = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
        return own + [p for value in schema.values() for p in _patterns(value)]
    if isinstance(schema, list):
        return [p for value in schema for p in _patterns(value)]
    return []


ARGUMENT_PATTERNS = sorted(
    {
        (name, pattern)
        for name, op in OPERATIONS.items()
        for pattern in _patterns(op.args.model_json_schema())
    }
)


def test_every_pattern_an_operation_declares_has_its_rule_in_words() -> None:
    assert ARGUMENT_PATTERNS, "no operation declares a pattern"
    missing = sorted({p for _, p in ARGUMENT_PATTERNS if p not in PATTERN_RULES})
    assert missing == []


@pytest.mark.parametrize(
    ("op", "args", "field"),
    [
        ("asset.create", {"project": "p_0123456789abcdef", "path": "logo.jpg"}, "path"),
        ("inbox.read", {"agent_id": "-bad agent"}, "agent_id"),
        (
            "tray.dismiss",
            {"project": "nope", "mission_id": "msn_000000000001", "letter_id": "0" * 64},
            "project",
        ),
    ],
)
def test_a_pattern_refusal_says_the_rule_not_the_regex_nor_args(
    op: str, args: dict[str, Any], field: str
) -> None:
    with pytest.raises(Refused) as caught:
        _validate(OPERATIONS[op], args)
    refusal = caught.value
    assert refusal.code == Code.MESSAGE_MALFORMED
    message = refusal.message
    assert message.startswith(f"{field} must ")
    assert "args." not in message and "required form" not in message
    assert re.search(r"[\^$\[\]{}]|\\\.", message) is None, message


# ---- the whole refusal list and every argument model (issue 17 item 5) --------------------

VALIDATOR_TEXT = re.compile(
    r"args\.|Input should|String should|List should|Value error|validation error|Field required"
    r"|\[type=|\(field\)|[\^$\[\]{}]|\\[.dws]|\bstr\b|\bint\b|\bdict\b|model_type"
)
"""What a person must never read in a refusal: a validator location, pydantic's own text, a
regex or a Python type name."""

VAGUE = ("is not acceptable", "has the wrong kind of value", "does not have the required form")
"""The fallbacks of ``core.secret`` — reached only by an error type or pattern with no words."""


def _humane(message: str, *, specific: bool = True) -> None:
    assert VALIDATOR_TEXT.search(message) is None, message
    assert not (specific and any(v in message for v in VAGUE)), message
    assert message.endswith((".", ")")) and "\n" not in message, message
    assert re.search(r"\.\s+[A-Z]", message.rstrip(".")) is None, f"more than one: {message}"


@pytest.mark.parametrize("code", list(Code))
def test_every_refusal_code_means_one_plain_sentence(code: Code) -> None:
    from core.refusals import REFUSALS

    _humane(REFUSALS[code].meaning, specific=False)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A property's own schema: ``$ref`` followed, an optional's ``null`` branch dropped."""
    if "$ref" in schema:
        return _resolve(root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], root)
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:
        return _resolve(branches[0], root)
    return schema


def _bad_values(prop: dict[str, Any]) -> list[Any]:
    """Values that break one rule of a property each: its type, length, pattern, enum, range."""
    kind = prop.get("type")
    out: list[Any] = [{"nested": [1]}] if kind != "object" else ["text"]
    if kind in ("integer", "number", "boolean", "array"):
        out.append("text")
    if kind in ("string", None) and "const" not in prop:
        out.append(12345)
    if "maxLength" in prop:
        out.append("a" * (prop["maxLength"] + 1))
    if prop.get("minLength", 0) > 0:
        out.append("")
    if "pattern" in prop:
        out.append("☃ not this")
    if "enum" in prop or "const" in prop:
        out.append("zz-none-of-these")
    if "minimum" in prop:
        out.append(prop["minimum"] - 1)
    if "maximum" in prop:
        out.append(prop["maximum"] + 1)
    if "exclusiveMinimum" in prop:
        out.append(prop["exclusiveMinimum"])
    if "maxItems" in prop:
        out.append([None] * (prop["maxItems"] + 1))
    return out


def _argument_cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for name, op in sorted(OPERATIONS.items()):
        schema = op.args.model_json_schema()
        props = schema.get("properties", {})
        cases.append((name, {"zz_unknown": 1}))
        cases.append((name, {"projcet": "p_0123456789abcdef"}))
        for field, raw in props.items():
            prop = _resolve(raw, schema)
            for value in _bad_values(prop):
                cases.append((name, {field: value}))
            if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
                item = _resolve(prop["items"], schema)
                for value in _bad_values(item)[:3]:
                    cases.append((name, {field: [value]}))
    return cases


ARGUMENT_CASES = _argument_cases()


def test_the_walk_reaches_every_operation() -> None:
    assert {name for name, _ in ARGUMENT_CASES} == set(OPERATIONS)


@pytest.mark.parametrize(("op", "args"), ARGUMENT_CASES, ids=lambda v: str(v)[:60])
def test_every_refusal_an_argument_model_can_give_is_one_plain_sentence(
    op: str, args: dict[str, Any]
) -> None:
    try:
        _validate(OPERATIONS[op], args)
    except Refused as refusal:
        _humane(refusal.message)
    # an operation whose arguments are all optional may take this; nothing to say then


def test_an_unknown_field_is_said_in_words_and_a_near_miss_is_named_by_our_own_name() -> None:
    with pytest.raises(Refused) as caught:
        _validate(OPERATIONS["file.read"], {"projcet": "p_0123456789abcdef", "path": "a"})
    message = caught.value.message
    assert "projcet" not in message
    assert "(did you mean 'project'?)" in message
    assert "project is required" in message


def test_every_message_core_writes_for_a_refusal_is_plain() -> None:
    """Every literal sentence given to ``Refused(...)`` in core/, f-strings' fixed parts too."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "core"
    seen = 0
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Refused"):
                continue
            if len(node.args) < 2:
                continue
            text = node.args[1]
            if isinstance(text, ast.Constant) and isinstance(text.value, str):
                parts = [text.value]
            elif isinstance(text, ast.JoinedStr):
                parts = [v.value for v in text.values if isinstance(v, ast.Constant)]
            else:
                continue
            seen += 1
            joined = "…".join(parts)
            assert "args." not in joined and "Input should" not in joined, (path, joined)
            assert re.search(r"\[\^|\\[.dws]|\{\d*,\d*\}", joined) is None, (path, joined)
    assert seen > 50


def _breaking(rules: dict[str, Any], rule: str) -> Any:
    """A value that breaks exactly ``rule`` of a form field's rules."""
    if rule == "type":
        return 12345 if rules["type"] == "string" else "text"
    if rule == "maxLength":
        return "a" * (rules["maxLength"] + 1)
    if rule == "minLength":
        return ""
    if rule == "pattern":
        return "☃ not this"
    if rule == "maximum":
        return rules["maximum"] + 1
    if rule == "minimum":
        return rules["minimum"] - 1
    return "zz-none-of-these"


def test_a_form_shows_as_you_type_the_very_sentence_the_host_refuses_with() -> None:
    from core.host.page_contract import FORM_OPERATIONS, form_rules

    checked = 0
    for op in FORM_OPERATIONS:
        for field, rules in form_rules(op).items():
            for rule, sentence in rules["says"].items():
                args = {} if rule == "required" else {field: _breaking(rules, rule)}
                if rule == "required":  # every missing field is said; see them all
                    model = OPERATIONS[op].args
                    with pytest.raises(ValidationError) as every:
                        model.model_validate(args)
                    said = quiet_error_text(every.value, known_names(model), limit=99)
                else:
                    with pytest.raises(Refused) as caught:
                        _validate(OPERATIONS[op], args)
                    said = caught.value.message
                assert sentence.rstrip(".") in said or sentence.rstrip(".") in said.replace(
                    said[:1], said[:1].lower(), 1
                ), (op, field, rule, said)
                checked += 1
    assert checked > 30


def test_a_refused_field_is_named_by_the_label_the_person_saw_never_its_key() -> None:
    # issue 34: compose said "to must be …" — the sentence now starts with the form's label
    args = {
        "project": "p_" + "0" * 16,
        "block_id": "sb_" + "0" * 16,
        "to": "no spaces allowed",
        "runner_id": "Not A Runner",
    }
    with pytest.raises(Refused) as caught:
        _validate(OPERATIONS["compose.packet"], args)
    said = caught.value.message
    assert said.startswith("Agent id must be"), said
    assert "Runner id must be" in said and not re.search(r"\bto must\b|runner_id", said), said
    # the root: every operation field with a title is said by it, in the sentence and the form
    from core.host.page_contract import form_rules

    titled = 0
    for name, op in OPERATIONS.items():
        for field, info in op.args.model_fields.items():
            if not info.title or info.annotation is not str:
                continue
            rules = form_rules(name).get(info.alias or field)
            if rules is None:
                continue
            titled += 1
            for sentence in rules["says"].values():
                assert sentence.startswith(info.title), (name, field, sentence)
    assert titled >= 2
