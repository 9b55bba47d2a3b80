"""``policy.json`` has one reader (issue 29 item 11): :func:`core.policy.load_policy`. The
browser host, the environment worker, the environment server and ``voicebox-env policy`` used
to read it each their own way — one failed open to a writable default, two raised, one went to
SAFE mode. Read from the sources: no module but ``core/policy.py`` loads the document."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READERS = (
    "browser_host/main.py",
    "browser_host/env_main.py",
    "server_host/home.py",
    "server_host/cli.py",
)


def _parses_a_policy(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = ast.unparse(node.func)
    return func.endswith(".load") and any("policy" in ast.unparse(a).lower() for a in node.args)


def test_policy_json_is_read_only_through_core_load_policy() -> None:
    offenders = []
    for folder in ("core", "browser_host", "server_host"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name == "core/policy.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            offenders += [f"{name}:{n.lineno}" for n in ast.walk(tree) if _parses_a_policy(n)]
    assert offenders == []
    for name in READERS:  # and each placement does read it, through the one reader
        assert "load_policy(" in (ROOT / name).read_text(encoding="utf-8"), name
