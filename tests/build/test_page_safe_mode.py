"""SAFE mode as the page shows it (issue 17, "Honest states"; SPEC §6 read-only mode): the page
disables exactly the controls whose operation core's registry marks as writing, and it learns
that set from the generated contract module, never from a list of its own."""

from __future__ import annotations

import re
from pathlib import Path

from core.host.page_contract import page_contract
from core.host.registry import OPERATIONS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "page"


def test_the_contract_lists_exactly_the_registrys_write_operations() -> None:
    writes = {name for name, op in OPERATIONS.items() if op.writes}
    assert writes, "the registry marks no operation as writing"
    assert set(page_contract()["WRITE_OPERATIONS"]) == writes


def test_the_safe_module_takes_the_write_operations_from_the_contract() -> None:
    text = (PAGE / "ui" / "safe.mjs").read_text(encoding="utf-8")
    assert re.search(r'import\s*\{[^}]*\bWRITE_OPERATIONS\b[^}]*\}\s*from\s*"\.\./contract', text)
    assert re.search(r"new Set\(\s*\[", text) is None, "safe.mjs restates an operation list"


def test_every_guarded_control_names_an_operation_the_registry_has() -> None:
    """A control guarded with an operation name core does not know would never be disabled."""
    named = set()
    for module in sorted(PAGE.rglob("*.mjs")):
        text = module.read_text(encoding="utf-8")
        named |= set(re.findall(r'\b(?:guard|blocked)\(\s*[\w.]+,\s*"([a-z_]+\.[a-z_.]+)"', text))
    assert named, "no guarded control found"
    assert named - set(OPERATIONS) == set()
