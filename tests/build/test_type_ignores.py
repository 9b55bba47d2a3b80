"""mypy strict holds on the shipped Python with no blanket escape (issue 35): no
``ignore_errors`` in the configuration, and every ``# type: ignore`` in ``core/``,
``browser_host/`` and ``server_host/`` names its error codes and says why on its line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("core", "browser_host", "server_host")
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
WITH_CODE_AND_REASON = re.compile(r"^\[[a-z-]+(?:,\s*[a-z-]+)*\]\s+#\s*\S.*$")


def test_the_mypy_configuration_has_no_blanket_escape() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    mypy = config["mypy"]
    assert mypy["strict"] is True
    assert "ignore_errors" not in mypy
    for override in mypy.get("overrides", []):
        assert "ignore_errors" not in override, override


def test_every_type_ignore_names_its_codes_and_says_why() -> None:
    found, bare = 0, []
    for package in CHECKED:
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = IGNORE.search(line)
                if match is None:
                    continue
                found += 1
                if not WITH_CODE_AND_REASON.match(match["rest"].strip()):
                    bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found > 0  # the scan reads the files it means to
    assert bare == []
