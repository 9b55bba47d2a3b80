"""What a new-user tryout found (SPEC §11): the keyboard focus ring is drawn on the control a
hidden file input belongs to; a double click on a create button creates one thing; a success
clears an error left by an earlier act; the Tools surface offers the open project first; a
tool receipt's time reads as a date."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page

from e2e.files_kit import editor_text, file_entry, open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import go, open_in_ui

RING = "(f) => getComputedStyle(document.querySelector(`label[for='${f}']`)).outlineStyle"


def tab_to(page: Page, element_id: str, limit: int = 80) -> None:
    """Press Tab until the element with ``element_id`` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.id") == element_id:
            return
    raise AssertionError(f"Tab never reached #{element_id}")


def ringed(page: Page, input_id: str) -> bool:
    return page.evaluate(RING, input_id) != "none"


def test_the_focus_ring_is_on_the_label_of_the_hidden_file_input_that_has_the_focus(
    host: HostPage,
) -> None:
    page = host.page
    page.wait_for_selector("#new-project-name")
    tab_to(page, "import-archive")
    assert ringed(page, "import-archive")

    pid = host.ok("project.create", {"name": "Rings"})["result"]["project"]["id"]
    open_in_ui(host, pid)
    page.wait_for_selector("#tree-pane")
    page.evaluate("() => document.activeElement?.blur()")
    tab_to(page, "upload-files")
    assert ringed(page, "upload-files")
    assert not ringed(page, "upload-folder")
    tab_to(page, "upload-folder")
    assert ringed(page, "upload-folder")
    assert not ringed(page, "upload-files")
    host.assert_clean()


def test_a_double_click_on_create_creates_one_project_and_one_block(host: HostPage) -> None:
    page = host.page
    page.wait_for_selector("#new-project-name")
    page.fill("#new-project-name", "Twice clicked")
    page.dblclick("#create-project")
    page.wait_for_selector("#project-title:text-is('Twice clicked')")
    names = [p["name"] for p in host.ok("project.list")["result"]["projects"]]
    assert names.count("Twice clicked") == 1, names

    go(page, "blocks")
    page.wait_for_selector("#new-block-name")
    page.fill("#new-block-name", "Importer")
    page.dblclick("#add-block")
    page.wait_for_selector("#blocks-table tr[data-block]")
    pid = page.evaluate("() => voicebox.app.project.id")
    store = host.ok("blocks.get", {"project": pid})["result"]["store"]
    assert [b["name"] for b in store["blocks"]] == ["Importer"]
    assert page.locator(".alert-error").count() == 0
    host.assert_clean()


def test_a_double_click_on_create_environment_creates_it_once_and_shows_no_error(
    served_context: BrowserContext, static_server: str
) -> None:
    host = HostPage(served_context.new_page())
    host.open(static_server)
    page = host.page
    go(page, "environments")
    page.wait_for_selector("#new-env-name")
    page.fill("#new-env-name", "studio")
    page.dblclick("#create-env")
    page.wait_for_selector("#env-table tr[data-env='studio']", timeout=60_000)
    assert page.locator(".alert-error").count() == 0
    envs = [e["name"] for e in host.ok("env.list")["result"]["environments"]]
    assert envs.count("studio") == 1, envs


def test_a_success_clears_the_error_an_earlier_act_left(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Errors"})["result"]["project"]["id"]
    open_in_ui(host, pid)
    page.wait_for_selector("#tree-pane")
    # the refusal of a bad name is shown in its dialog now (issue 33 item 9), and the
    # success that follows in the same dialog leaves no error behind anywhere
    page.click("button:text-is('New text file')")
    page.fill("dialog[open] input", "../outside.txt")
    page.click("dialog[open] button.primary")
    problem = page.locator("dialog[open] .dialog-problem")
    page.wait_for_function(
        "() => (document.querySelector('dialog[open] .dialog-problem')?.textContent ?? '').trim()"
    )
    page.fill("dialog[open] input", "inside.txt")
    assert (problem.text_content() or "") == ""
    page.click("dialog[open] button.primary")
    page.wait_for_selector("dialog[open]", state="detached")
    wait_editor(page)
    assert page.locator(".alert-error").count() == 0
    assert page.locator(".dialog-problem").count() == 0


def test_tools_offer_the_open_project_and_a_receipt_time_reads_as_a_date(host: HostPage) -> None:
    page = host.page
    host.ok("project.create", {"name": "Alpha"})
    zeta = host.ok("project.create", {"name": "Zeta"})["result"]["project"]["id"]
    page.wait_for_function(
        "() => [...document.querySelectorAll('iframe')].some((f) => f.src.endsWith('tools/sandbox.html'))"
    )
    open_in_ui(host, zeta, "tools")
    page.click("button[aria-label='Run create-asset']")
    assert page.input_value("#tool-arg-project") == zeta
    page.fill("#tool-arg-path", "art/mark.png")
    page.click("#run-tool")
    page.wait_for_selector("#tool-receipt time")
    at = page.get_attribute("#tool-receipt time", "datetime") or ""
    assert at[:2] == "20" and "T" in at


def test_an_invisible_character_in_a_name_is_flagged_in_the_projects_table_and_file_tree(
    host: HostPage,
) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Zero\u200bwidth"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "a\u200bb.txt"}, b"x")
    go(page, "files")
    go(page, "projects")
    page.wait_for_selector("button.project-open.has-hidden-chars")
    assert "U+200B" in (page.get_attribute("button.project-open", "title") or "")
    open_in_ui(host, pid)
    page.wait_for_selector("#project-title.has-hidden-chars")
    page.wait_for_selector("#file-tree .file-entry.has-hidden-chars")


def test_unsaved_edits_are_never_dropped_without_asking(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Drafts"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "a.txt"}, b"stored a\n")
    host.ok("file.write", {"project": pid, "path": "b.txt"}, b"stored b\n")
    open_in_ui(host, pid)
    open_file(page, "a.txt")
    set_editor_text(page, "typed, not saved\n")
    # another file: asked; Cancel keeps the editor and the typed text
    page.click(file_entry("b.txt"))
    page.wait_for_selector("dialog[open] h2:text-is('Discard your changes?')")
    page.click("dialog[open] button.dialog-cancel")
    assert editor_text(page) == "typed, not saved\n"
    # another surface: asked too; Cancel stays on Files
    go(page, "audit")
    page.wait_for_selector("dialog[open] h2:text-is('Discard your changes?')")
    page.click("dialog[open] button.dialog-cancel")
    assert editor_text(page) == "typed, not saved\n"
    # Back in the browser: asked too; Cancel stays (the address is put back)
    page.go_back()
    page.wait_for_selector("dialog[open] h2:text-is('Discard your changes?')")
    page.click("dialog[open] button.dialog-cancel")
    assert editor_text(page) == "typed, not saved\n"
    # the page puts the address back once the dialog has answered (after the click returns)
    page.wait_for_function("() => location.hash.includes('file=a.txt')")
    assert "file=a.txt" in page.url
    # Discard: the other file opens and the stored bytes are untouched
    page.click(file_entry("b.txt"))
    page.click("dialog[open] button.dialog-confirm")
    page.wait_for_selector("#viewer-path:text-is('b.txt')")
    assert host.ok("file.read", {"project": pid, "path": "a.txt"})["body"] == b"stored a\n"
    # an editor left unchanged asks nothing
    wait_editor(page)
    page.click(file_entry("a.txt"))
    page.wait_for_selector("#viewer-path:text-is('a.txt')")
    assert page.locator("dialog[open]").count() == 0
    host.assert_clean()
