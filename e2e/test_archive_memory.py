"""An exported project keeps its memory (issue 33 item 3), through the real page: a project
with a block and a mission letter is exported from the Projects surface, imported again after
the preview (name from the manifest, counts, size, what will be created), and a name another
project has asks for another; the imported project's tray shows the mission."""

from __future__ import annotations

from pathlib import Path

from e2e.hostpage import HostPage
from e2e.tray_kit import axe_serious, card, expand_tray, go, letter, new_project, shot

MISSION = "msn_00000000a3c7"
BRAIN = "Remembered B1"


def _project_with_memory(host: HostPage) -> str:
    pid, (block,) = new_project(host, BRAIN, [("Receipt importer", "Imports receipts.")])
    host.ok("file.write", {"project": pid, "path": "src/app.py"}, b"print('hi')\n")
    first = letter(mission=MISSION, block=block, brain=BRAIN)
    host.ok("mission.post", {"project": pid, "agent_id": "hand-7", "letter": first})
    return pid


def _export_from_the_page(host: HostPage, tmp_path: Path) -> Path:
    page = host.page
    go(page, "projects")
    with page.expect_download() as download_info:
        page.click(f"button[aria-label='Export .zip of project {BRAIN}']")
    path = tmp_path / "remembered.zip"
    download_info.value.save_as(path)
    page.locator("#alerts .alert-info", has_text="With its memory: 1 block, 1 letter.").wait_for()
    return path


def _names(host: HostPage) -> list[str]:
    return sorted(p["name"] for p in host.ok("project.list")["result"]["projects"])


def test_an_exported_project_is_imported_again_with_its_blocks_and_letters_after_the_preview(
    host: HostPage, tmp_path: Path
) -> None:
    pid = _project_with_memory(host)
    page = host.page
    host.page.evaluate("() => voicebox.app.refresh()")
    archive = _export_from_the_page(host, tmp_path)

    # the preview: the manifest's name (taken here), counts, size, what will be created
    page.set_input_files("#import-archive", str(archive))
    preview = page.locator("dialog#import-preview[open]")
    preview.wait_for()
    text = preview.inner_text()
    assert f"{BRAIN} — another project already has this name" in text
    assert "1 file, 1 folder" in text
    assert "1 block (0 green), 1 letter in 1 mission" in text
    assert "remembered.zip, " in text
    assert "Its memory: a block store of 1 block (0 green) and a mailbox of 1 letter" in text
    # one true thing about the name (issue 34): it is taken, so the import asks for another
    assert f"A new project “{BRAIN}”" not in text
    assert f"A new project, under a name you choose next (“{BRAIN}” is taken)" in text
    # the preview is text: nothing from the archive became markup
    assert preview.locator(".import-creates li").count() == 3
    assert _names(host) == [BRAIN]  # nothing was created by looking
    shot(page, "import-preview")
    assert axe_serious(page, "the import preview") == []

    # a name clash asks: the taken name is refused in the dialog, which keeps what was typed
    preview.locator("button.dialog-confirm", has_text="Choose another name…").click()
    ask = page.locator("dialog[open]", has_text=f"A project is already called “{BRAIN}”")
    ask.wait_for()
    field = ask.locator("input")
    assert field.input_value() == f"{BRAIN} (2)"
    field.fill(BRAIN)
    ask.locator("button.primary", has_text="Import").click()
    ask.locator(".dialog-problem", has_text="already has this name").wait_for()
    assert field.input_value() == BRAIN and _names(host) == [BRAIN]
    field.fill("Copy of B1")
    ask.locator("button.primary", has_text="Import").click()
    ask.wait_for(state="detached")
    page.locator("#alerts .alert-info", has_text="into “Copy of B1”. With its memory").wait_for()
    # one file is "1 file", never "1 files"
    page.locator("#alerts .alert-info", has_text="Imported 1 file (").wait_for()
    assert _names(host) == ["Copy of B1", BRAIN]

    # the copy has the block store and the letter; its tray shows the mission
    copy = next(
        p["id"] for p in host.ok("project.list")["result"]["projects"] if p["name"] == "Copy of B1"
    )
    assert copy != pid
    blocks = host.ok("blocks.get", {"project": copy})["result"]["store"]["blocks"]
    assert [b["name"] for b in blocks] == ["Receipt importer"]
    (head,) = host.ok("mailbox.read", {"project": copy, "kind": "mission"})["result"]["heads"]
    assert head["mission_id"] == MISSION and head["letter"]["phase"] == "judging"
    page.click("#project-table button.project-open:text-is('Copy of B1')")
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=copy)
    expand_tray(page)
    page.locator(card(page, MISSION)).wait_for()
    host.assert_clean()


def test_cancelling_the_preview_creates_nothing(host: HostPage, tmp_path: Path) -> None:
    _project_with_memory(host)
    host.page.evaluate("() => voicebox.app.refresh()")
    archive = _export_from_the_page(host, tmp_path)
    page = host.page
    page.set_input_files("#import-archive", str(archive))
    preview = page.locator("dialog#import-preview[open]")
    preview.wait_for()
    preview.locator("button.dialog-cancel").click()
    page.locator("#alerts .alert-info", has_text="cancelled; nothing was created").wait_for()
    assert _names(host) == [BRAIN]
    host.assert_clean()
