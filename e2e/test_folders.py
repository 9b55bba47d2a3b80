"""Projects in a folder the user picks (issue 8; SPEC §3).

``showDirectoryPicker`` cannot be driven in headless Chromium, so the page's is replaced by a
function returning a REAL directory handle: an OPFS subfolder the test fills with a real source
tree. Permission methods are replaced per step — ``requestPermission`` in the page (the
person's answer) and ``queryPermission`` in the host worker (the browser's current state).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from playwright.sync_api import BrowserContext, Page, Playwright

from e2e.conftest import launch_persistent
from e2e.files_kit import open_file, open_folder, set_editor_text
from e2e.hostpage import HostPage
from e2e.site import SiteRouter

PICKED = "picked-src"

PICKER_STUB = (
    "window.showDirectoryPicker = async () =>"
    f" (await navigator.storage.getDirectory()).getDirectoryHandle('{PICKED}', {{ create: true }});"
    " FileSystemHandle.prototype.requestPermission = async function () {"
    " return window.__personSays ?? 'granted'; };"
)

WRITE_FILE = """
async ([root, path, b64]) => {
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(root, { create: true });
  const parts = path.split("/");
  for (const p of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(p, { create: true });
  const fh = await dir.getFileHandle(parts.at(-1), { create: true });
  const w = await fh.createWritable();
  await w.write(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  await w.close();
}
"""

LIST_TREE = """
async (root) => {
  const out = {};
  async function walk(dir, prefix) {
    for await (const [name, h] of dir.entries()) {
      if (h.kind === "directory") await walk(h, prefix + name + "/");
      else {
        const bytes = new Uint8Array(await (await h.getFile()).arrayBuffer());
        const d = await crypto.subtle.digest("SHA-256", bytes);
        out[prefix + name] = [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("");
      }
    }
  }
  await walk(await (await navigator.storage.getDirectory()).getDirectoryHandle(root), "");
  return out;
}
"""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fill_picked_folder(page: Page, tree: Path) -> dict[str, str]:
    expected = {}
    for f in sorted(tree.rglob("*")):
        if f.is_file():
            rel = f.relative_to(tree).as_posix()
            page.evaluate(WRITE_FILE, [PICKED, rel, base64.b64encode(f.read_bytes()).decode()])
            expected[rel] = _sha(f.read_bytes())
    return expected


def _worker_permission(page: Page, state: str) -> None:
    """Set what the host worker's queryPermission answers (the browser's current state)."""
    (worker,) = [w for w in page.workers if w.url.endswith("worker/host.mjs")]
    worker.evaluate("(s) => { FileSystemHandle.prototype.queryPermission = async () => s; }", state)


def _open_from_list(host: HostPage, name: str) -> None:
    host.page.click("nav >> text=Projects")
    host.page.click(f"button.project-open:text-is('{name}')")


def _host_tree(host: HostPage, project: str) -> dict[str, str]:
    files = host.ok("file.walk", {"project": project})["result"]["files"]
    return {
        f["path"]: host.ok("file.read", {"project": project, "path": f["path"]})["result"]["sha256"]
        for f in files
    }


def _boot(context: BrowserContext) -> HostPage:
    context.add_init_script(PICKER_STUB)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    return host


def test_picked_folder_survives_reload_and_restart_with_the_permission_step(
    playwright: Playwright, router: SiteRouter, real_sdist: Path, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    context = launch_persistent(playwright, profile, router)
    host = _boot(context)
    page = host.page
    expected = _fill_picked_folder(page, real_sdist)
    assert len(expected) >= 50

    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    assert page.text_content("#project-title") == PICKED
    project = next(p for p in host.ok("project.list")["result"]["projects"] if p["name"] == PICKED)
    assert project["kind"] == "directory"
    pid = project["id"]
    # opening wrote nothing into the folder
    assert page.evaluate(LIST_TREE, PICKED) == expected

    # edit a file through the UI, add one through the upload control
    open_folder(page, "src")
    open_folder(page, "src/jinja2")
    open_file(page, "src/jinja2/__init__.py")
    set_editor_text(page, "# edited in the picked folder\n")
    page.click("#save-file")
    page.wait_for_selector("text=Saved src/jinja2/__init__.py")
    expected["src/jinja2/__init__.py"] = _sha(b"# edited in the picked folder\n")
    page.click("text=Project root")
    page.set_input_files(
        "#upload-files", files=[{"name": "NEW.txt", "mimeType": "text/plain", "buffer": b"added"}]
    )
    page.wait_for_selector("text=Uploaded 1 file")
    expected["NEW.txt"] = _sha(b"added")

    # reload: listed; access lapsed → the grant step → files as left
    host.reload()
    _worker_permission(page, "prompt")
    _open_from_list(host, PICKED)
    page.wait_for_selector("#grant-access")
    assert "permission-required" in (page.text_content("main") or "")
    _worker_permission(page, "granted")  # what the browser reports once the person grants
    page.click("#grant-access")
    page.wait_for_selector("#project-title")
    assert _host_tree(host, pid) == expected
    host.assert_clean()
    context.close()

    # restart the browser with the same profile
    context = launch_persistent(playwright, profile, router)
    host = _boot(context)
    page = host.page
    listed = {p["id"]: p["kind"] for p in host.ok("project.list")["result"]["projects"]}
    assert listed[pid] == "directory"
    _worker_permission(page, "prompt")
    _open_from_list(host, PICKED)
    page.wait_for_selector("#grant-access")
    _worker_permission(page, "granted")
    page.click("#grant-access")
    page.wait_for_selector("#project-title")
    assert _host_tree(host, pid) == expected
    # the manifest went into the folder on the first write: it describes itself
    on_disk = page.evaluate(LIST_TREE, PICKED)
    assert ".voicebox/manifest.json" in on_disk
    host.assert_clean()
    context.close()


def test_denied_permission_is_a_named_refusal_and_nothing_is_written(
    site_context: BrowserContext, real_sdist: Path
) -> None:
    host = _boot(site_context)
    page = host.page
    before = _fill_picked_folder(page, real_sdist / "docs")
    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    pid = next(
        p["id"] for p in host.ok("project.list")["result"]["projects"] if p["kind"] == "directory"
    )

    _worker_permission(page, "denied")
    _open_from_list(host, PICKED)
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == "permission-denied"
    refusal = host.refused("file.write", {"project": pid, "path": "x.txt"}, b"x")
    assert refusal["code"] == "permission-denied"

    # the person refuses at the grant step: named refusal, nothing else happens
    _worker_permission(page, "prompt")
    page.evaluate("() => { window.__personSays = 'denied'; }")
    _open_from_list(host, PICKED)
    page.click("#grant-access")
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") in (
        "permission-denied",
        "permission-required",
    )
    assert page.evaluate(LIST_TREE, PICKED) == before
    assert pid in [p["id"] for p in host.ok("project.list")["result"]["projects"]]


def test_a_file_changed_behind_the_hosts_back_is_read_fresh(
    site_context: BrowserContext,
) -> None:
    host = _boot(site_context)
    page = host.page
    page.evaluate(WRITE_FILE, [PICKED, "notes.txt", base64.b64encode(b"first").decode()])
    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    pid = next(
        p["id"] for p in host.ok("project.list")["result"]["projects"] if p["kind"] == "directory"
    )
    assert host.ok("file.read", {"project": pid, "path": "notes.txt"})["body"] == b"first"
    page.evaluate(WRITE_FILE, [PICKED, "notes.txt", base64.b64encode(b"changed outside").decode()])
    assert host.ok("file.read", {"project": pid, "path": "notes.txt"})["body"] == b"changed outside"


def test_forgetting_a_folder_project_leaves_every_file_in_place(
    site_context: BrowserContext, real_sdist: Path
) -> None:
    host = _boot(site_context)
    page = host.page
    before = _fill_picked_folder(page, real_sdist / "src")
    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    page.click("nav >> text=Projects")
    row = page.locator("tr[data-kind='directory']")
    row.locator("button:text-is('Remove')").click()
    dialog = page.locator("dialog")
    assert "Nothing on disk is deleted" in (dialog.text_content() or "")
    dialog.locator("button:text-is('Remove')").click()
    page.wait_for_selector("tr[data-kind='directory']", state="detached")
    assert page.evaluate(LIST_TREE, PICKED) == before
    host.assert_clean()


def test_an_export_of_a_picked_folder_lists_the_persons_files_it_left_out(
    site_context: BrowserContext, tmp_path: Path
) -> None:
    """Issue 29 item 14: a person's ``.vbx-tmp-my-draft.md`` in a picked folder cannot travel
    in an archive; the export says so — the page lists it, with why, under the progress bar and
    in its notice — instead of leaving it out silently."""
    host = _boot(site_context)
    page = host.page
    for name, data in [("notes.md", b"mine"), (".vbx-tmp-my-draft.md", b"my draft")]:
        page.evaluate(WRITE_FILE, [PICKED, name, base64.b64encode(data).decode()])
    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    page.click("nav >> text=Projects")
    with page.expect_download() as download:
        page.click("tr[data-kind='directory'] button.project-export")
    page.wait_for_selector("#archive-progress .left-out li")
    shown = page.text_content("#archive-progress .left-out") or ""
    assert "1 name the path rule does not allow" in shown
    assert ".vbx-tmp-my-draft.md" in shown and "reserved for the host's atomic writes" in shown
    assert "1 name was left out" in (page.text_content(".alert-info") or "")
    saved = tmp_path / "export.zip"
    download.value.save_as(saved)
    with zipfile.ZipFile(saved) as archive:
        assert archive.read("notes.md") == b"mine"
        assert ".vbx-tmp-my-draft.md" not in archive.namelist()
    assert page.evaluate(LIST_TREE, PICKED)[".vbx-tmp-my-draft.md"] == _sha(b"my draft")


SEARCH = """
async ([project, query]) => {
  let text = "";
  const answer = await window.voicebox.host.call("file.search",
    { project, search: "picked", query },
    { onChunk: (_n, c) => { text += new TextDecoder().decode(new Uint8Array(c)); } });
  const files = text.split("\\n").filter(Boolean).map((l) => JSON.parse(l).path);
  return { summary: answer.result, files };
}
"""


def test_a_search_in_a_picked_folder_reads_its_files_fresh_in_batches(
    site_context: BrowserContext,
) -> None:
    """Issue 33: a picked folder has no sync access handles, so its search reads its files in
    batches through getFile() (browser_host/opfs.py read_many); what changed behind the host's
    back is what it finds, and a binary file is skipped, never an error."""
    host = _boot(site_context)
    page = host.page
    for i in range(40):
        data = b"needle here\n" if i % 4 == 0 else b"hay\n"
        page.evaluate(WRITE_FILE, [PICKED, f"src/f{i:02}.txt", base64.b64encode(data).decode()])
    page.evaluate(WRITE_FILE, [PICKED, "bin.dat", base64.b64encode(b"\0needle").decode()])
    page.click("#open-folder")
    page.wait_for_selector("#project-title")
    pid = next(
        p["id"] for p in host.ok("project.list")["result"]["projects"] if p["kind"] == "directory"
    )
    found = page.evaluate(SEARCH, [pid, "needle"])
    assert found["files"] == [f"src/f{i:02}.txt" for i in range(0, 40, 4)]
    assert found["summary"]["files"] == 40 and found["summary"]["skipped_binary"] == 1
    page.evaluate(WRITE_FILE, [PICKED, "src/f01.txt", base64.b64encode(b"a needle\n").decode()])
    found = page.evaluate(SEARCH, [pid, "needle"])
    assert found["files"][:2] == ["src/f00.txt", "src/f01.txt"]
    assert found["summary"]["matches"] == 11
