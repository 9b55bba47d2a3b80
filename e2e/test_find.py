"""Finding things on the Files surface through the real UI (issue 33 item 1): Ctrl+Shift+F
searches in files (plain, case, whole word, regex, globs; results grouped by file, a click
opens the file at the line), a catastrophic regex is refused with a sentence, Ctrl+P opens a
file by a fuzzy name, the tree's filter box narrows the tree; axe-core finds nothing serious
on the new surfaces, light and dark."""

from __future__ import annotations

import hashlib

from playwright.sync_api import Page

from e2e.files_kit import EDITOR, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import axe_serious, open_in_ui, shot

FILES = {
    "src/app.py": b"import os\n\ndef main():\n    print('Hello world')\n    return 0\n",
    "src/lib/util.py": b"def hello():\n    return 'hello'\n\nHELLO = 1\n",
    "docs/guide.md": b"# Guide\n\nSay hello to the world.\n",
    "build/out.js": b"console.log('hello')\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0hello",
    "notes/todo_list.txt": b"nothing here\n",
}


def _project(host: HostPage) -> str:
    pid = host.ok("project.create", {"name": "Find things"}, human=True)["result"]["project"]["id"]
    for path, data in FILES.items():
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    open_in_ui(host, pid, "files")
    host.page.wait_for_selector("#file-tree .tree-dir[data-path='src']")
    return pid


IDLE = (
    "() => { const r = document.querySelector('#search-results').dataset;"
    " const f = (id) => document.querySelector(id);"
    " const asked = JSON.stringify([f('#search-query').value, f('#search-case').checked,"
    " f('#search-word').checked, f('#search-regex').checked, f('#search-include').value,"
    " f('#search-exclude').value]);"
    " return r.done && r.done === r.run && r.searched === asked; }"
)
"""The search the fields ask for has ended (one typed or one started by Enter: the same)."""


def _search(page: Page, text: str) -> None:
    """Type ``text`` and press Enter; wait until a search for what the fields say has ended."""
    before = page.get_attribute("#search-results", "data-run")
    page.fill("#search-query", text)
    page.press("#search-query", "Enter")
    # Enter starts a new run a task later: the one before it, for the same words, is not it
    page.wait_for_function(
        f"(before) => document.querySelector('#search-results').dataset.run !== before && ({IDLE})()",
        arg=before,
    )


def _found(page: Page) -> list[tuple[str, int]]:
    return [
        (b.get_attribute("data-path") or "", int(b.get_attribute("data-line") or 0))
        for b in page.locator("#search-results .search-hit").all()
    ]


def test_search_in_files_from_the_keyboard_finds_every_option_and_opens_at_the_line(
    host: HostPage,
) -> None:
    page = host.page
    _project(host)
    page.locator("#file-tree").focus()
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#search-panel:not([hidden]) #search-query:focus")
    page.wait_for_selector("#search-replace-note:text('not available yet')")
    _search(page, "hello")
    assert _found(page) == [
        ("build/out.js", 1),
        ("docs/guide.md", 3),
        ("src/app.py", 4),
        ("src/lib/util.py", 1),
        ("src/lib/util.py", 2),
        ("src/lib/util.py", 4),
    ]
    status = page.text_content("#search-status") or ""
    assert "6 matches in 4 files" in status and "1 binary file skipped" in status
    # the options, each from the keyboard (Tab to the box, Space ticks it)
    page.check("#search-case")
    _search(page, "hello")
    assert ("src/lib/util.py", 4) not in _found(page) and ("src/app.py", 4) not in _found(page)
    page.uncheck("#search-case")
    page.check("#search-word")
    _search(page, "hell")
    assert _found(page) == []
    assert (page.text_content("#search-status") or "").startswith("No matches")
    page.uncheck("#search-word")
    page.check("#search-regex")
    _search(page, r"^def \w+")
    assert _found(page) == [("src/app.py", 3), ("src/lib/util.py", 1)]
    page.click("#search-filters > summary")  # folded in the side column (issue 34)
    page.fill("#search-include", "*.py")
    page.fill("#search-exclude", "src/lib")
    _search(page, r"^def \w+")
    assert _found(page) == [("src/app.py", 3)]
    # a catastrophic pattern is refused with a sentence, not run
    page.fill("#search-include", "")
    page.fill("#search-exclude", "")
    _search(page, "(a+)+b")
    assert page.get_attribute("#search-status", "data-code") == "args-invalid"
    assert "exponential" in (page.text_content("#search-status") or "")
    # a result opens its file at its line (Enter on the result, from the keyboard)
    page.uncheck("#search-regex")
    _search(page, "HELLO")
    page.locator("#search-results .search-hit[data-path='src/lib/util.py'][data-line='4']").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#viewer-path:text-is('src/lib/util.py')")
    wait_editor(page)
    page.wait_for_function(
        "() => { const v = voicebox.app.filesView.editor?.view; if (!v) return false;"
        " const s = v.state.selection.main; const l = v.state.doc.lineAt(s.head);"
        " return l.number === 4 && v.state.sliceDoc(s.from, s.to) === 'HELLO'; }"
    )
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#search-query:focus")
    _search(page, "hello")
    shot(page, "search")
    host.assert_clean()


def test_quick_open_and_the_tree_filter_find_a_file_by_name(host: HostPage) -> None:
    page = host.page
    _project(host)
    page.locator("#file-tree").focus()
    page.keyboard.press("Control+P")
    page.wait_for_selector("#quick-open[open] #quick-open-input:focus")
    page.keyboard.type("utl")
    page.wait_for_selector("#quick-open-list [role=option][aria-selected=true]:has-text('util.py')")
    page.keyboard.press("Enter")
    page.wait_for_selector("#viewer-path:text-is('src/lib/util.py')")
    assert page.locator("#quick-open").count() == 0
    # the tree's filter: a flat list of the names that match, the tree back when cleared
    page.fill("#tree-filter", "todo")
    page.wait_for_selector("#tree-filter-results .filter-hit[data-path='notes/todo_list.txt']")
    assert page.locator("#tree-filter-results .filter-hit").count() == 1
    assert page.locator("#tree-pane").is_hidden()
    page.click("#tree-filter-results .filter-hit")
    page.wait_for_selector("#viewer-path:text-is('notes/todo_list.txt')")
    page.fill("#tree-filter", "no such name")
    page.wait_for_selector("#tree-filter-note:text('No file name matches')")
    page.press("#tree-filter", "Escape")
    page.wait_for_selector("#tree-pane:visible")
    host.assert_clean()


def test_the_find_surfaces_are_axe_clean_in_light_and_dark_at_1280_and_390(
    host: HostPage,
) -> None:
    page = host.page
    _project(host)
    bad = []
    for width, height in ((1280, 860), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for scheme in ("light", "dark"):
            where = f"{width} px, {scheme}"
            page.emulate_media(color_scheme=scheme)
            page.locator("#file-tree").focus()
            page.keyboard.press("Control+Shift+F")
            _search(page, "hello")
            page.fill("#tree-filter", "py")
            page.wait_for_selector("#tree-filter-results .filter-hit")
            bad += axe_serious(page, f"search panel and filter, {where}")
            assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"), where
            page.fill("#tree-filter", "")
            page.locator("#file-tree").focus()
            page.keyboard.press("Control+P")
            page.wait_for_selector("#quick-open[open]")
            page.keyboard.type("app")
            page.wait_for_selector("#quick-open-list [role=option]")
            bad += axe_serious(page, f"quick open, {where}")
            page.keyboard.press("Escape")
            page.wait_for_selector("#quick-open", state="detached")
    assert bad == []


def test_a_save_through_the_editor_is_what_the_next_search_finds_never_kept_old_text(
    host: HostPage,
) -> None:
    """Issue 33: the search panel's warm-up keeps the project's bytes in the host; a file saved
    through the editor after a search is searched as saved — the new line found, the old one
    gone — although the search before it was answered from kept bytes."""
    page = host.page
    pid = _project(host)
    page.locator("#file-tree").focus()
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#search-panel:not([hidden]) #search-query:focus")
    page.wait_for_function("() => document.querySelector('#search-panel').dataset.warm === 'done'")
    kept = int(page.get_attribute("#search-panel", "data-warm-kept") or 0)
    assert kept == sum(len(b) for b in FILES.values())  # every file's bytes kept by the host
    _search(page, "Say hello")
    assert _found(page) == [("docs/guide.md", 3)]
    page.locator("#search-results .search-hit[data-path='docs/guide.md']").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#viewer-path:text-is('docs/guide.md')")
    new = "# Guide\n\nWave goodbye to the world.\n"
    set_editor_text(page, new)
    page.click(EDITOR)
    page.keyboard.press("Control+s")
    digest = hashlib.sha256(new.encode()).hexdigest()
    page.wait_for_selector(f"#viewer-sha256:text-is('{digest}')")
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#search-query:focus")
    _search(page, "Say hello")
    assert _found(page) == []
    _search(page, "Wave goodbye")
    assert _found(page) == [("docs/guide.md", 3)]
    assert host.ok("file.read", {"project": pid, "path": "docs/guide.md"})["body"] == new.encode()
    host.assert_clean()
