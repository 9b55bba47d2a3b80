"""core/ never imports js, pyodide or browser_host (SPEC §1; DEVELOPERS ground rules)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = {"js", "pyodide", "browser_host", "pyodide_js"}


def imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            roots |= {a.value.split(".")[0] for a in node.args if isinstance(a, ast.Constant)}
    return roots


def test_core_never_imports_a_browser_module() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10
    offenders = {
        str(f.relative_to(CORE)): sorted(imported_roots(f.read_text()) & FORBIDDEN) for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_boundary_check_would_catch_each_form() -> None:
    assert imported_roots("import js") == {"js"}
    assert imported_roots("from pyodide.ffi import to_js") == {"pyodide"}
    assert imported_roots("import browser_host.main as m") == {"browser_host"}
    assert imported_roots("__import__('js')") == {"js"}
