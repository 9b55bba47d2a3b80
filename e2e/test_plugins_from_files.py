"""Plugins from the file you are on (issue 33 item 5), through the real UI in headless Chromium:
the empty Plugins surface offers the shipped examples and installs one through the same dialog
and gesture as any package; unsaved edits of the file are saved first; a file's context menu "Run with…" lists the operations that read a
file (core's rule, plugin.list ``fileArg``) and runs one on that file; its result is shown in
human form (a table, Markdown as elements) with the raw JSON only behind "Details"; a second
path is chosen with the project's file picker; the confirmation names the project by its name,
never its ``p_…`` id."""

from __future__ import annotations

from pathlib import Path

from e2e.files_kit import file_entry, open_file, open_folder, set_editor_text
from e2e.hostpage import HostPage
from e2e.tray_kit import axe_serious, shot

PLAN = b"# Plan\n\nintro\n\n## Goals   \n\none  two\r\n\r\n\r\n## Risks <b>now</b> [x](https://e.test)\n"
RISKS = "Risks <b>now</b> [x](https://e.test)"


def test_an_example_installs_from_the_empty_surface_and_runs_on_the_file_in_human_form(
    host: HostPage, dist: Path
) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Field notes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "notes/plan.md"}, PLAN)
    host.ok("file.write", {"project": pid, "path": "notes/other.md"}, b"old\n")
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)

    # the empty Plugins surface offers the shipped examples; one click opens the install dialog
    page.click("#surfaces button[data-surface='plugins']")
    offer = "#plugin-examples li[data-example='textstats'] button[data-act='install-example']"
    page.wait_for_selector(offer)
    found = axe_serious(page, "empty Plugins surface with the examples")
    shot(page, "plugins-examples")
    assert page.is_visible("#plugin-examples li[data-example='tidy']")
    page.click(offer)
    page.wait_for_selector("#plugin-install-dialog[open]")
    assert "Reads the" in (page.text_content("#plugin-install-operations") or "")
    page.click("#plugin-install-dialog .dialog-confirm")
    card = "article[data-plugin='textstats']"
    page.wait_for_selector(card)
    installs = [r for r in host.ok("audit.list", {"limit": 200})["result"]["records"]]
    assert [r["op"] for r in installs if r["op"] == "plugin.install"] == ["plugin.install"]
    assert not page.is_visible("#plugin-examples")  # offered only while nothing is installed
    page.set_input_files("#plugin-file", str(dist / "plugins" / "examples" / "tidy-1.0.0.zip"))
    page.click("#plugin-install-dialog .dialog-confirm")
    page.wait_for_selector("article[data-plugin='tidy']")
    for plugin in ("textstats", "tidy"):
        at = f"article[data-plugin='{plugin}']"
        page.click(f"{at} button[data-act='admit']")
        page.wait_for_selector(f"{at} .plugin-state[data-admitted='true']")
        page.click(f"{at} button[data-act='files']")
        page.wait_for_selector(f"{at} .plugin-state[data-files='true']")

    # Run with… on the file: only the operations that read a file, the file already filled in
    page.click("#surfaces button[data-surface='files']")
    open_folder(page, "notes")
    page.click(file_entry("notes/plan.md"), button="right")
    page.click("#context-menu [data-action='run-with']")
    page.wait_for_selector("#run-with-dialog[open]")
    offered = page.eval_on_selector_all(
        "#run-with-dialog button[data-operation]", "bs => bs.map(b => b.dataset.operation)"
    )
    assert offered == ["textstats.count", "textstats.outline", "tidy.text"]
    found += axe_serious(page, "Run with… chooser")
    page.click("#run-with-dialog button[data-operation='textstats.outline']")
    page.wait_for_selector("#run-with-form[open]")
    assert page.input_value("#run-with-arg-path") == "notes/plan.md"
    assert page.text_content("#run-with-project") == "Field notes"
    page.click("#run-with-run")
    page.wait_for_selector("#run-with-result[open]")

    # human form: the headings as a table, the table of contents as Markdown elements
    table = page.text_content("#run-with-result .result-table") or ""
    assert "Goals" in table and "Risks" in table and "level" in table
    toc = page.eval_on_selector_all(
        "#run-with-result .markdown li", "ls => ls.map(l => l.firstChild.textContent.trim())"
    )
    assert toc == ["Plan", "Goals", "Risks <b>now</b> x (https://e.test)"], toc
    # Markdown becomes elements, never markup from a string: the HTML is its characters, the
    # link its text and address as text, nothing to click
    assert RISKS in table
    assert (
        page.eval_on_selector_all(
            "#run-with-result .result-view b, #run-with-result a", "n => n.length"
        )
        == 0
    )
    assert page.eval_on_selector_all("#run-with-result .markdown li li", "ls => ls.length") == 2
    assert not page.is_visible("#run-with-result #tool-result")  # raw JSON only behind Details
    # what a result with no receipt is, in core's words for a plugin run here (not "an
    # environment's own account": no environment took part)
    note = page.text_content("#run-with-result #tool-no-receipt") or ""
    assert "this host's sandbox" in note and "environment" not in note, note
    assert '"headings"' not in (page.inner_text("#run-with-result .result-view") or "")
    found += axe_serious(page, "a result in human form")
    shot(page, "plugins-run-with-result")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate(
        "() => { const d = document.querySelector('#run-with-result');"
        " return d.scrollWidth <= d.clientWidth + 1 && d.getBoundingClientRect().right <= innerWidth; }"
    )
    found += axe_serious(page, "a result in human form at 390 px")
    shot(page, "narrow-390-plugins-run-with-result")
    page.emulate_media(color_scheme="dark")  # the dark theme follows the system's
    assert page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor") == (
        "rgb(15, 18, 22)"
    )
    found += axe_serious(page, "a result in human form at 390 px, dark")
    shot(page, "dark-narrow-390-plugins-run-with-result")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1280, "height": 860})
    page.click("#run-with-result .result-details summary")
    assert page.is_visible("#run-with-result #tool-result")
    assert '"headings"' in (page.text_content("#run-with-result #tool-result") or "")
    page.click("#run-with-result button.primary")

    # the file open with unsaved edits: Run with… saves them first (the plugin reads what is stored)
    open_file(page, "notes/plan.md")
    set_editor_text(page, PLAN.decode().replace("\r\n", "\n") + "\n\n\nmore  \n")  # CM keeps LF
    page.click(file_entry("notes/plan.md"), button="right")
    page.click("#context-menu [data-action='run-with']")
    page.wait_for_selector("#run-with-unsaved[open]")
    page.click("#run-with-unsaved .dialog-confirm")
    page.wait_for_selector("#run-with-dialog[open]")
    assert host.ok("file.read", {"project": pid, "path": "notes/plan.md"})["body"].endswith(
        b"more  \n"
    )
    page.click("#run-with-dialog button[data-operation='tidy.text']")
    page.wait_for_selector("#run-with-form[open]")
    # a second path is picked, not typed; the confirmation names the project, not its id
    assert page.input_value("#run-with-arg-path") == "notes/plan.md"
    page.click("button[data-path-for='run-with-arg-target']")
    page.wait_for_selector("#path-picker[open]")
    tree = page.eval_on_selector_all(
        "#path-picker button[data-path]", "bs => bs.map(b => b.dataset.path)"
    )
    assert tree == ["notes/other.md", "notes/plan.md"]
    page.fill("#path-picker-filter", "othr")
    page.wait_for_function(
        "() => document.querySelectorAll('#path-picker button[data-path]').length === 1"
    )
    found += axe_serious(page, "the path picker, filtered")
    shot(page, "plugins-path-picker")
    page.click("#path-picker button[data-path='notes/other.md']")
    page.wait_for_selector("#path-picker", state="detached")
    assert page.input_value("#run-with-arg-target") == "notes/other.md"
    page.click("#run-with-run")
    page.wait_for_selector("#tool-confirm-dialog[open]")
    assert page.text_content("#tool-confirm-project") == "Field notes"
    found += axe_serious(page, "the confirmation")
    shown = page.inner_text("#tool-confirm-dialog")
    assert pid not in shown and "notes/other.md" in shown
    page.click("#tool-confirm-dialog .dialog-confirm")
    page.wait_for_selector("#run-with-result[open] #tool-receipt")
    written = host.ok("file.read", {"project": pid, "path": "notes/other.md"})["body"]
    assert (
        written
        == b"# Plan\n\nintro\n\n## Goals\n\none  two\n\n## " + RISKS.encode() + b"\n\nmore\n"
    )
    assert "local-write" in (page.text_content("#run-with-result #tool-receipt") or "")
    page.click("#run-with-result button.primary")

    # the Tools surface offers the same picker for every argument core says takes a path
    page.click("nav >> text=Tools")
    page.click("button[aria-label='Run textstats.count']")
    page.click("button[data-path-for='tool-arg-path']")
    page.wait_for_selector("#path-picker[open] button[data-path='notes/plan.md']")
    page.click("#path-picker button[data-path='notes/plan.md']")
    page.wait_for_selector("#path-picker", state="detached")  # the dialog's close event is a task
    assert page.input_value("#tool-arg-path") == "notes/plan.md"
    page.click("#run-tool")
    page.wait_for_selector("#tool-result-view")
    assert "words" in (page.inner_text("#tool-result-view .result-record") or "")
    assert found == [], found
    host.assert_clean()
