"""Every regular expression that sees untrusted text runs in time linear in its length
(issue 13 #4: one in-bounds message hung the host for ~100 s on a quadratic pattern).

The proof is structural (:mod:`tests.core.linear_patterns`): each pattern Python's ``re`` runs
is in the linear class (every quantifier bounded, repeating one character test; no
back-reference), with a bounded backtracking tree; each pattern pydantic runs is compiled by
pydantic-core's finite-automaton engine. Then every pattern is run on adversarial texts of the
largest message the host accepts — what it answers is checked, the speed is a benchmark
(``bench/pattern_bench.py``), never a timed assertion.
"""

from __future__ import annotations

import re
from typing import Annotated

import pytest
from pydantic import Field, TypeAdapter, ValidationError
from pydantic_core import SchemaError

from core.protocol import MAX_MESSAGE_BYTES
from tests.core.linear_patterns import (
    NotLinear,
    adversarial_texts,
    find_patterns,
    re_cost,
)

STEPS_PER_START = 1 << 18
"""The most character tests one match attempt of any of our patterns may cost (its
backtracking tree's leaves × the characters a path reads): search over the 1 MiB message
bound then costs at most 2^38 tests in the very worst tree — a bound; real cost is far less."""

FOUND, UNRESOLVED = find_patterns()
RE_PATTERNS = sorted({(f.pattern, f.flags) for f in FOUND if f.engine == "re"})
PYDANTIC_PATTERNS = sorted({f.pattern for f in FOUND if f.engine == "pydantic"})


def test_every_pattern_in_core_and_browser_host_is_found_and_resolved() -> None:
    assert UNRESOLVED == []
    assert len(RE_PATTERNS) >= 8 and len(PYDANTIC_PATTERNS) >= 20
    modules = {f.where.split(":")[0] for f in FOUND if f.engine == "re"}
    assert {
        "core.missions.sanitizer",
        "core.missions.letters",
        "core.missions.mailbox",
        "core.custody.bearer",
    } <= modules


def test_the_scan_catches_each_way_of_writing_a_pattern(tmp_path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "consts.py").write_text('SHARED = r"^[a-z]{1,8}$"\n')
    (pkg / "uses.py").write_text(
        "import re\n"
        "from pydantic import Field\n"
        "from pkg.consts import SHARED\n"
        'LOCAL = r"x+"\n'
        'A = re.compile(r"a{2}", re.I | re.M)\n'
        "def f(t):\n"
        "    re.fullmatch(LOCAL, t)\n"
        '    re.sub("b", "c", t, 0, re.S)\n'
        "    return Field(pattern=SHARED)\n"
        "def g(t, p):\n"
        "    return re.search(p, t)\n"
        "def h(t):\n"
        '    return re.search(f"{t}", t)\n'
    )
    (pkg / "sneaky.py").write_text(
        "from re import compile\nimport re as r\nfrom pydantic import ConfigDict\n"
        'C = ConfigDict(regex_engine="python-re")\n'
    )
    found, unresolved = find_patterns(tmp_path, ("pkg",))
    got = {(f.pattern, f.flags, f.engine) for f in found}
    assert got == {
        ("a{2}", re.I | re.M, "re"),
        ("x+", 0, "re"),
        ("b", re.S, "re"),
        (r"^[a-z]{1,8}$", 0, "pydantic"),
    }
    reasons = sorted(u.why.split(":")[0] for u in unresolved)
    assert reasons == [
        "a model sets regex_engine",
        "names imported from re",
        "re imported under another name",
        "re.search",
        "re.search",
    ]


@pytest.mark.parametrize(("pattern", "flags"), RE_PATTERNS)
def test_every_re_pattern_is_in_the_linear_class(pattern: str, flags: int) -> None:
    cost = re_cost(pattern, flags)
    assert cost.steps <= STEPS_PER_START, (pattern, cost)


@pytest.mark.parametrize(
    "pattern",
    [
        r"[A-Za-z][A-Za-z0-9+.-]*://",  # the runner-seat URL pattern before issue 13
        r"[0-9a-f]{32,}",
        r"(a+)+b",
        r"(?:ab){0,8}",
        r"(\w)\1",
        r"(a)?(?(1)b|c)",
        r"x|~[\w.-]*[/\\]",
    ],
)
def test_the_class_check_refuses_each_backtracking_shape(pattern: str) -> None:
    with pytest.raises(NotLinear):
        re_cost(pattern)


def test_the_cost_of_a_bounded_pattern_is_its_tree() -> None:
    assert (re_cost(r"^[0-9a-f]{64}$").leaves, re_cost(r"^[0-9a-f]{64}$").width) == (1, 64)
    assert re_cost(r"(\d{1,9})\.(\d{1,9})").leaves == 81
    assert re_cost(r"a{0,3}+b").leaves == 1  # possessive: no way back
    assert re_cost(r"(?:x|y{0,4})z(?=\S)").leaves == 6


def test_pydantic_runs_patterns_on_an_engine_that_cannot_backtrack() -> None:
    # a backtracking engine would take a lookahead; pydantic-core's automaton refuses it, so
    # no pattern of ours can fall back to one (and the scan refuses regex_engine overrides)
    with pytest.raises(SchemaError, match="look-around"):
        TypeAdapter(Annotated[str, Field(pattern=r"^(?=a)a$")])


@pytest.mark.parametrize(("pattern", "flags"), RE_PATTERNS)
def test_every_re_pattern_answers_adversarial_text_of_the_largest_message(
    pattern: str, flags: int
) -> None:
    compiled = re.compile(pattern, flags)
    cost = re_cost(pattern, flags)
    for text in adversarial_texts(pattern, flags, MAX_MESSAGE_BYTES):
        assert len(text) == MAX_MESSAGE_BYTES
        found = compiled.search(text)
        # a match is never longer than the tree's widest path, and fullmatch of a bounded
        # pattern can only accept a text that short
        assert found is None or len(found.group()) <= cost.width
        if cost.width < MAX_MESSAGE_BYTES:
            assert compiled.fullmatch(text) is None


@pytest.mark.parametrize("pattern", PYDANTIC_PATTERNS)
def test_every_pydantic_pattern_answers_adversarial_text_of_the_largest_message(
    pattern: str,
) -> None:
    adapter = TypeAdapter(Annotated[str, Field(pattern=pattern)])
    for text in adversarial_texts(pattern, 0, MAX_MESSAGE_BYTES):
        try:
            accepted = adapter.validate_python(text) == text
        except ValidationError:
            accepted = False
        # pydantic searches for the pattern, as re.search does, and both engines agree
        assert accepted == (re.search(pattern, text) is not None), pattern
