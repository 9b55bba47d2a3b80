"""A project's requirements and the runtime's offline set (issue 32;
core/tools/python_requirements.py): what the set covers loads, dependencies first; what it does
not is listed saying network installs are off and why; a malformed file is named and never
raises. Runs in CPython and in Pyodide (the host's Python has no ``packaging``)."""

from __future__ import annotations

import random

import pytest

from core.refusals import Refused
from core.tools.python_requirements import (
    OfflinePackage,
    parse_offline_set,
    parse_pyproject,
    parse_requirements_txt,
    plan_loads,
    version_admitted,
)

OFFLINE = {
    "python-dateutil": OfflinePackage(
        "python-dateutil", "2.9.0.post0", "python_dateutil-2.9.0.post0-py3-none-any.whl", ("six",)
    ),
    "six": OfflinePackage("six", "1.17.0", "six-1.17.0-py3-none-any.whl"),
    "tabulate": OfflinePackage("tabulate", "0.9.0", "tabulate-0.9.0-py3-none-any.whl"),
    "more-itertools": OfflinePackage(
        "more-itertools", "11.2.1", "more_itertools-11.2.1-py3-none-any.whl"
    ),
}


def test_a_requirement_the_offline_set_covers_loads_with_its_dependencies_first() -> None:
    text = "# data tools\nPython_Dateutil >= 2.8  # dates\nmore.itertools\\\n  ~=11.0\nsix\n"
    plan = plan_loads({"requirements.txt": text.encode()}, OFFLINE)
    assert plan.load == (
        "six-1.17.0-py3-none-any.whl",
        "python_dateutil-2.9.0.post0-py3-none-any.whl",
        "more_itertools-11.2.1-py3-none-any.whl",
    )
    assert plan.covered == ("six 1.17.0", "python-dateutil 2.9.0.post0", "more-itertools 11.2.1")
    assert plan.messages == ()


def test_names_the_offline_set_does_not_cover_are_listed_saying_network_installs_are_off() -> None:
    text = "tabulate\nrequests>=2\n-r dev.txt\n--index-url https://pypi.org/simple\n"
    text += "git+https://example.com/x.git\nmine @ https://example.com/mine.whl\n"
    plan = plan_loads({"requirements.txt": text.encode()}, OFFLINE)
    assert plan.load == ("tabulate-0.9.0-py3-none-any.whl",)
    (said,) = plan.messages
    assert "requirements.txt:2: 'requests' is not in the offline set" in said
    assert "'-r' is not followed" in said and "'--index-url' is not followed" in said
    assert "is a URL or a path" in said and "'mine' names a URL" in said
    assert "no network (connect-src 'none'" in said and "network installs are off" in said
    assert "more-itertools, python-dateutil, six, tabulate" in said  # what the set holds


def test_a_version_the_specifier_refuses_is_not_loaded_and_is_said() -> None:
    plan = plan_loads({"requirements.txt": b"tabulate<0.9\nsix==1.*\n"}, OFFLINE)
    assert plan.load == ("six-1.17.0-py3-none-any.whl",)
    assert "has tabulate 0.9.0, which does not meet '<0.9'" in plan.messages[0]


def test_pyproject_dependencies_are_read_and_optional_ones_are_not() -> None:
    toml = b'[project]\nname = "x"\ndependencies = ["tabulate>=0.8", "six"]\n'
    toml += b'[project.optional-dependencies]\ndev = ["pytest"]\n'
    plan = plan_loads({"pyproject.toml": toml}, OFFLINE)
    assert set(plan.load) == {"tabulate-0.9.0-py3-none-any.whl", "six-1.17.0-py3-none-any.whl"}
    assert plan.messages == ()
    reqs, problems = parse_pyproject('[tool.poetry]\nname = "x"\n')
    assert reqs == [] and problems == []


def test_a_malformed_requirements_file_or_pyproject_is_named_and_never_raises() -> None:
    plan = plan_loads(
        {
            "pyproject.toml": b"[project\ndependencies = [",
            "requirements.txt": b"tabulate >>= 1\n!!!\n",
        },
        OFFLINE,
    )
    said = "\n".join(plan.messages)
    assert "pyproject.toml is not valid TOML" in said
    assert "requirements.txt:1: '>>= 1'" in said and "requirements.txt:2: '!!!'" in said
    assert plan.load == ()
    bad = plan_loads({"pyproject.toml": b"[project]\ndependencies = 3\n"}, OFFLINE)
    assert "is not a list of strings" in bad.messages[0]
    assert "not UTF-8" in plan_loads({"requirements.txt": b"\xff\xfe"}, OFFLINE).messages[0]
    big = plan_loads({"requirements.txt": b"six\n" * 100_000}, OFFLINE)
    assert "over 256 KiB" in big.messages[0]

    rng = random.Random(32)
    alphabet = "ab=<>~!,.*;@[]()#\\-\n \"'[]{}0123456789"
    for _ in range(300):
        junk = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        for name in ("requirements.txt", "pyproject.toml"):
            plan_loads({name: junk.encode()}, OFFLINE)  # never raises
    # a project without either file loads nothing and says nothing
    assert plan_loads({"hello.py": b"print(1)"}, OFFLINE).load == ()


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("2.9.0.post0", ">=2.8", True),
        ("2.9.0.post0", "==2.9.0", True),
        ("0.9.0", "~=0.9", True),
        ("0.9.0", "~=0.8.1", False),
        ("1.17.0", "==1.*", True),
        ("1.17.0", "!=1.17.*", False),
        ("26.1.0", "<26", False),
        ("26.1.0", ">=20, <27", True),
        ("26.1.0", "===26.1.0", True),
        ("11.2.1", "> 11.2", True),
        ("11.2.1", "==11.2.1rc1", True),  # release numbers only: said in the docs
        ("abc", ">=1", None),
    ],
)
def test_version_specifiers_compare_release_numbers(
    version: str, spec: str, expected: bool | None
) -> None:
    assert version_admitted(version, spec) is expected


def test_requirements_lines_keep_their_line_numbers_across_continuations() -> None:
    reqs, problems = parse_requirements_txt("a\\\n>=1\n\nb ; python_version < '3'\nc[x]==2\n")
    assert [(r.name, r.specifier, r.where) for r in reqs] == [
        ("a", ">=1", "requirements.txt:1"),
        ("b", "", "requirements.txt:4"),
        ("c", "==2", "requirements.txt:5"),
    ]
    assert problems == []


def test_the_offline_set_index_is_read_exactly_or_refused() -> None:
    got = parse_offline_set(
        '{"schema": "voicebox-offline-set-v1", "packages": [{"name": "Six", "version": "1", '
        '"file": "six-1-py3-none-any.whl", "depends": []}]}'
    )
    assert got == {"six": OfflinePackage("six", "1", "six-1-py3-none-any.whl")}
    for broken in (
        '{"schema": "x"}',
        "[]",
        '{"schema": "voicebox-offline-set-v1", "packages": [{"name": 1}]}',
        "{",
    ):
        with pytest.raises(Refused) as refused:
            parse_offline_set(broken)
        assert refused.value.code.value == "sandbox-unavailable"


def test_a_file_not_read_is_said_once_not_twice() -> None:
    """The sentence a person reads names the file and why, with one "Not read" (issue 32)."""
    for data in (b"six\n" * 100_000, b"\xff\xfe"):
        said = plan_loads({"requirements.txt": data}, OFFLINE).messages[0]
        assert said.startswith("Not read: requirements.txt is ") and said.count("not read") == 0, (
            said
        )
