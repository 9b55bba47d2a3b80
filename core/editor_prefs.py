"""The editor's defaults and a person's editor settings (issue 33 item 6).

One rule, here: Python indents by 4 spaces (PEP 8, "Indentation"); every other language by
:data:`DEFAULT_INDENT` spaces; a tab is shown :data:`TAB_WIDTH` columns wide. The language key
is the editor's (``page/editor/codemirror-entry.mjs`` ``languageKey``: ``py``, ``js``, ``md``
…). Generated into the page's contract (:mod:`core.host.page_contract`, ``EDITOR_DEFAULTS``).

A person may change them (:class:`EditorPrefs`: indent per language, tab width, font size, line
wrap, theme), kept by the host in ``ui-state.json`` (:mod:`core.missions.ui_state`,
``editor.prefs``), never by the page.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.model import Contract

__all__ = [
    "DEFAULT_INDENT",
    "FONT_SIZE",
    "INDENT_BY_LANGUAGE",
    "TAB_WIDTH",
    "EditorPrefs",
    "editor_defaults",
    "indent_for",
]

DEFAULT_INDENT = 2
"""Spaces per indent level for a language with no entry in :data:`INDENT_BY_LANGUAGE`."""

INDENT_BY_LANGUAGE: dict[str, int] = {"py": 4}
"""Spaces per indent level, by editor language key (Python: PEP 8)."""

TAB_WIDTH = 4
"""Columns a tab character is shown as."""

FONT_SIZE = 14
"""The editor's font size, CSS px."""

LanguageKey = Annotated[str, Field(pattern=r"^[a-z0-9+#-]{1,16}$")]


class EditorPrefs(Contract):
    """A person's editor settings: ``indent`` (language key → spaces per level, 1–8; the key
    ``other`` stands for every language without its own entry; a key left out follows
    :func:`indent_for`), ``tab_width`` (1–8 columns), ``font_size`` (10–28 px),
    ``wrap`` (long lines wrap), ``theme`` (``system`` follows the browser)."""

    indent: dict[LanguageKey, Annotated[int, Field(ge=1, le=8)]] = Field(
        default_factory=dict, max_length=64
    )
    tab_width: int = Field(default=TAB_WIDTH, ge=1, le=8)
    font_size: int = Field(default=FONT_SIZE, ge=10, le=28)
    wrap: bool = False
    theme: Literal["system", "light", "dark"] = "system"


def indent_for(language: str) -> int:
    """Spaces per indent level for editor language key ``language`` (``""`` for plain text)."""
    return INDENT_BY_LANGUAGE.get(language, DEFAULT_INDENT)


def editor_defaults() -> dict[str, object]:
    """``{"indent": {key: spaces}, "default_indent": n, "tab_width": n}`` for the page."""
    return {
        "indent": dict(INDENT_BY_LANGUAGE),
        "default_indent": DEFAULT_INDENT,
        "tab_width": TAB_WIDTH,
        "font_size": FONT_SIZE,
    }
