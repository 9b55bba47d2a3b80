"""Helpers for journeys through the Files surface: the explorer tree (an ARIA tree,
``page/ui/explorer.mjs``) and the editor (CodeMirror 6 inside an open shadow root; Playwright's
CSS locators pierce it)."""

from __future__ import annotations

from playwright.sync_api import Page

EDITOR = "#editor .cm-content"


def file_entry(path: str) -> str:
    """The selector of a file's name in the tree."""
    return f"#file-tree .file-entry[data-path='{path}']"


def folder_row(path: str) -> str:
    """The selector of a folder's row (click it to open or close the folder)."""
    return f"#file-tree .tree-dir[data-path='{path}'] > .tree-row"


def open_folder(page: Page, path: str) -> None:
    """Open the folder ``path`` in the tree (each folder on the way must be shown)."""
    item = f"#file-tree .tree-dir[data-path='{path}']"
    page.wait_for_selector(item)
    if page.get_attribute(item, "aria-expanded") != "true":
        page.click(f"{item} > .tree-row")
    page.wait_for_selector(f"{item}[aria-expanded='true']")


def open_file(page: Page, path: str) -> None:
    """Click the file ``path`` in the tree and wait for the viewer to show it."""
    page.click(file_entry(path))
    page.wait_for_selector(f"#viewer-path:text-is('{path}')")


def wait_editor(page: Page) -> None:
    """Wait until the editor (not the textarea of old) is mounted and shows a document."""
    page.wait_for_selector(EDITOR)


def editor_text(page: Page) -> str:
    """The document in the editor, as the editor holds it (not what is rendered)."""
    return page.evaluate("() => voicebox.app.filesView.editor.text()")


def set_editor_text(page: Page, text: str) -> None:
    """Replace the editor's document by ``text`` as typing would (select all, then insert)."""
    wait_editor(page)
    page.fill(EDITOR, text)
    page.wait_for_function("(t) => voicebox.app.filesView?.editor?.text() === t", arg=text)
