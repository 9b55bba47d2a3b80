"""Words and dialogs a person meets (issue 33, the fresh tester's tryout; docs/ui.md): a refusal
reads as the host's sentence with its code after it; the kept-text dialog (a project deleted in
another tab while its file had unsaved text here) is a sentence, then labelled controls, then
the buttons, at 1280×800 and 390×844 in light and dark, axe-clean."""

from __future__ import annotations

import itertools
import time

from playwright.sync_api import BrowserContext, Page

from e2e.files_kit import open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage, two_tabs
from e2e.tray_kit import axe_serious, go, open_in_ui, shot

SIZES = [(1280, 800), (390, 844)]
HELLO = b"for i in range(3):\n    print('line', i)\n"


def _box(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not on screen"
    return box


def _above(page: Page, upper: str, lower: str) -> None:
    """``upper`` ends at or above where ``lower`` starts (nothing shares its line)."""
    a, b = _box(page, upper), _box(page, lower)
    assert a["y"] + a["height"] <= b["y"] + 0.5, (upper, a, lower, b)


def test_a_refusal_shows_the_persons_sentence_first_and_its_code_after_it(
    host: HostPage,
) -> None:
    page = host.page
    host.ok("project.create", {"name": "Taken"}, human=True)
    host.reload()
    page.fill("#new-project-name", "Taken")
    page.click("#create-project")
    # a refusal of the name lands under its field (stop 42), the sentence first, the code after
    said = page.locator("#new-project-name-rule")
    said.locator(".refusal-code").wait_for()
    text = said.inner_text()
    sentence = said.locator(".refusal-message").inner_text()
    assert said.locator(".refusal-code").inner_text() == "already-exists"
    assert sentence and "already-exists" not in sentence
    assert text.index(sentence) < text.index("already-exists"), text
    assert "(code already-exists)" in text, text
    assert "— " not in text.split(sentence)[0], text  # no raw code and dash before the sentence
    assert page.text_content("#alerts") == ""
    host.assert_clean()


def test_an_attempt_the_browser_stops_takes_away_the_last_attempts_error(host: HostPage) -> None:
    """Stop 46's tryout: after "Add remote" was refused, a URL the browser itself rejects
    ("Please enter a URL") left the old refusal showing above the form, as if it were about
    the new URL. The browser's own stop of a new attempt clears the stale error."""
    page = host.page
    go(page, "environments")
    page.fill("#remote-url", "http://127.0.0.1:9/")  # nothing listens: refused by the host
    page.fill("#remote-code", "ABCDE-FGHJK")
    page.click("#add-remote")
    page.locator("#alerts .alert-error .refusal-code").wait_for()
    page.fill("#remote-url", "not a url")
    page.fill("#remote-code", "ABCDE-FGHJK")
    page.click("#add-remote")
    assert page.evaluate("() => document.querySelector('#remote-url').validity.typeMismatch")
    assert page.locator("#alerts .alert-error").count() == 0
    host.assert_clean()


def test_the_kept_text_dialog_is_a_sentence_then_labelled_controls_then_buttons(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Doomed"}, human=True)["result"]["project"]["id"]
    first.ok("project.create", {"name": "Safe"}, human=True)
    first.ok("file.write", {"project": pid, "path": "todo.txt"}, b"old\n", human=True)
    page = second.page
    open_in_ui(second, pid)
    open_file(page, "todo.txt")
    wait_editor(page)
    set_editor_text(page, "my unsaved words\n" * 3)
    first.ok("project.delete", {"project": pid}, human=True)
    page.wait_for_selector("#orphan-dialog[open]", timeout=10_000)
    found: list[dict] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            dialog = _box(page, "#orphan-dialog")
            assert dialog["x"] >= 0 and dialog["x"] + dialog["width"] <= width, (width, dialog)
            order = [
                "#orphan-sentence",
                "label[for='orphan-text']",
                "#orphan-text",
                "#orphan-copy",
                "label[for='orphan-project']",
                "#orphan-project",
                "label[for='orphan-path']",
                "#orphan-path",
                "#orphan-dialog .actions",
            ]
            for upper, lower in itertools.pairwise(order):
                _above(page, upper, lower)
            for control in ("#orphan-project", "#orphan-path", "#orphan-save"):
                box = _box(page, control)
                assert box["x"] + box["width"] <= dialog["x"] + dialog["width"], (control, box)
            # the picker has a name a screen reader says, and the path its hint
            assert page.eval_on_selector("#orphan-project", "s => s.labels[0].textContent")
            assert "kept" in page.inner_text("#orphan-path-hint")
            found += axe_serious(page, f"kept-text dialog {width}×{height} {scheme}")
            name = f"kept-text-dialog-{width}{'-dark' if scheme == 'dark' else ''}"
            shot(page, name)
    assert found == [], found
    page.click("#orphan-save")  # the buttons still work: saved into "Safe"
    page.wait_for_selector("#orphan-dialog", state="detached")
    first.assert_clean()
    second.assert_clean()


def _guide_here(page: Page, shown: bool) -> None:
    page.wait_for_function(
        "(shown) => voicebox.app.help.answered && !document.getElementById('guide').hidden === shown",
        arg=shown,
    )


def test_getting_started_shows_before_the_first_project_then_only_on_projects(
    host: HostPage,
) -> None:
    page = host.page
    _guide_here(page, True)  # no project yet: on Projects…
    go(page, "files")
    page.wait_for_selector("#main .surface[data-surface='files']")
    _guide_here(page, True)  # …and on every surface, each of which asks for a project first
    go(page, "projects")
    page.fill("#new-project-name", "First")
    page.click("#create-project")  # this opens it, on Files
    page.wait_for_function("() => voicebox.app.project?.name === 'First'")
    page.wait_for_selector("#main .surface[data-surface='files']")
    _guide_here(page, False)  # a project exists: not above the files a person works on
    go(page, "blocks")
    _guide_here(page, False)
    go(page, "projects")
    _guide_here(page, True)  # still where a person starts, until closed
    host.reload()
    _guide_here(page, True)
    go(page, "compose")
    _guide_here(page, False)
    # Help brings it back on the surface it was asked on; moving on leaves it behind
    page.keyboard.press("F1")
    page.wait_for_selector("#help-dialog[open]")
    page.click("#guide-reopen")
    _guide_here(page, True)
    go(page, "blocks")
    _guide_here(page, False)
    go(page, "projects")
    page.click("#guide-close")
    _guide_here(page, False)
    host.assert_clean()


FORM_TOPS = """() => {
  if (window.top !== window) return;
  window.__formTops = [];
  const watch = () => {
    const field = document.getElementById('new-project-name');
    const guide = document.getElementById('guide');
    if (field) {
      const seen = [Math.round(field.getBoundingClientRect().top), !guide.hidden];
      const last = window.__formTops.at(-1);
      if (!last || last[0] !== seen[0] || last[1] !== seen[1]) window.__formTops.push(seen);
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}"""
"""Each place (px from the window's top) the Projects form's name field was drawn at, frame by
frame from the document's start, with whether the guide was shown then."""


def test_the_getting_started_guide_comes_below_the_projects_form_and_moves_nothing(
    host: HostPage,
) -> None:
    """Stop 45's tryout: the guide (the late operation help.guide's answer) came a moment
    after Ready, above the surface, and pushed the Projects form down. The first draw does
    not wait for it (that held Ready for seconds in a cold boot); it comes below the surface,
    and the form stays where it was drawn."""
    page = host.page
    page.add_init_script(f"({FORM_TOPS})()")
    host.reload()
    _guide_here(page, True)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    seen = page.evaluate("() => window.__formTops")
    assert seen[-1][1], seen  # the guide came
    assert len({top for top, _ in seen}) == 1, seen  # the form was never moved
    _above(page, "#new-project-name", "#guide")
    shot(page, "guide-below-projects")
    host.assert_clean()


def _in_view(page: Page, selector: str, height: int) -> dict[str, float]:
    box = _box(page, selector)
    assert box["y"] >= -1 and box["y"] + box["height"] <= height + 1, (selector, box, height)
    return box


def test_the_run_output_is_in_view_after_run_wide_and_narrow(host: HostPage) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "py"}, human=True)["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "hello.py"}, body=HELLO, human=True)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        open_in_ui(host, pid, "files")
        open_file(page, "hello.py")
        wait_editor(page)
        page.wait_for_selector("#python-run")
        page.evaluate("() => window.scrollTo(0, 0)")
        page.locator("#python-run").scroll_into_view_if_needed()  # no-op at 1280×800
        run = _in_view(page, "#python-run", height)
        below = _box(page, "#python-output")
        assert below["y"] + below["height"] > height, below  # before Run: below the fold
        page.click("#python-run")
        page.wait_for_function(
            "() => document.getElementById('python-output').textContent.includes('line 2')"
            " && !document.getElementById('python-run').disabled",
            timeout=120_000,
        )
        _in_view(page, "#python-output", height)  # the output in sight after Run
        # and the name of the file that ran (stop 44's tryout: Run's row went to the top and
        # scrolled the name away; stop 45's: at 390 px the output scrolled it away)
        _in_view(page, "#viewer-path", height)
        if width == 1280:
            # the output docks at the window's foot; Run's row at the top, and the code's
            # lines between them (the second tryout: the docked output hid every line)
            run = _in_view(page, "#python-run", height)
            panel = _box(page, "#python-panel")
            assert run["y"] + run["height"] <= panel["y"], (run, panel)
            seen, lines = page.evaluate(
                """(foot) => {
                  const lines = [...document.querySelector('#editor').shadowRoot
                    .querySelectorAll('.cm-line')];
                  const seen = lines.filter((line) => {
                    const box = line.getBoundingClientRect();
                    return box.top >= 0 && box.bottom <= foot;
                  });
                  return [seen.length, lines.length];
                }""",
                panel["y"],
            )
            assert lines >= 2 and seen == lines, (seen, lines)  # every line of hello.py
            shot(page, "python-run-docked")
        else:
            shot(page, "python-run-narrow")
    host.assert_clean()


def _delete_asks(page: Page, name: str, screenshot: str | None = None) -> str:
    """Click Delete on project ``name``'s row; return the confirmation's text, then Cancel."""
    page.click(f"[aria-label='Delete project {name}']")
    page.wait_for_selector("dialog[open] .dialog-confirm")
    text = page.inner_text("dialog[open]")
    if screenshot:
        shot(page, screenshot)
    page.click("dialog[open] .dialog-cancel")
    page.wait_for_selector("dialog[open]", state="detached")
    return text


def test_deleting_a_project_says_another_tab_has_unsaved_changes_in_it(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Shared"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "todo.txt"}, b"old\n", human=True)
    page = first.page
    go(page, "projects")
    page.wait_for_selector("[aria-label='Delete project Shared']")
    said = "Another tab has unsaved changes in this project"
    assert said not in _delete_asks(page, "Shared")  # nothing unsaved anywhere yet
    open_in_ui(second, pid)
    open_file(second.page, "todo.txt")
    wait_editor(second.page)
    set_editor_text(second.page, "new words\n")
    second.page.wait_for_function("() => voicebox.app.unsavedSaid.endsWith('todo.txt')")
    text = _delete_asks(page, "Shared", "delete-project-unsaved-elsewhere")
    assert said in text and "todo.txt" in text, text
    # the tab holding the text is not warned of its own edits
    go(second.page, "projects")  # asks: Save, Discard or Cancel
    second.page.wait_for_selector("#unsaved-dialog[open]")
    second.page.click("#unsaved-dialog .dialog-cancel")
    second.page.wait_for_selector("#unsaved-dialog", state="detached")
    assert (
        first.ok("project.unsaved_elsewhere", {"project": pid, "page": _page_id(second)})["result"][
            "tabs"
        ]
        == 0
    )
    # saved there: nothing left to warn of
    second.page.click("#save-file")
    second.page.wait_for_function("() => voicebox.app.unsavedSaid === ''")
    assert said not in _delete_asks(page, "Shared")
    # unsaved again, then that tab closes: the host forgets it when its life lock goes
    set_editor_text(second.page, "newer words\n")
    second.page.wait_for_function("() => voicebox.app.unsavedSaid.endsWith('todo.txt')")
    asked = {"project": pid, "page": _page_id(first)}
    assert first.ok("project.unsaved_elsewhere", asked)["result"]["tabs"] == 1
    second.page.close(run_before_unload=False)
    deadline = time.monotonic() + 10
    while first.ok("project.unsaved_elsewhere", asked)["result"]["tabs"] != 0:
        assert time.monotonic() < deadline, "the closed tab's unsaved text was not forgotten"
        page.wait_for_timeout(100)
    assert said not in _delete_asks(page, "Shared")
    first.assert_clean()


def _page_id(host: HostPage) -> str:
    return host.page.evaluate("() => voicebox.host.pageId")
