"""The audit and the mailbox are each a package: a small pure contract module and the machinery
beside it, every module short, every name importers use still found where it was (issue 35
item 2).

Read from the sources (no import for the first two laws), so the checks run on CPython and
inside Pyodide alike.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
MAX_MODULE_LINES = 450
PACKAGES = {
    "core.audit": {"contract": ("record", "verify"), "machinery": ("anchor", "group_commit")},
    "core.missions.mailbox": {"contract": ("line",), "machinery": ("segments", "index")},
}
MACHINERY = {
    "asyncio",
    "core.ports",
    *(f"{package}.{m}" for package, parts in PACKAGES.items() for m in parts["machinery"]),
}
"""What a contract module never imports: the event loop, the storage and key ports, and the
machinery of its own package."""


def _folder(package: str) -> Path:
    return CORE.joinpath(*package.split(".")[1:])


def _imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_audit_and_the_mailbox_are_packages_whose_modules_are_at_most_450_lines() -> None:
    for package, parts in PACKAGES.items():
        folder = _folder(package)
        assert (folder / "__init__.py").is_file(), package
        sizes = {
            p.stem: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")
        }
        assert set(sizes) >= {"__init__", *parts["contract"], *parts["machinery"]}, package
        assert max(sizes.values()) <= MAX_MODULE_LINES, (package, sizes)


def test_the_contract_modules_are_pure_no_storage_no_event_loop_no_machinery() -> None:
    for package, parts in PACKAGES.items():
        for name in parts["contract"]:
            tree = ast.parse((_folder(package) / f"{name}.py").read_text(encoding="utf-8"))
            assert _imports(tree).isdisjoint(MACHINERY), (package, name, _imports(tree))
            awaits = [n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef)]
            assert awaits == [], (package, name)


def test_every_name_importers_use_is_still_exported_by_the_package() -> None:
    used = {
        "core.audit": [
            "ANCHOR_NAME",
            "CHAIN_STEP",
            "GENESIS",
            "GROUP_WINDOW_MS",
            "MAX_BATCH",
            "AuditLog",
            "BatchAuditSink",
            "Verification",
            "record_hash",
        ],
        "core.missions.mailbox": [
            "INDEX_PATH",
            "MAILBOX_DIR",
            "MAX_NOTE_CHARS",
            "AgentId",
            "Mailbox",
            "MailboxCache",
            "decode_line",
            "encode_line",
            "mission_line",
            "note_line",
            "segment_path",
        ],
    }
    for package, names in used.items():
        module = importlib.import_module(package)
        assert [n for n in [*names, *module.__all__] if not hasattr(module, n)] == [], package
