"""A field's form is written once, in :mod:`core.vocabulary`, and its description is the
sentence a refusal says of it (issue 35 item 1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.model import Contract
from core.secret import PATTERN_RULES, quiet_error_text
from core.vocabulary import RULES, EnvKey, MissionId, ProjectId, Sha256Hex

CORE = Path(__file__).resolve().parents[2] / "core"
FORMS = {
    "sha256": r"\[0-9a-f\]\{64\}",
    "project id": r"p_\[0-9a-f\]\{16\}",
    "mission id": r"msn_\[0-9a-f\]\{12\}",
    "descriptor id": r"d_\[0-9a-f\]\{24\}",
    "envKey": r"ek_\[0-9a-f\]\{32\}",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_named_field_form_is_written_once_in_core(form: str) -> None:
    places = [
        f"{path.relative_to(CORE).as_posix()}:{n}"
        for path in sorted(CORE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(FORMS[form], line)
    ]
    assert places and all(p.startswith("vocabulary.py:") for p in places), places


class _Named(Contract):
    project: ProjectId
    mission: MissionId
    env: EnvKey
    digest: Sha256Hex


def test_a_named_field_type_refuses_in_the_words_of_its_description() -> None:
    with pytest.raises(ValidationError) as caught:
        _Named(project="p_1", mission="msn_x", env="ek_", digest="A" * 64)
    said = quiet_error_text(caught.value, frozenset(_Named.model_fields), limit=10)
    for name, info in _Named.model_fields.items():
        assert info.description is not None
        assert f"{name} {info.description}" in said
    assert all(PATTERN_RULES[pattern] == rule for pattern, rule in RULES.items())
