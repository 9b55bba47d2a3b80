"""The editor's defaults (issue 33 item 6): how far a line indents, per language.

One rule, here: Python indents by 4 spaces (PEP 8, "Indentation"); every other language by
:data:`DEFAULT_INDENT` spaces; a tab is shown :data:`TAB_WIDTH` columns wide. The language key
is the editor's (``page/editor/codemirror-entry.mjs`` ``languageKey``: ``py``, ``js``, ``md``
…). Generated into the page's contract (:mod:`core.host.page_contract`, ``EDITOR_DEFAULTS``).
"""

from __future__ import annotations

__all__ = ["DEFAULT_INDENT", "INDENT_BY_LANGUAGE", "TAB_WIDTH", "editor_defaults", "indent_for"]

DEFAULT_INDENT = 2
"""Spaces per indent level for a language with no entry in :data:`INDENT_BY_LANGUAGE`."""

INDENT_BY_LANGUAGE: dict[str, int] = {"py": 4}
"""Spaces per indent level, by editor language key (Python: PEP 8)."""

TAB_WIDTH = 4
"""Columns a tab character is shown as."""


def indent_for(language: str) -> int:
    """Spaces per indent level for editor language key ``language`` (``""`` for plain text)."""
    return INDENT_BY_LANGUAGE.get(language, DEFAULT_INDENT)


def editor_defaults() -> dict[str, object]:
    """``{"indent": {key: spaces}, "default_indent": n, "tab_width": n}`` for the page."""
    return {
        "indent": dict(INDENT_BY_LANGUAGE),
        "default_indent": DEFAULT_INDENT,
        "tab_width": TAB_WIDTH,
    }
