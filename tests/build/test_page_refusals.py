"""How the page words a refusal (issue 33, the fresh tester's tryout; SPEC §11): one module
renders every refusal, the person's sentence first and the code after it. A second renderer
would drift back to the raw code first, so the page's sources are checked for one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "page"
RENDERER = PAGE / "ui" / "alerts.mjs"


def test_one_module_renders_a_refusal_and_it_puts_the_sentence_before_the_code() -> None:
    """Only ``alerts.mjs`` builds the ``refusal-code`` element; in it, the sentence's span
    comes before the code's element."""
    renderers = sorted(
        str(module.relative_to(ROOT))
        for module in PAGE.rglob("*.mjs")
        if "refusal-code" in module.read_text(encoding="utf-8") and module != RENDERER
    )
    assert renderers == [], f"these modules render a refusal themselves: {renderers}"
    text = RENDERER.read_text(encoding="utf-8")
    parts = re.search(r"export function refusalParts\(.*?\n\}\n", text, re.S)
    assert parts, "alerts.mjs has no refusalParts"
    body = parts.group(0)
    assert body.index('"refusal-message"') < body.index('"refusal-code"')
    show = re.search(r"export function showRefusal\(.*?\n\}\n", text, re.S)
    assert show and "refusalParts(" in show.group(0), "showRefusal does not use refusalParts"
