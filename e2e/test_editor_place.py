"""Position and preferences in the editor (issue 33 item 6), through the real UI in headless
Chromium: the cursor and selection of a file come back after a reload (kept by the host);
Python indents by 4 spaces (PEP 8); switching to another file with unsaved edits offers Save
(and saving then opens the other file, the edits stored); the toolbar's "Discard changes" asks
first, and Cancel keeps the typed text."""

from __future__ import annotations

import time

from e2e.files_kit import EDITOR, editor_text, file_entry, open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import open_in_ui


def _drafts(host: HostPage) -> str:
    pid = host.ok("project.create", {"name": "Drafts"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "a.txt"}, b"stored a\n")
    host.ok("file.write", {"project": pid, "path": "b.txt"}, b"stored b\n")
    open_in_ui(host, pid)
    return pid


def test_switching_files_with_unsaved_edits_offers_save(host: HostPage) -> None:
    page = host.page
    pid = _drafts(host)
    open_file(page, "a.txt")
    set_editor_text(page, "typed and kept\n")
    page.click(file_entry("b.txt"))
    page.wait_for_selector("#unsaved-dialog[open] #unsaved-save")
    buttons = page.locator("#unsaved-dialog[open] .actions button").all_inner_texts()
    assert buttons == ["Cancel", "Save", "Discard changes"]  # Cancel first: Enter never loses
    page.click("#unsaved-save")
    page.wait_for_selector("#viewer-path:text-is('b.txt')")
    assert host.ok("file.read", {"project": pid, "path": "a.txt"})["body"] == b"typed and kept\n"
    wait_editor(page)
    assert editor_text(page) == "stored b\n"
    host.assert_clean()


def test_discard_changes_asks_first(host: HostPage) -> None:
    page = host.page
    pid = _drafts(host)
    open_file(page, "a.txt")
    set_editor_text(page, "typed, not saved\n")
    page.click("#revert-file")
    page.wait_for_selector("#revert-dialog[open]")
    page.click("#revert-dialog button.dialog-cancel")
    page.wait_for_selector("#revert-dialog", state="detached")
    assert editor_text(page) == "typed, not saved\n"
    page.click("#revert-file")
    page.click("#revert-dialog[open] button.dialog-confirm")
    page.wait_for_function("() => document.querySelector('#revert-file').disabled")
    assert editor_text(page) == "stored a\n"
    assert host.ok("file.read", {"project": pid, "path": "a.txt"})["body"] == b"stored a\n"
    host.assert_clean()


SELECTION = "() => { const m = voicebox.app.filesView.editor.view.state.selection.main; return [m.anchor, m.head]; }"


def test_the_cursor_and_selection_of_a_file_come_back_after_a_reload(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Places"})["result"]["project"]["id"]
    lines = "".join(f"line {i:03}\n" for i in range(200)).encode()
    host.ok("file.write", {"project": pid, "path": "long.txt"}, lines)
    open_in_ui(host, pid)
    open_file(page, "long.txt")
    wait_editor(page)
    page.click(EDITOR)
    page.keyboard.press("Control+End")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    where = page.evaluate(SELECTION)
    assert where[1] - where[0] == 2 and where[0] > 1000

    def kept() -> list[int] | None:
        got = host.ok("files.position", {"project": pid, "path": "long.txt"})["result"]["position"]
        return [got["anchor"], got["head"]] if got else None

    deadline = time.monotonic() + 10
    while kept() != where and time.monotonic() < deadline:  # reported after a quiet 300 ms
        page.wait_for_timeout(50)
    assert kept() == where
    host.reload()
    page.wait_for_selector("#viewer-path:text-is('long.txt')")
    wait_editor(page)
    page.wait_for_function(
        "(w) => { const m = voicebox.app.filesView?.editor?.view.state.selection.main;"
        " return m && m.anchor === w[0] && m.head === w[1]; }",
        arg=where,
    )
    top = page.evaluate("() => voicebox.app.filesView.editor.view.scrollDOM.scrollTop")
    assert top > 0  # scrolled to where the cursor was, not the top of the file
    host.assert_clean()


def test_python_indents_by_four_spaces(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Indents"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "m.py"}, b"")
    open_in_ui(host, pid)
    open_file(page, "m.py")
    wait_editor(page)
    page.click(EDITOR)
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    page.keyboard.type("pass")
    assert editor_text(page) == "def f():\n    pass"
    host.assert_clean()


def test_editor_settings_apply_at_once_and_are_kept_by_the_host(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Prefs"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "m.py"}, b"")
    open_in_ui(host, pid)
    open_file(page, "m.py")
    wait_editor(page)
    page.click("#editor-settings")
    page.wait_for_selector("#editor-prefs-dialog[open]")
    page.fill("#pref-indent-py", "2")
    page.fill("#pref-font-size", "20")
    page.check("#pref-wrap")
    page.select_option("#pref-theme", "dark")
    page.click("#editor-prefs-dialog button.dialog-confirm")
    page.wait_for_selector("#editor-prefs-dialog", state="detached")
    size = "() => getComputedStyle(document.querySelector('#editor').shadowRoot.querySelector('.cm-editor')).fontSize"
    page.wait_for_function(f"() => ({size})() === '20px'")
    page.click(EDITOR)
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    page.keyboard.type("pass")
    assert editor_text(page) == "def f():\n  pass"
    kept = host.ok("editor.prefs", {})["result"]
    assert kept["indent"]["py"] == 2 and kept["font_size"] == 20 and kept["wrap"] is True
    assert kept["theme"] == "dark"
    page.click("#save-file")
    page.wait_for_selector("#save-state:text-matches('Saved')")
    host.reload()
    page.wait_for_selector("#viewer-path:text-is('m.py')")
    wait_editor(page)
    page.wait_for_function(f"() => ({size})() === '20px'")
    wraps = "() => document.querySelector('#editor').shadowRoot.querySelector('.cm-lineWrapping') !== null"
    assert page.evaluate(wraps)
    host.assert_clean()


def test_after_a_reload_the_tree_shows_the_open_file_however_far_down(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Many"})["result"]["project"]["id"]
    for i in range(120):
        host.ok("file.write", {"project": pid, "path": f"f{i:03}.txt"}, b"x\n")
    open_in_ui(host, pid)
    page.evaluate("(p) => voicebox.app.go('files', { project: p, file: 'f110.txt' })", pid)
    page.wait_for_selector("#viewer-path:text-is('f110.txt')")
    host.reload()
    page.wait_for_selector("#viewer-path:text-is('f110.txt')")
    seen = """() => { const pane = document.querySelector('.tree-pane').getBoundingClientRect();
      const row = [...document.querySelectorAll('#file-tree li')].find((li) => li.textContent.includes('f110.txt'));
      const r = row.getBoundingClientRect();
      return { top: document.querySelector('.tree-pane').scrollTop, inside: r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1 }; }"""
    page.wait_for_function(f"() => ({seen})().inside")
    assert page.evaluate(seen)["top"] > 0
    host.assert_clean()
