"""Foundation journeys (issue 2; SPEC §1–§5, §11): a static site with no server boots the Python
host, OPFS projects survive reload and restart, the audit chain verifies and detects edits, the
page renders text only, bad input gets named refusals, and a tampered wheel stops the boot."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

from playwright.sync_api import BrowserContext, Playwright

from e2e.conftest import launch_persistent
from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter

HOSTILE = "<img src=x onerror=alert(1)>"

BOOT_WATCH = """
(() => {
  const texts = [];
  Object.defineProperty(window, "__bootTexts", { value: texts });
  new MutationObserver(() => {
    const node = document.getElementById("boot");
    if (node && node.textContent) texts.push(node.textContent);
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""


def _local_files(root: Path, prefix: str) -> dict[str, str]:
    return {
        f"{prefix}/{p.relative_to(root).as_posix()}": hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _host_files(host: HostPage, project: str) -> dict[str, str]:
    walk = host.ok("file.walk", {"project": project})["result"]["files"]
    out = {}
    for entry in walk:
        answer = host.ok("file.read", {"project": project, "path": entry["path"]})
        # the page's own digest of the bytes it received must equal the host's statement
        assert answer["body_sha256"] == answer["result"]["sha256"]
        out[entry["path"]] = answer["result"]["sha256"]
    return out


def test_boots_from_static_files_with_no_server_and_no_other_origin(
    site_context: BrowserContext, router: SiteRouter
) -> None:
    site_context.add_init_script(BOOT_WATCH)
    host = HostPage(site_context.new_page())
    host.open()
    status = host.page.text_content("#status") or ""
    assert status.startswith("Ready — Python 3.14")
    assert "Pyodide 314.0.7" in status
    texts = host.page.evaluate("() => window.__bootTexts.slice()")
    assert any("Loading the Python runtime" in t for t in texts)
    assert any(" MB of " in t and not t.startswith("0 B") for t in texts), texts
    assert router.foreign == []
    assert router.requests, "the router served nothing"
    assert all(url.startswith(BASE_URL) for url in router.requests)
    served = {url[len(BASE_URL) :] for url in router.requests}
    assert "worker/host.mjs" in served
    assert "pyodide/pyodide.asm.wasm" in served
    assert any(name.startswith("pyodide/pydantic_core-2.50.5") for name in served)
    host.assert_clean()


def test_page_is_text_nodes_only_under_trusted_types(host: HostPage) -> None:
    page = host.page
    inner_html = page.evaluate(
        "() => { try { document.body.innerHTML = '<b>x</b>'; return 'assigned'; }"
        " catch (e) { return e.name; } }"
    )
    assert inner_html == "TypeError"
    second_policy = page.evaluate(
        "() => { try { trustedTypes.createPolicy('another', {createHTML: s => s}); return 'made'; }"
        " catch (e) { return e.name; } }"
    )
    assert second_policy == "TypeError"
    same_name = page.evaluate(
        "() => { try { trustedTypes.createPolicy('voicebox-worker', {}); return 'made'; }"
        " catch (e) { return e.name; } }"
    )
    assert same_name == "TypeError"
    # The browser reported exactly the three attempts this test made — and nothing of the page's.
    seen = sorted((v["directive"], v["sample"]) for v in host.csp_violations())
    assert seen == [
        ("require-trusted-types-for", "Element innerHTML|<b>x</b>"),
        ("trusted-types", "another"),
        ("trusted-types", "voicebox-worker"),
    ]


def test_hostile_names_are_shown_as_their_characters(host: HostPage) -> None:
    page = host.page
    page.fill("#new-project-name", HOSTILE)
    page.click("text=Create project")
    page.wait_for_selector("#project-title")
    assert page.text_content("#project-title") == HOSTILE
    # a new file may not be named with < or > (Windows refuses them; core/paths.py rule 9)...
    page.set_input_files(
        "#upload-files", files=[{"name": HOSTILE, "mimeType": "text/plain", "buffer": b"boo"}]
    )
    page.wait_for_selector("#files-status:has-text('1 not written')")
    # ...but a project may hold one already (an archive's): shown as its characters
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(HOSTILE, b"boo")
    copy = host.ok("project.import", {"name": f"{HOSTILE} 2"}, out.getvalue())["result"]
    page.evaluate("(id) => voicebox.app.openProject(id)", copy["project"]["id"])
    page.wait_for_selector(f"#project-title:text-is('{HOSTILE} 2')")
    page.click("#surfaces button[data-surface='files']")
    entry = page.locator("#file-tree .file-entry").first
    entry.wait_for()
    assert entry.text_content() == HOSTILE
    page.click("nav >> text=Projects")
    page.wait_for_selector("#project-table")
    assert HOSTILE in [t.strip() for t in page.locator("button.project-open").all_text_contents()]
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("() => document.querySelectorAll('img').length") == 0
    host.assert_clean()


def test_bad_paths_and_malformed_messages_are_refused_by_name_and_write_nothing(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "refusals"})["result"]["project"]["id"]
    host.ok("file.write", {"project": project, "path": "keep.txt"}, b"keep")
    before = host.ok("file.walk", {"project": project})["result"]["files"]
    cases = {
        "../escape": "path-outside-root",
        "../../host/x": "path-outside-root",
        "/etc/passwd": "path-outside-root",
        "a\x00b": "path-invalid",
        ".voicebox/manifest.json": "path-reserved",
    }
    for path, code in cases.items():
        refusal = host.refused("file.write", {"project": project, "path": path}, b"evil")
        assert refusal["code"] == code, (path, refusal)
        assert refusal["status"] in (400, 403)
    assert host.ok("file.walk", {"project": project})["result"]["files"] == before
    host_dir = host.page.evaluate(
        """async () => { const root = await navigator.storage.getDirectory();
        const hostDir = await root.getDirectoryHandle('host');
        const names = []; for await (const k of hostDir.keys()) names.push(k); return names; }"""
    )
    assert "x" not in host_dir
    malformed = host.page.evaluate(
        '() => window.voicebox.host.callRaw(\'{"v":1,"id":"m1","op":5}\', \'m1\')'
        ".then(() => 'answered-ok', (e) => e.code)"
    )
    assert malformed == "message-malformed"
    unknown = host.call("no.such.op")
    assert unknown["refusal"]["code"] == "operation-unknown"
    host.assert_clean()


def test_real_sdist_survives_reload_and_browser_restart_and_the_audit_verifies(
    playwright: Playwright, router: SiteRouter, real_sdist: Path, tmp_path: Path
) -> None:
    expected = _local_files(real_sdist, real_sdist.name)
    assert len(expected) >= 50
    profile = tmp_path / "profile"
    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    page = host.page
    page.fill("#new-project-name", "jinja2 sdist")
    page.click("text=Create project")
    page.wait_for_selector("#project-title")
    page.set_input_files("#upload-folder", str(real_sdist))
    page.wait_for_selector(f"text=Uploaded {len(expected)} files", timeout=120_000)

    host.reload()  # the URL names the open project: the reload comes back to its files
    assert "#/files?project=p_" in page.url
    page.wait_for_selector("#file-tree .tree-dir[data-path='jinja2-3.1.6']")
    project = next(
        p["id"]
        for p in host.ok("project.list")["result"]["projects"]
        if p["name"] == "jinja2 sdist"
    )
    assert _host_files(host, project) == expected

    page.click("nav >> text=Audit")
    page.wait_for_selector("#audit-rows tr[data-seq]")
    seqs = [int(s) for s in page.locator("#audit-rows tr td:nth-child(1)").all_text_contents()]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) == 100
    page.fill("#audit-filter-op", "project.create")
    page.press("#audit-filter-op", "Enter")
    page.wait_for_function(
        "() => { const c = [...document.querySelectorAll('#audit-rows tr td:nth-child(4)')];"
        " return c.length > 0 && c.every(td => td.textContent === 'project.create'); }"
    )
    assert page.locator("#audit-rows tr[data-seq]").count() == 1
    # a folder upload is written in batches, one record each (issue 34), counting its files
    page.fill("#audit-filter-op", "file.write_batch")
    page.press("#audit-filter-op", "Enter")
    page.wait_for_function(
        "() => { const c = [...document.querySelectorAll('#audit-rows tr td:nth-child(4)')];"
        " return c.length >= 1 && c.every(td => td.textContent === 'file.write_batch'); }"
    )
    batches = host.ok("audit.list", {"op": "file.write_batch"})["result"]["records"]
    assert page.locator("#audit-rows tr[data-seq]").count() == len(batches)
    assert sum(r["details"]["files"] for r in batches) == len(expected)
    page.click("#verify-audit")
    page.wait_for_selector("#verify-result.ok")
    host.assert_clean()
    context.close()

    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    assert _host_files(host, project) == expected
    verdict = host.ok("audit.verify")["result"]
    assert verdict["ok"] and verdict["checked"] >= len(expected) + 2

    # Edit one stored audit record behind the host's back: verify must name it.
    target = 3
    host.page.evaluate(
        """async (seq) => {
          const db = await new Promise((ok, err) => { const r = indexedDB.open('voicebox-host');
            r.onsuccess = () => ok(r.result); r.onerror = () => err(r.error); });
          const tx = db.transaction('audit', 'readwrite');
          const store = tx.objectStore('audit');
          const rec = await new Promise((ok) => { const r = store.get(seq); r.onsuccess = () => ok(r.result); });
          rec.decision = rec.decision === 'admitted' ? 'refused' : 'admitted';
          store.put(rec, seq);
          await new Promise((ok) => { tx.oncomplete = ok; });
          db.close();
        }""",
        target,
    )
    verdict = host.ok("audit.verify")["result"]
    assert {k: verdict[k] for k in ("ok", "checked", "broken_seq", "reason", "finding")} == {
        "ok": False,
        "checked": target,
        "broken_seq": target,
        "reason": "record content does not match its hash",
        "finding": "edited",
    }
    host.page.click("nav >> text=Audit")
    host.page.click("#verify-audit")
    host.page.wait_for_selector("#verify-result.bad")
    assert f"record {target}" in (host.page.text_content("#verify-result") or "")
    context.close()


def test_a_wheel_whose_bytes_differ_stops_the_boot_naming_it(
    site_context: BrowserContext, router: SiteRouter, dist: Path, tmp_path: Path
) -> None:
    tampered = tmp_path / "dist"
    shutil.copytree(dist, tampered)
    manifest = json.loads((tampered / "site-manifest.json").read_text())
    wheel = next(f["path"] for f in manifest["files"] if "pydantic-2.14.4" in f["path"])
    data = bytearray((tampered / wheel).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tampered / wheel).write_bytes(bytes(data))
    router.dist = tampered
    page = site_context.new_page()
    page.goto(BASE_URL)
    page.wait_for_function(
        "() => document.getElementById('status')?.dataset.state === 'error'", timeout=90_000
    )
    shown = page.text_content("#boot") or ""
    file_name = wheel.split("/")[-1]
    assert "wheel-refused" in shown
    assert file_name in shown
    assert "integrity" in shown
    assert page.text_content("#boot-failed-file") == file_name


def test_project_names_are_display_text_not_paths(host: HostPage) -> None:
    for name in ["..", "a.b", "host", "Проект-ü-📦"]:
        made = host.ok("project.create", {"name": name})["result"]["project"]
        assert made["name"] == name
        assert made["id"].startswith("p_")
    listed = {p["name"] for p in host.ok("project.list")["result"]["projects"]}
    assert {"..", "a.b", "host", "Проект-ü-📦"} <= listed
    # a name a person gives is not a path and has no outer space (issue 34, check_project_name)
    for bad in ["", "   ", "a\nb", "a/b", "back\\slash", " padded"]:
        assert host.refused("project.create", {"name": bad})["code"] == "name-invalid"
