"""Plugins through the real UI in headless Chromium (issue 16): install both example plugins
from a file on the Plugins surface (shown first with every operation and capability reason),
admit them, grant files to the writer, run both from the Tools surface, see the host's receipt
of the write, withdraw and see the refusal; a hostile package is refused with its code while
the page and the host keep answering; a hostile plugin's call (a loop, memory past its cap, an
HTTP request, a refused import, an output claiming a receipt) — installed, admitted and run by
clicking — is stopped or refused by code in the page's real sandbox frame, the code shown in
the page, and the page and the host keep answering; a plugin installs from its folder. Issue 29:
other bytes under an admitted release label are another release (the dialog says an admitted
release is replaced; nothing admitted or granted after; the person's file untouched); a
withdrawal survives a reload of the page; a package naming a host operation is refused; the
Tools surface shows a plugin operation's origin beside its name."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Page

from e2e.hostpage import HostPage
from wasm_tools.build import build_test_packages


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The hostile packages built from wasm_tools/testdata/packages (never shipped)."""
    return build_test_packages(tmp_path_factory.mktemp("hostile"))


def _install(page: Page, package: Path, plugin: str, *, reads: bool = True) -> None:
    page.set_input_files("#plugin-file", str(package))
    page.wait_for_selector("#plugin-install-dialog[open]")
    shown = page.text_content("#plugin-install-operations") or ""
    assert ("Reads the" in shown) == reads
    assert "internal-read" in shown or "local-write" in shown
    page.click("#plugin-install-dialog .dialog-confirm")
    page.wait_for_selector(f"article[data-plugin='{plugin}']")


def _install_folder(page: Page, folder: Path, plugin: str) -> None:
    page.set_input_files("#plugin-folder", str(folder))
    page.wait_for_selector("#plugin-install-dialog[open]")
    listed = page.text_content("#plugin-install-files") or ""
    assert all(f"{folder.name}/{p.name}" in listed for p in folder.iterdir())
    page.click("#plugin-install-dialog .dialog-confirm")
    page.wait_for_selector(f"article[data-plugin='{plugin}']")


def _admit(page: Page, plugin: str, *, files: bool) -> None:
    card = f"article[data-plugin='{plugin}']"
    page.click(f"{card} button[data-act='admit']")
    page.wait_for_selector(f"{card} .plugin-state[data-admitted='true']")
    if files:
        page.click(f"{card} button[data-act='files']")
        page.wait_for_selector(f"{card} .plugin-state[data-files='true']")


def _run(page: Page, tool: str, fields: dict[str, str]) -> None:
    page.click("nav >> text=Tools")
    page.click(f"button[aria-label='Run {tool}']")
    for name, value in fields.items():
        page.fill(f"#tool-arg-{name}", value)
    page.click("#run-tool")


def test_install_admit_grant_run_and_withdraw_through_the_ui(host: HostPage, dist: Path) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Notes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "notes/a.md"}, b"# Plan\n\none  two\r\n\r\n\r\n")
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    page.click("#surfaces button[data-surface='plugins']")
    examples = dist / "plugins" / "examples"
    _install(page, examples / "textstats-1.0.0.zip", "textstats")
    _install(page, examples / "tidy-1.0.0.zip", "tidy")
    _admit(page, "textstats", files=True)
    _admit(page, "tidy", files=True)

    _run(page, "textstats.count", {"path": "notes/a.md"})
    page.wait_for_selector("#tool-result-view")  # human form; the JSON behind Details
    assert '"words": 4' in (page.text_content("#tool-result") or "")

    _run(page, "tidy.text", {"path": "notes/a.md", "target": "notes/b.md"})
    page.wait_for_selector("#tool-confirm-dialog[open]")
    assert '"target": "notes/b.md"' in (page.text_content("#tool-confirm-args") or "")
    page.click("#tool-confirm-dialog .dialog-confirm")
    page.wait_for_selector("#tool-receipt")
    written = host.ok("file.read", {"project": pid, "path": "notes/b.md"})["body"]
    assert written == b"# Plan\n\none  two\n"
    receipt = page.text_content("#tool-receipt") or ""
    assert "local-write" in receipt and hashlib.sha256(written).hexdigest() in receipt

    page.click("#surfaces button[data-surface='plugins']")
    page.click("article[data-plugin='textstats'] button[data-act='withdraw']")
    page.click("dialog[open] .dialog-confirm")
    page.wait_for_selector("article[data-plugin='textstats'] .badge")
    _run(page, "textstats.count", {"path": "notes/a.md"})
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == "plugin-withdrawn"
    records = host.ok("audit.list", {"limit": 200})["result"]["records"]
    ops = {r["op"] for r in records}
    assert {"plugin.install", "plugin.grant", "plugin.withdraw", "tool.call"} <= ops
    host.assert_clean()


def test_a_plugin_installs_from_its_folder_through_the_ui(
    host: HostPage, dist: Path, tmp_path: Path
) -> None:
    page = host.page
    folder = tmp_path / "textstats"
    with zipfile.ZipFile(dist / "plugins" / "examples" / "textstats-1.0.0.zip") as archive:
        archive.extractall(folder)
    pid = host.ok("project.create", {"name": "Notes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "a.md"}, b"one two three\n")
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    page.click("#surfaces button[data-surface='plugins']")
    _install_folder(page, folder, "textstats")
    (installed,) = host.ok("plugin.list")["result"]["plugins"]
    manifest = (folder / "voicebox-plugin.json").read_bytes()
    assert installed["manifestSha256"] == hashlib.sha256(manifest).hexdigest()
    _admit(page, "textstats", files=True)
    _run(page, "textstats.count", {"path": "a.md"})
    page.wait_for_selector("#tool-result-view")  # human form; the JSON behind Details
    assert '"words": 3' in (page.text_content("#tool-result") or "")
    host.assert_clean()


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("bad-pin", "plugin-pin-mismatch"),
        ("unknown-field", "registration-invalid"),
        ("builtin-name", "registration-conflict"),
        ("host-name", "registration-conflict"),
    ],
)
def test_a_hostile_package_is_refused_with_its_code_and_the_host_keeps_answering(
    host: HostPage, hostile: dict[str, Path], name: str, code: str
) -> None:
    page = host.page
    page.click("#surfaces button[data-surface='plugins']")
    page.set_input_files("#plugin-file", str(hostile[name]))
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == code
    assert page.query_selector("#plugin-install-dialog") is None
    assert host.ok("plugin.list")["result"]["plugins"] == []
    assert host.ok("host.info")["ok"]


@pytest.mark.parametrize(
    ("name", "tool", "code"),
    [
        ("loop", "loop.spin", "tool-timeout"),
        ("hog", "hog.grow", "tool-memory-exceeded"),
        ("http", "http.get", "network-egress-refused"),
        ("needs-import", "needsimport.run", "tool-output-invalid"),
        ("forge", "forge.receipt", "receipt-forgery-refused"),
    ],
)
def test_a_hostile_plugin_call_is_stopped_in_the_real_sandbox_and_the_host_keeps_answering(
    host: HostPage, hostile: dict[str, Path], name: str, tool: str, code: str
) -> None:
    page = host.page
    pid = host.ok("project.create", {"name": "Hostile"})["result"]["project"]["id"]
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    page.click("#surfaces button[data-surface='plugins']")
    _install(page, hostile[name], name, reads=False)
    _admit(page, name, files=False)
    _run(page, tool, {})
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == code
    assert page.query_selector("#tool-receipt") is None
    # the page and the host keep answering: a second, normal action through the page
    page.click("#surfaces button[data-surface='plugins']")
    page.wait_for_selector(f"article[data-plugin='{name}'] .plugin-state[data-admitted='true']")
    assert host.ok("host.info")["ok"]
    assert host.ok("file.list", {"project": pid})["result"]["entries"] == []
    records = host.ok("audit.list", {"limit": 200})["result"]["records"]
    assert any(r["op"] == "tool.call" and r["rule"] == code for r in records), records[-3:]


def _notes(host: HostPage) -> str:
    """A project with a file to tidy and the person's own notes/b.md, open in the page."""
    page = host.page
    pid = host.ok("project.create", {"name": "Notes"})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "notes/a.md"}, b"x  \n")
    host.ok("file.write", {"project": pid, "path": "notes/b.md"}, b"the person's own file\n")
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    return pid


def _refused_as(page: Page, tool: str, code: str) -> None:
    """Run ``tool`` on notes/a.md → notes/b.md from the Tools surface; confirm if asked; the
    page shows ``code``."""
    _run(page, tool, {"path": "notes/a.md", "target": "notes/b.md"})
    page.wait_for_selector("#tool-confirm-dialog[open], .alert-error .refusal-code")
    if page.query_selector("#tool-confirm-dialog[open]"):
        page.click("#tool-confirm-dialog .dialog-confirm")
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == code
    assert page.query_selector("#tool-receipt") is None


def test_other_bytes_under_an_admitted_release_label_need_a_new_admission_through_the_ui(
    host: HostPage, dist: Path, tmp_path: Path
) -> None:
    """Issue 29 item 1: the same id and release, ``confirm`` switched off — the dialog says it
    replaces an admitted release; afterwards nothing is admitted or granted, the call is
    refused, and the person's file is untouched."""
    page = host.page
    pid = _notes(host)
    page.click("#surfaces button[data-surface='plugins']")
    original = dist / "plugins" / "examples" / "tidy-1.0.0.zip"
    _install(page, original, "tidy")
    _admit(page, "tidy", files=True)
    twin = tmp_path / "tidy-1.0.0.zip"
    with zipfile.ZipFile(original) as source, zipfile.ZipFile(twin, "w") as out:
        manifest = json.loads(source.read("voicebox-plugin.json"))
        manifest["operations"][0]["confirm"] = False
        out.writestr("voicebox-plugin.json", json.dumps(manifest))
        out.writestr("tidy.wasm", source.read("tidy.wasm"))
    page.set_input_files("#plugin-file", str(twin))
    page.wait_for_selector("#plugin-install-dialog[open]")
    note = page.wait_for_selector("#plugin-install-replaces")
    assert note.get_attribute("data-replaces") == "admitted"
    said = note.text_content() or ""
    assert "replaces the installed release 1.0.0" in said and "admitted and granted files" in said
    assert "no admission or files grant carries over" in said
    page.click("#plugin-install-dialog .dialog-confirm")
    card = "article[data-plugin='tidy']"
    page.wait_for_selector(f"{card} .plugin-state[data-admitted='false'][data-files='false']")
    _refused_as(page, "tidy.text", "plugin-not-admitted")
    assert host.ok("file.read", {"project": pid, "path": "notes/b.md"})["body"] == (
        b"the person's own file\n"
    )
    host.assert_clean()


def test_a_withdrawal_survives_a_reload_of_the_page(host: HostPage, dist: Path) -> None:
    """Issue 29 item 2: withdraw, reload the page; the operation is refused plugin-withdrawn
    and the file is untouched. Issue 29 item 3: the Tools surface shows the plugin's origin
    beside its operation's name."""
    page = host.page
    pid = _notes(host)
    page.click("#surfaces button[data-surface='plugins']")
    _install(page, dist / "plugins" / "examples" / "tidy-1.0.0.zip", "tidy")
    _admit(page, "tidy", files=True)
    page.click("nav >> text=Tools")
    origin = page.wait_for_selector("#tool-table tr[data-tool='tidy.text'] [data-origin]")
    assert origin.text_content() == "plugin:tidy"
    page.click("#surfaces button[data-surface='plugins']")
    page.click("article[data-plugin='tidy'] button[data-act='withdraw']")
    page.click("dialog[open] .dialog-confirm")
    page.wait_for_selector("article[data-plugin='tidy'] .plugin-state[data-withdrawn='true']")
    host.reload()
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    page.click("#surfaces button[data-surface='plugins']")
    page.wait_for_selector("article[data-plugin='tidy'] .plugin-state[data-withdrawn='true']")
    _refused_as(page, "tidy.text", "plugin-withdrawn")
    assert host.ok("file.read", {"project": pid, "path": "notes/b.md"})["body"] == (
        b"the person's own file\n"
    )
    host.assert_clean()


def test_a_plugin_output_nesting_deep_is_refused_four_times_and_the_host_never_goes_down(
    host: HostPage, hostile: dict[str, Path]
) -> None:
    """Issue 29 item 5: an admitted plugin's read whose output nests 100,000 arrays used to
    overflow the Wasm stack at ``json.loads`` and take the host down; through the one bounded
    parser it is ``tool-output-invalid``, four times in a row, and ``host.info`` answers after
    each from the same worker (the page's client never saw it stop: ``lastLoss`` stays null)."""
    page = host.page
    lost = "() => [voicebox.app.host.state, voicebox.app.host.lastLoss]"
    pid = host.ok("project.create", {"name": "Deep"})["result"]["project"]["id"]
    page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    page.click("#surfaces button[data-surface='plugins']")
    _install(page, hostile["deep"], "deep", reads=False)
    _admit(page, "deep", files=False)
    for _ in range(4):
        page.evaluate("() => document.querySelector('.alert-error')?.remove()")
        _run(page, "deep.nest", {})
        page.wait_for_selector(".alert-error .refusal-code")
        assert page.text_content(".alert-error .refusal-code") == "tool-output-invalid"
        assert "deeper than 200 levels" in (page.text_content(".alert-error") or "")
        assert host.ok("host.info")["ok"]
        assert page.evaluate(lost) == ["ready", None]
    records = host.ok("audit.list", {"limit": 200})["result"]["records"]
    refused = [r for r in records if r["op"] == "tool.call" and r["rule"] == "tool-output-invalid"]
    assert len(refused) == 4, records[-5:]
