"""A fresh tester's leftovers after stop 41 (issue 34, closing41 "Left"), through the real page
at 1280×800: a refused project name is said under its field, as it is typed, by core's own
rule; a long project name never widens the projects table; an open Missions tray with no
project gives the width back to the main surface, and with a project it has one width, so a
mission arriving moves nothing (stop 44); a run that waits in input() still says it saved the file first;
a run in a 2,000-file project gets every file (the copy-in reads them in one batch).
axe-core finds nothing serious on what changed."""

from __future__ import annotations

import hashlib

from core.paths import MAX_NAME_CHARS, check_project_name
from core.refusals import Refused
from e2e.files_kit import open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import Missions, axe_serious, expand_tray, go, new_project, open_in_ui, shot

RUNTIME_BOOT_MS = 120_000
WIDTH = 1280
EMPTY_TRAY_MOST = 0.2 * WIDTH
"""An open tray with no project takes at most a fifth of the width (it took 380 px, 30 %)."""


def _host_sentence(name: str) -> str:
    try:
        check_project_name(name)
    except Refused as refused:
        return refused.message
    raise AssertionError(f"{name!r} is a name the host admits")


def _projects(host: HostPage) -> list[str]:
    return [p["name"] for p in host.ok("project.list")["result"]["projects"]]


def test_a_refused_project_name_is_said_under_its_field_as_it_is_typed(host: HostPage) -> None:
    page = host.page
    page.set_viewport_size({"width": WIDTH, "height": 800})
    field, rule = "#new-project-name", "#new-project-name-rule"
    described = page.get_attribute(field, "aria-describedby") or ""
    assert "new-project-name-rule" in described.split()
    # as it is typed: core's own sentence under the field, the field marked invalid
    page.type(field, "plans/2027")
    page.wait_for_function(
        "(s) => document.querySelector('#new-project-name-rule').textContent === s",
        arg=_host_sentence("plans/2027"),
    )
    assert page.get_attribute(field, "aria-invalid") == "true"
    page.fill(field, "")
    page.type(field, " plans")
    assert page.text_content(rule) == _host_sentence(" plans")
    page.fill(field, "")
    page.type(field, "a\\b")
    assert page.text_content(rule) == _host_sentence("a\\b")
    # the sentence sits right under the field, not in the messages far above it
    box, said = page.locator(field).bounding_box(), page.locator(rule).bounding_box()
    assert box is not None and said is not None
    assert 0 <= said["y"] - (box["y"] + box["height"]) < 40, (box, said)
    assert axe_serious(page, "a project name refused as typed") == []
    shot(page, "project-name-refused-as-typed")
    page.click("#create-project")  # the page does not send what it already knows is refused
    assert _projects(host) == []
    # a bidirectional control, which the field does not show: said as it is typed (stop 42)
    page.fill(field, "")
    page.type(field, "mixed\u202ename")
    assert page.text_content(rule) == _host_sentence("mixed\u202ename")
    # a rule only the host checks (NFC): its refusal lands under the field too, with its
    # code, and the field takes the focus; the messages region stays empty
    page.fill(field, "cafe\u0301")
    page.click("#create-project")
    page.wait_for_selector(f"{rule} .refusal-code:text-is('name-invalid')")
    assert page.text_content(f"{rule} .refusal-message") == _host_sentence("cafe\u0301")
    assert page.get_attribute(field, "aria-invalid") == "true"
    assert page.evaluate("() => document.activeElement.id") == "new-project-name"
    assert page.text_content("#alerts") == ""
    # a good name clears it and is created
    page.fill(field, "")
    page.type(field, "plans 2027")
    assert page.text_content(rule) == ""
    assert page.get_attribute(field, "aria-invalid") is None
    page.click("#create-project")
    page.wait_for_function("() => voicebox.app.project?.name === 'plans 2027'")
    # the rename dialog checks the same rule as the name is typed, and sends no broken name
    go(page, "projects")
    page.click("button[aria-label='Rename project plans 2027']")
    page.keyboard.type("plans/2028")  # over the selected old name
    problem = page.locator("dialog[open] .dialog-problem")
    assert problem.text_content() == _host_sentence("plans/2028")
    page.keyboard.press("Enter")
    assert problem.text_content() == _host_sentence("plans/2028")
    assert _projects(host) == ["plans 2027"]
    page.fill("dialog[open] input", "plans 2028")
    assert problem.text_content() == ""
    page.keyboard.press("Enter")
    page.wait_for_selector("dialog[open]", state="detached")
    assert _projects(host) == ["plans 2028"]
    host.assert_clean()


def test_a_long_project_name_never_widens_the_projects_table(host: HostPage) -> None:
    page = host.page
    page.set_viewport_size({"width": WIDTH, "height": 800})
    unbroken = "x" * MAX_NAME_CHARS
    spaced = ("Quarterly plans " * 13)[: MAX_NAME_CHARS - 1] + "z"
    for name in ("Short", unbroken, spaced):
        host.ok("project.create", {"name": name}, human=True)
    host.reload()
    page.wait_for_selector("#project-table tbody tr >> nth=2")
    table = page.locator("#project-table").bounding_box()
    assert table is not None and table["x"] + table["width"] <= WIDTH
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    heights = []
    for name in ("Short", unbroken, spaced):
        row = page.locator("#project-table tbody tr", has=page.locator(f"[title='{name}']"))
        button = row.locator(".project-open")
        assert button.get_attribute("title") == name  # the full name, on hover and focus
        assert button.text_content() == name  # and to a screen reader
        box = row.bounding_box()
        assert box is not None
        heights.append(round(box["height"]))
    assert heights[1] == heights[0] and heights[2] == heights[0], heights  # one line each
    assert axe_serious(page, "long project names") == []
    host.assert_clean()


def test_an_open_tray_without_a_project_is_narrow_and_a_mission_arriving_moves_nothing(
    host: HostPage,
) -> None:
    page = host.page
    page.set_viewport_size({"width": WIDTH, "height": 800})
    expand_tray(page)

    def tray_width() -> float:
        box = page.locator("#tray").bounding_box()
        assert box is not None
        return box["width"]

    def main_right() -> float:
        box = page.locator("main").bounding_box()
        assert box is not None
        return box["x"] + box["width"]

    assert tray_width() <= EMPTY_TRAY_MOST  # no project open
    assert main_right() <= WIDTH - tray_width()  # the tray covers nothing of the surface
    assert page.get_attribute("#tray-toggle", "aria-expanded") == "true"
    pid, (block,) = new_project(host, "Quiet", [("api", "the API")])
    open_in_ui(host, pid, "files")
    page.wait_for_selector("#tray-empty")
    # a project with no mission yet: the tray has the width its cards will have
    width, right = tray_width(), main_right()
    assert width > 300 and right <= WIDTH - width
    assert page.locator("#tray-empty button").is_visible()
    assert axe_serious(page, "the empty tray") == []
    shot(page, "tray-empty-1280")
    # a mission arrives, with a long unbroken word in its verdict: nothing moves
    verdict = {"decision": "CHANGE", "gist": "x" * 200}
    Missions(host, pid, "Quiet", block).post("msn_0000000000a1", "judging", verdict=verdict)
    page.evaluate("() => voicebox.app.tray.refresh({ force: true })")
    page.wait_for_selector("#tray-cards article .card-verdict")
    assert (tray_width(), main_right()) == (width, right)
    card = page.locator("#tray-cards article").bounding_box()
    assert card is not None and card["x"] + card["width"] <= WIDTH  # the long word wraps
    shot(page, "tray-first-mission-1280")
    host.assert_clean()


def test_a_run_waiting_in_input_still_says_it_saved_the_file_first(host: HostPage) -> None:
    page = host.page
    page.set_viewport_size({"width": WIDTH, "height": 800})
    pid = host.ok("project.create", {"name": "ask"}, human=True)["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "t.py"}, body=b"print('old')\n", human=True)
    open_in_ui(host, pid, "files")
    page.wait_for_selector("#file-tree .tree-item")
    open_file(page, "t.py")
    wait_editor(page)
    set_editor_text(page, "who = input('who? ')\nprint('hello', who)\n")
    page.wait_for_selector("#save-state:text-is('Unsaved changes')")
    page.click("#python-run")
    page.wait_for_selector("#python-stdin", timeout=RUNTIME_BOOT_MS)
    status = page.text_content("#python-status") or ""
    assert status.startswith("Saved t.py first. "), status
    assert "waits for your input" in status
    page.fill("#python-stdin", "Ann")
    page.press("#python-stdin", "Enter")
    page.wait_for_function(
        "() => /^Saved t\\.py first\\. Exited with status 0/"
        ".test(document.getElementById('python-status').textContent)",
        timeout=RUNTIME_BOOT_MS,
    )
    assert "hello Ann" in (page.text_content("#python-output") or "")
    host.assert_clean()


def test_a_run_in_a_2000_file_project_is_given_every_file(host: HostPage) -> None:
    """The copy-in reads the run's inputs in one batch (core.host.python_ops._copy_in over the
    browser's read_many); the runtime still gets every file's exact bytes."""
    page = host.page
    pid = host.ok("project.create", {"name": "many"}, human=True)["result"]["project"]["id"]
    files = {f"d{i // 100:02}/f{i:04}.txt": f"line {i}\n".encode() for i in range(1999)}
    items = list(files.items())
    for start in range(0, len(items), 200):
        batch = items[start : start + 200]
        host.ok(
            "file.write_batch",
            {"project": pid, "files": [{"path": p, "size": len(b)} for p, b in batch]},
            body=b"".join(b for _, b in batch),
            human=True,
        )
    script = (
        "import hashlib, os\n"
        "paths = sorted(os.path.join(t, n)[2:] for t, _, ns in os.walk('.') for n in ns)\n"
        "h = hashlib.sha256()\n"
        "for p in paths:\n"
        "    if p != 't.py':\n"
        "        h.update(p.encode() + open(p, 'rb').read())\n"
        "print('copied', len(paths), h.hexdigest())\n"
    )
    host.ok("file.write", {"project": pid, "path": "t.py"}, body=script.encode(), human=True)
    expected = hashlib.sha256(b"".join(p.encode() + b for p, b in sorted(files.items())))
    open_in_ui(host, pid, "files")
    page.wait_for_selector("#file-tree .tree-item")
    open_file(page, "t.py")
    wait_editor(page)
    page.click("#python-run")
    page.wait_for_function(
        "() => /^Exited with status 0/.test(document.getElementById('python-status').textContent)",
        timeout=RUNTIME_BOOT_MS,
    )
    assert f"copied {len(files) + 1} {expected.hexdigest()}" in (
        page.text_content("#python-output") or ""
    )
    host.assert_clean()


def test_a_second_run_while_the_first_saves_is_not_a_second_run(host: HostPage) -> None:
    """The fresh tester's tryout (stop 42): Ctrl+Enter with unsaved edits, then Run while that
    save was under way, started a second run: it cleared the first run's output and was
    refused ('already running'), and the first run's output was never shown. A Run during the
    save is the same run: one output, no refusal."""
    page = host.page
    page.set_viewport_size({"width": WIDTH, "height": 800})
    pid = host.ok("project.create", {"name": "twice"}, human=True)["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "t.py"}, body=b"print('old')\n", human=True)
    open_in_ui(host, pid, "files")
    page.wait_for_selector("#file-tree .tree-item")
    open_file(page, "t.py")
    wait_editor(page)
    set_editor_text(page, "print('first run')\n")
    page.wait_for_selector("#save-state:text-is('Unsaved changes')")
    # in one task, as a quick person's would land during the save: Run (Ctrl+Enter's path),
    # new words typed, Run again (the button forced on: Ctrl+Enter does not ask the button)
    page.evaluate(
        """() => {
          const run = document.getElementById('python-run');
          const view = voicebox.app.filesView.editor.view;
          run.click();
          view.dispatch({ changes: { from: 0, to: view.state.doc.length,
                                     insert: "print('second')\\n" } });
          run.disabled = false;
          run.click();
        }"""
    )
    page.wait_for_function(
        "() => /Exited with status 0/.test(document.getElementById('python-status').textContent)",
        timeout=RUNTIME_BOOT_MS,
    )
    assert "first run" in (page.text_content("#python-output") or "")  # what was saved ran
    status = page.text_content("#python-status") or ""
    assert status.startswith("Saved t.py first. "), status
    assert page.locator("#alerts .alert-error").count() == 0  # no 'already running'
    assert page.text_content("#save-state") == "Unsaved changes"  # the words typed since
    host.assert_clean()
