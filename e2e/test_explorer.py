"""The file explorer through the real UI in headless Chromium (issue 17, items 3 and 4): a
folder dropped from the desktop uploads its tree (a real drag of a real folder, through the
DevTools protocol's drag events, so the page reads real directory entries); folders are
renamed, moved and deleted through the context menu, the keyboard and a drag; writing over an
existing name asks (Replace / Keep both / Cancel, each outcome checked on the host); a delete
goes to the trash and comes back byte-identical, also after a reload."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from e2e.files_kit import file_entry, folder_row, open_folder
from e2e.hostpage import HostPage
from e2e.tray_kit import axe_serious, open_in_ui, shot

BLOB = bytes(range(256)) * 41 + b"\x00tail"


def _project(host: HostPage, name: str, files: dict[str, bytes]) -> str:
    pid = host.ok("project.create", {"name": name}, human=True)["result"]["project"]["id"]
    for path, data in files.items():
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    return pid


def _walk(host: HostPage, pid: str) -> dict[str, int]:
    files = host.ok("file.walk", {"project": pid})["result"]["files"]
    return {f["path"]: f["size"] for f in files}


def _sha(host: HostPage, pid: str, path: str) -> str:
    return host.ok("file.read", {"project": pid, "path": path})["result"]["sha256"]


def _menu(page: Page, selector: str, action: str) -> None:
    """Right-click ``selector`` and choose the menu item ``action``."""
    page.click(selector, button="right")
    page.click(f"#context-menu [data-action='{action}']")


def _prompt(page: Page, value: str) -> None:
    """Answer the open prompt dialog with ``value``."""
    field = page.locator("dialog[open] input[type=text]")
    field.fill(value)
    page.click("dialog[open] button[value=ok]")
    field.wait_for(state="detached")


def _cdp_drop(page: Page, target: str, paths: list[Path]) -> None:
    """Drag real files or folders from disk onto ``target`` (DevTools Input.dispatchDragEvent:
    Chromium builds the DataTransfer from the paths, directory entries included)."""
    box = page.locator(target).bounding_box()
    assert box is not None
    x, y = box["x"] + 12, box["y"] + box["height"] / 2
    cdp = page.context.new_cdp_session(page)
    data: dict[str, Any] = {"items": [], "files": [str(p) for p in paths], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        cdp.send("Input.dispatchDragEvent", {"type": kind, "x": x, "y": y, "data": data})
    cdp.detach()


def test_a_dropped_folder_uploads_its_tree_then_is_renamed_moved_and_deleted_in_the_ui(
    host: HostPage, tmp_path: Path
) -> None:
    page = host.page
    pid = _project(host, "Explorer", {"src/main.py": b"print(1)\n", "archive/keep.txt": b"k"})
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (docs / "sub" / "blob.bin").write_bytes(BLOB)
    open_in_ui(host, pid)
    page.wait_for_selector(folder_row("src"))

    # 1. a real folder dragged from the desktop onto "src" uploads its whole tree there
    _cdp_drop(page, folder_row("src"), [docs])
    page.wait_for_function("() => /Uploaded 2 files/.test(document.body.textContent)")
    assert _walk(host, pid) == {
        "archive/keep.txt": 1,
        "src/docs/guide.md": 8,
        "src/docs/sub/blob.bin": len(BLOB),
        "src/main.py": 9,
    }
    assert _sha(host, pid, "src/docs/sub/blob.bin") == hashlib.sha256(BLOB).hexdigest()

    # 2. the folder becomes the upload target; renaming it (context menu) keeps the label true
    open_folder(page, "src")
    page.click(folder_row("src/docs"))
    page.click("#use-selected-folder")
    page.wait_for_selector("#target-folder:text-is('/src/docs/')")
    _menu(page, folder_row("src/docs"), "rename")
    _prompt(page, "manual")
    page.wait_for_selector(folder_row("src/manual"))
    assert sorted(_walk(host, pid)) == [
        "archive/keep.txt",
        "src/main.py",
        "src/manual/guide.md",
        "src/manual/sub/blob.bin",
    ]
    page.wait_for_selector("#target-folder:text-is('/src/manual/')")
    assert "folder=src%2Fmanual" in page.url

    # 3. moved with the keyboard: Ctrl+X on the folder, Ctrl+V on the destination
    page.focus("#file-tree .tree-dir[data-path='src/manual']")
    page.keyboard.press("Control+x")
    page.focus("#file-tree .tree-dir[data-path='archive']")
    page.keyboard.press("Control+v")
    page.wait_for_selector(folder_row("archive/manual"), state="attached")
    assert sorted(_walk(host, pid)) == [
        "archive/keep.txt",
        "archive/manual/guide.md",
        "archive/manual/sub/blob.bin",
        "src/main.py",
    ]
    page.wait_for_selector("#target-folder:text-is('/archive/manual/')")

    # 4. dragged with the mouse back to the root's "src"
    open_folder(page, "archive")
    page.drag_and_drop(folder_row("archive/manual"), folder_row("src"))
    page.wait_for_selector(folder_row("src/manual"), state="attached")
    assert "src/manual/sub/blob.bin" in _walk(host, pid)
    assert _sha(host, pid, "src/manual/sub/blob.bin") == hashlib.sha256(BLOB).hexdigest()

    # a folder downloads as a .zip of just that folder (the archive export, limited to it)
    page.click(folder_row("src/manual"), button="right")
    found = axe_serious(page, "folder context menu")
    with page.expect_download() as caught:
        page.click("#context-menu [data-action='download-folder']")
    archive = zipfile.ZipFile(io.BytesIO(Path(caught.value.path()).read_bytes()))
    assert sorted(n for n in archive.namelist() if not n.startswith(".voicebox")) == [
        "src/manual/guide.md",
        "src/manual/sub/blob.bin",
    ]
    assert archive.read("src/manual/sub/blob.bin") == BLOB
    assert caught.value.suggested_filename == "Explorer - manual.zip"

    # 5. a folder cannot go into itself: the host's sentence is shown, nothing moves
    _menu(page, folder_row("src"), "move-to")
    _prompt(page, "src/manual")
    page.wait_for_function("() => /cannot be moved into itself/.test(document.body.textContent)")
    assert "src/manual/guide.md" in _walk(host, pid)

    # 6. deleted with the Delete key: the confirm says how many files go (counted by the host)
    page.focus("#file-tree .tree-dir[data-path='src/manual']")
    page.click(folder_row("src/manual"))
    page.keyboard.press("Delete")
    dialog = page.locator("#delete-dialog")
    dialog.wait_for()
    assert "the 2 files in it" in (dialog.text_content() or "")
    shot(page, "explorer-delete-folder")
    dialog.locator(".dialog-confirm").click()
    page.wait_for_selector("#undo-delete")
    assert sorted(_walk(host, pid)) == ["archive/keep.txt", "src/main.py"]
    page.wait_for_selector("#target-folder:text-is('/')")
    assert found == [], found
    [entry] = host.ok("trash.list", {"project": pid})["result"]["entries"]
    assert entry["path"] == "src/manual" and len(entry["files"]) == 2

    # 7. Undo puts it back, byte-identical
    page.click("#undo-delete")
    page.wait_for_selector(folder_row("src/manual"), state="attached")
    assert _sha(host, pid, "src/manual/sub/blob.bin") == hashlib.sha256(BLOB).hexdigest()
    assert host.ok("trash.list", {"project": pid})["result"]["entries"] == []
    host.assert_clean()


def test_moving_onto_an_existing_name_asks_and_each_answer_does_what_it_says(
    host: HostPage,
) -> None:
    page = host.page
    pid = _project(
        host, "Clash", {"new/a.txt": b"incoming\n", "old/a.txt": b"resident\n", "x.txt": b"x"}
    )
    open_in_ui(host, pid)
    open_folder(page, "new")

    def move_a() -> None:
        _menu(page, file_entry("new/a.txt"), "move-to")
        _prompt(page, "old")
        page.wait_for_selector("#conflict-dialog[open]")

    move_a()  # Cancel: nothing changes
    page.click("#conflict-dialog .dialog-cancel")
    page.wait_for_selector("#conflict-dialog", state="detached")
    assert host.ok("file.read", {"project": pid, "path": "old/a.txt"})["body"] == b"resident\n"
    assert host.ok("file.read", {"project": pid, "path": "new/a.txt"})["body"] == b"incoming\n"

    move_a()  # Keep both: the host picks the free name, the resident file is untouched
    page.click("#conflict-dialog [data-choice='keep']")
    page.wait_for_function(
        "() => /Moved new\\/a.txt to old\\/a \\(2\\).txt/.test(document.body.textContent)"
    )
    assert host.ok("file.read", {"project": pid, "path": "old/a (2).txt"})["body"] == b"incoming\n"
    assert host.ok("file.read", {"project": pid, "path": "old/a.txt"})["body"] == b"resident\n"

    host.ok("file.write", {"project": pid, "path": "new/a.txt"}, body=b"third\n", human=True)
    page.evaluate("() => voicebox.app.filesView.afterChange()")
    page.wait_for_selector(file_entry("new/a.txt"))
    move_a()  # Replace: the new bytes win, the resident file waits in the trash
    page.click("#conflict-dialog [data-choice='replace']")
    page.wait_for_function(
        "() => /Moved new\\/a.txt to old\\/a.txt/.test(document.body.textContent)"
    )
    assert host.ok("file.read", {"project": pid, "path": "old/a.txt"})["body"] == b"third\n"
    [entry] = host.ok("trash.list", {"project": pid})["result"]["entries"]
    assert entry["path"] == "old/a.txt"
    assert entry["files"][0]["sha256"] == hashlib.sha256(b"resident\n").hexdigest()
    host.assert_clean()


def test_a_deleted_file_comes_back_byte_identical_from_the_trash_after_a_reload(
    host: HostPage,
) -> None:
    page = host.page
    pid = _project(host, "Trash", {"data/blob.bin": BLOB, "data/note.txt": b"first\n"})
    before = _sha(host, pid, "data/blob.bin")
    open_in_ui(host, pid)
    open_folder(page, "data")

    _menu(page, file_entry("data/blob.bin"), "delete")
    page.locator("#delete-dialog .dialog-confirm").click()
    page.wait_for_selector("#undo-delete")
    _menu(page, file_entry("data/note.txt"), "delete")
    page.locator("#delete-dialog .dialog-confirm").click()
    page.wait_for_selector(file_entry("data/note.txt"), state="detached")
    host.ok("file.write", {"project": pid, "path": "data/note.txt"}, body=b"second\n", human=True)
    assert host.refused("file.read", {"project": pid, "path": "data/blob.bin"})["code"] == (
        "file-not-found"
    )

    host.reload()  # the trash is the host's, not the page's: it outlives the page
    open_in_ui(host, pid)
    page.click("#show-trash")
    page.wait_for_selector("#trash-table")
    assert page.locator("#trash-table tbody tr").count() == 2
    shot(page, "explorer-trash")
    page.click("#trash-table tr:has-text('data/blob.bin') .trash-restore")
    page.wait_for_function("() => /sha256 checked/.test(document.body.textContent)")
    assert _sha(host, pid, "data/blob.bin") == before
    assert host.ok("file.read", {"project": pid, "path": "data/blob.bin"})["body"] == BLOB

    # restoring onto a name taken again asks; Keep both restores beside it
    page.click("#trash-table tr:has-text('data/note.txt') .trash-restore")
    page.wait_for_selector("#restore-conflict-dialog[open]")
    page.click("#restore-conflict-dialog [data-choice='keep']")
    page.wait_for_function("() => /beside data\\/note.txt/.test(document.body.textContent)")
    assert host.ok("file.read", {"project": pid, "path": "data/note (2).txt"})["body"] == b"first\n"
    assert host.ok("file.read", {"project": pid, "path": "data/note.txt"})["body"] == b"second\n"

    # Shift+click selects a range; Delete sends all three to the trash after one confirm
    page.click(file_entry("data/blob.bin"))
    page.click(file_entry("data/note.txt"), modifiers=["Shift"])
    assert page.locator("#file-tree [aria-selected='true']").count() == 3
    page.keyboard.press("Delete")
    dialog = page.locator("#delete-dialog")
    dialog.wait_for()
    assert "This deletes 3 files" in (dialog.text_content() or "")
    dialog.locator(".dialog-confirm").click()
    page.wait_for_selector("#undo-delete")
    assert _walk(host, pid) == {}

    # Empty trash deletes for good (asked first); the trash view passes axe
    page.click("#show-trash")
    page.wait_for_selector("#trash-table")
    assert page.locator("#trash-table tbody tr").count() == 3
    found = axe_serious(page, "trash view")
    page.click("#empty-trash")
    found += axe_serious(page, "empty-trash confirm")
    assert found == [], found
    page.locator("#empty-trash-dialog .dialog-confirm").click()
    page.wait_for_function("() => /The trash is empty/.test(document.body.textContent)")
    assert host.ok("trash.list", {"project": pid})["result"]["entries"] == []
    host.assert_clean()


def test_the_tree_goes_back_to_its_left_edge_when_another_row_is_chosen(host: HostPage) -> None:
    """A long name read sideways leaves the tree scrolled right; choosing another row brings
    the pane back to x = 0, where every name starts."""
    page = host.page
    long = "a-very-long-name-" + "that-goes-on-" * 12 + "end.txt"
    pid = _project(host, "Sideways", {long: b"x", "b.txt": b"y"})
    open_in_ui(host, pid)
    page.click(file_entry(long))
    page.wait_for_selector(f"#viewer-path:text-is('{long}')")
    # choosing the long name itself leaves the pane at its left edge, where the name starts
    assert page.eval_on_selector(".tree-pane", "(p) => p.scrollLeft") == 0
    row = f"#file-tree li[data-path='{long}']"
    page.eval_on_selector(row, "(li) => li.focus({ preventScroll: true })")
    pane = ".tree-pane"
    page.eval_on_selector(pane, "(p) => { p.scrollLeft = p.scrollWidth; }")
    assert page.eval_on_selector(pane, "(p) => p.scrollLeft") > 0  # the name is wider than the pane
    page.keyboard.press("ArrowDown")  # the keys, not a click: a click scrolls to its target
    page.wait_for_function(
        "() => document.activeElement?.dataset.path === 'b.txt'", polling=50, timeout=5_000
    )
    assert page.eval_on_selector(pane, "(p) => p.scrollLeft") == 0
    host.assert_clean()
