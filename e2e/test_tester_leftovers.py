"""A fresh tester's leftovers, through the real page at 1280×800 (issue 34, closing40 "A fresh
tester's tryout"): Ctrl+Enter says that it saved the file before it ran it; an upload's summary
stays until the next act replaces it or the person closes it; the search panel is a side column
that leaves the editor in view; a compose refusal names the field by the label the person saw.
axe-core finds nothing serious on what changed."""

from __future__ import annotations

from pathlib import Path

from e2e.files_kit import EDITOR, open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import axe_serious, go, new_project, open_in_ui, shot

RUNTIME_BOOT_MS = 120_000
LONGER_THAN_ANY_LINE_TIMER_MS = 70_000  # status_line.mjs: SUCCESS_MS 8 s, LASTING_MS 60 s


def _files_project(host: HostPage, name: str, files: dict[str, bytes]) -> str:
    pid = host.ok("project.create", {"name": name}, human=True)["result"]["project"]["id"]
    for path, data in files.items():
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    open_in_ui(host, pid, "files")
    host.page.wait_for_selector("#file-tree .tree-item")
    return pid


def test_run_by_keyboard_says_it_saved_the_file_first(host: HostPage) -> None:
    page = host.page
    page.set_viewport_size({"width": 1280, "height": 800})
    pid = _files_project(host, "todo", {"todo.py": b"print('old')\n"})
    open_file(page, "todo.py")
    wait_editor(page)
    set_editor_text(page, "print('new words')\n")
    page.wait_for_selector("#save-state:text-is('Unsaved changes')")
    page.click(EDITOR)
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.getElementById('python-status').textContent"
        ".startsWith('Saved todo.py first.')"
    )
    page.wait_for_function(
        "() => /^Saved todo\\.py first\\. Exited with status 0/"
        ".test(document.getElementById('python-status').textContent)",
        timeout=RUNTIME_BOOT_MS,
    )
    assert "new words" in (page.text_content("#python-output") or "")
    assert host.ok("file.read", {"project": pid, "path": "todo.py"})["body"] == (
        b"print('new words')\n"
    )
    # a run of a saved file says nothing about saving
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => /^Exited with status 0/.test(document.getElementById('python-status').textContent)",
        timeout=RUNTIME_BOOT_MS,
    )
    host.assert_clean()


def test_an_upload_summary_stays_until_the_next_act_or_its_close_button(
    host: HostPage, tmp_path: Path
) -> None:
    page = host.page
    page.set_viewport_size({"width": 1280, "height": 800})
    _files_project(host, "uploads", {"a.txt": b"a"})
    page.clock.install()  # the line's timers from here on are the test's to move on
    page.clock.resume()  # meanwhile time flows as it does
    up = tmp_path / "up.txt"
    up.write_bytes(b"x" * 2000)
    page.set_input_files("#upload-files", str(up))
    status = page.locator("#files-status")
    page.wait_for_selector("#files-status:has-text('Uploaded 1 file')")
    page.clock.fast_forward(LONGER_THAN_ANY_LINE_TIMER_MS)
    assert "Uploaded 1 file" in (status.text_content() or "")
    # the bar went as the summary was said (stop 44's tryout: a full bar beside the summary
    # read as an upload still under way)
    assert page.locator("#upload-progress").is_hidden()
    assert axe_serious(page, "the kept upload summary") == []
    status.get_by_role("button", name="Close this message").click()
    page.wait_for_function("() => document.querySelector('#files-status').textContent === ''")
    assert page.locator("#upload-progress").is_hidden()
    # the next act replaces it
    other = tmp_path / "other.txt"
    other.write_bytes(b"y")
    page.set_input_files("#upload-files", str(other))
    page.wait_for_selector("#files-status:has-text('Uploaded 1 file')")
    page.click("#new-folder")
    page.wait_for_function("() => document.querySelector('#files-status').textContent === ''")
    page.keyboard.press("Escape")
    host.assert_clean()


def test_the_search_panel_leaves_the_editor_in_view_at_1280_by_800(host: HostPage) -> None:
    page = host.page
    page.set_viewport_size({"width": 1280, "height": 800})
    files = {
        f"src/m{i:02}.py": f"def hello_{i}():\n    return 'hello'\n".encode() for i in range(40)
    }
    _files_project(host, "search", files)
    page.click("#file-tree .tree-dir[data-path='src'] > .tree-row")
    open_file(page, "src/m07.py")
    wait_editor(page)
    page.evaluate("() => window.scrollTo(0, 0)")
    editor_top = page.locator("#editor").bounding_box()
    assert editor_top is not None
    page.keyboard.press("Control+Shift+F")
    page.wait_for_selector("#search-panel:not([hidden]) #search-query:focus")
    page.fill("#search-query", "hello")
    page.press("#search-query", "Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#search-results .search-hit').length === 80"
    )
    # the editor has not moved, and its first lines are in the window
    box = page.locator("#editor").bounding_box()
    assert box is not None and box["y"] == editor_top["y"], (box, editor_top)
    assert box["y"] + 60 < 800
    # the 80 results scroll inside their own box, which ends in the window
    results = page.locator("#search-results")
    scroll = results.evaluate("(r) => [r.scrollHeight, r.clientHeight]")
    assert scroll[0] > scroll[1]
    rbox = results.bounding_box()
    assert rbox is not None and rbox["y"] + rbox["height"] <= 800
    # a result still opens its file at the line, beside the panel
    page.locator("#search-results .search-hit[data-path='src/m12.py'][data-line='2']").click()
    page.wait_for_selector("#viewer-path:text-is('src/m12.py')")
    assert page.locator("#search-panel").is_visible()
    assert axe_serious(page, "the search side column") == []
    shot(page, "search-1280x800")
    host.assert_clean()


def test_a_compose_refusal_names_the_field_by_its_label(host: HostPage) -> None:
    page = host.page
    pid, _ = new_project(host, "Labels", [("Receipt importer", "Imports receipts.")])
    open_in_ui(host, pid)
    go(page, "compose")
    page.fill("#compose-agent", "two words")
    page.wait_for_function(
        "() => document.getElementById('packet-ref').textContent.endsWith('(code message-malformed)')"
    )
    said = page.text_content("#packet-ref") or ""
    assert "Agent id must be" in said and "to must" not in said, said
    host.assert_clean()
