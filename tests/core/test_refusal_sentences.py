"""Humane refusals (issue 17 item 5): a value that breaks an operation's pattern is refused with
the rule in words, written once in core (``core.secret.PATTERN_RULES``) — never the regex, and
never under a validator location like ``args.to``."""

from __future__ import annotations

import re
from typing import Any

import pytest

from core.host.pipeline import _validate
from core.host.registry import OPERATIONS
from core.refusals import Code, Refused
from core.secret import PATTERN_RULES


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
