"""The editor's indent rule lives in core and reaches the page through the generated contract
(issue 33 item 6; core/editor_prefs.py)."""

from __future__ import annotations

from core.editor_prefs import DEFAULT_INDENT, TAB_WIDTH, indent_for
from core.host.page_contract import page_contract


def test_python_indents_by_four_spaces_as_pep8_says() -> None:
    assert indent_for("py") == 4


def test_other_languages_indent_by_the_default() -> None:
    assert indent_for("js") == indent_for("") == DEFAULT_INDENT == 2


def test_the_page_contract_carries_the_editor_defaults() -> None:
    defaults = page_contract()["EDITOR_DEFAULTS"]
    assert defaults["indent"]["py"] == 4
    assert defaults["default_indent"] == DEFAULT_INDENT and defaults["tab_width"] == TAB_WIDTH


def test_editor_settings_are_kept_by_the_host_and_bounded() -> None:
    from tests.support import HostHarness

    h = HostHarness()
    first = h.ok("editor.prefs")
    assert first["tab_width"] == TAB_WIDTH and first["theme"] == "system" and not first["wrap"]
    mine = {"indent": {"py": 2}, "tab_width": 8, "font_size": 18, "wrap": True, "theme": "dark"}
    assert h.ok("editor.prefs", prefs=mine) == mine
    assert h.ok("editor.prefs") == mine
    assert h.refused("editor.prefs", prefs={**mine, "font_size": 90})["code"] == "message-malformed"
    assert h.refused("editor.prefs", prefs={**mine, "theme": "neon"})["code"] == "message-malformed"
    assert h.ok("editor.prefs") == mine
