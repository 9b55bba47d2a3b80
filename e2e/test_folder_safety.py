"""What a listing and a write may do to the files in a project's folder (issue 13, findings 1–2).

Each journey runs over both kinds of project: an OPFS project, whose folder the test also fills
directly through OPFS (as another program, or the person with DevTools, might), and a picked
folder — stubbed as in ``e2e/test_folders.py`` with a REAL OPFS subfolder handle.

- A listing never deletes a person's file: names merely shaped like the host's temporaries
  (``.vbx-tmp-my-draft.md``, a file named ``.vbx-tmp-``, a folder ``.vbx-tmp-empty-dir/``)
  are kept and shown; operations on them are refused ``path-reserved`` (SPEC §3).
- The temporaries in flight are shared by every call: 40 writes beside 150 listings all succeed.
- Reserved names compare case-folded: ``.VOICEBOX/x``, ``.Voicebox/x`` and ``.VBX-TMP-x`` are
  refused ``path-reserved`` through the page's host client and through ``tool.call``.
- In a picked folder a name differing only in letter case from a sibling is refused
  ``path-case-collision``; OPFS (case-sensitive, host-only) keeps both spellings.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.test_folders import PICKED, PICKER_STUB

KINDS = ["opfs", "picked"]

# Put a file (with `text`) or a folder straight into OPFS, under the folders `dirs`.
RAW_PUT = """async ([dirs, name, kind, text]) => {
  let dir = await navigator.storage.getDirectory();
  for (const d of dirs) dir = await dir.getDirectoryHandle(d, { create: true });
  if (kind === "dir") { await dir.getDirectoryHandle(name, { create: true }); return; }
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(new TextEncoder().encode(text));
  await w.close();
}"""

# Every [name, "file" | "dir"] directly inside the folders `dirs`, as the browser has them.
RAW_NAMES = """async (dirs) => {
  let dir = await navigator.storage.getDirectory();
  for (const d of dirs) dir = await dir.getDirectoryHandle(d);
  const out = [];
  for await (const [name, handle] of dir.entries()) out.push([name, handle.kind === "directory" ? "dir" : "file"]);
  return out.sort();
}"""

# `n` writes of the folder "w" sent at once, and three callers listing "w" one listing after
# another for as long as the writes last (and `m` listings at least); each outcome is "ok" or
# the refusal code.
RACE = """async ([project, n, m, size]) => {
  const h = window.voicebox.host;
  const outcome = (p) => p.then(() => "ok", (err) => err.code);
  const writes = [];
  for (let i = 0; i < n; i++) {
    const body = new Uint8Array(size).fill(i % 251).buffer;
    writes.push(outcome(h.call("file.write", { project, path: `w/${i}.bin` }, { body })));
  }
  let done = false;
  const all = Promise.all(writes).finally(() => { done = true; });
  const lists = [];
  const lister = async () => {
    while (!done || lists.length < m) lists.push(await outcome(h.call("file.list", { project, folder: "w" })));
  };
  await Promise.all([lister(), lister(), lister()]);
  return { writes: await all, lists };
}"""

PERSONS_FILES = [
    (".vbx-tmp-my-draft.md", "file"),
    (".vbx-tmp-", "file"),
    (".vbx-tmp-empty-dir", "dir"),
]


def _boot(context: BrowserContext) -> HostPage:
    context.add_init_script(PICKER_STUB)
    host = HostPage(context.new_page())
    host.open()
    return host


def _project(host: HostPage, kind: str, seed: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """A fresh project of ``kind`` whose root already holds ``seed`` ([name, kind] put there
    outside the host), opened in the page's Files view; returns its id and the OPFS folders
    leading to its root."""
    page = host.page
    if kind == "opfs":
        pid = host.ok("project.create", {"name": "in the browser"})["result"]["project"]["id"]
        root = ["projects", pid]
    else:
        root = [PICKED]
    page.evaluate(RAW_PUT, [root, "README.md", "file", "hello"])
    for name, what in seed:
        page.evaluate(RAW_PUT, [root, name, what, f"the person's own {name}"])
    if kind == "opfs":
        page.click("nav >> text=Projects")
        page.click("button.project-open:text-is('in the browser')")
    else:
        page.click("#open-folder")
        page.wait_for_selector("#project-title")  # the picked folder is adopted and opened
        pid = next(
            p["id"]
            for p in host.ok("project.list")["result"]["projects"]
            if p["kind"] == "directory"
        )
    page.wait_for_selector("#project-title")
    return pid, root


@pytest.mark.parametrize("kind", KINDS)
def test_a_listing_keeps_and_shows_a_persons_files_shaped_like_temporaries(
    site_context: BrowserContext, kind: str
) -> None:
    host = _boot(site_context)
    pid, root = _project(host, kind, PERSONS_FILES)
    page = host.page
    # the page has listed the folder already (its Files view): nothing of the person's went
    on_disk = page.evaluate(RAW_NAMES, root)
    assert {tuple(n) for n in on_disk} >= set(PERSONS_FILES), on_disk
    for _ in range(3):
        listed = host.ok("file.list", {"project": pid})["result"]["entries"]
        assert {(e["name"], e["kind"]) for e in listed} >= set(PERSONS_FILES)
    walked = {f["path"] for f in host.ok("file.walk", {"project": pid})["result"]["files"]}
    assert {".vbx-tmp-my-draft.md", ".vbx-tmp-"} <= walked
    assert page.evaluate(RAW_NAMES, root) == on_disk
    # shown in the page's tree; opening one is refused by name and changes nothing
    page.wait_for_selector("#file-tree .file-entry[data-path='.vbx-tmp-my-draft.md']")
    assert page.locator("#file-tree .tree-dir[data-path='.vbx-tmp-empty-dir']").count() == 1
    page.click("#file-tree .file-entry[data-path='.vbx-tmp-my-draft.md']")
    page.wait_for_selector(".alert-error .refusal-code")
    assert page.text_content(".alert-error .refusal-code") == "path-reserved"
    for op, args in [
        ("file.read", {"path": ".vbx-tmp-my-draft.md"}),
        ("file.delete", {"path": ".vbx-tmp-"}),
        ("file.delete", {"path": ".vbx-tmp-empty-dir"}),
    ]:
        assert host.refused(op, {"project": pid, **args})["code"] == "path-reserved"
    # the UI's own listing ran too (the tree): still nothing of the person's was removed
    assert page.evaluate(RAW_NAMES, root) == on_disk
    host.assert_clean()


@pytest.mark.parametrize("kind", KINDS)
def test_forty_writes_beside_150_listings_all_succeed(
    site_context: BrowserContext, kind: str
) -> None:
    host = _boot(site_context)
    pid, root = _project(host, kind, [])
    host.ok("file.mkdir", {"project": pid, "path": "w"})
    size = 1 << 20
    outcomes = host.page.evaluate(RACE, [pid, 40, 150, size])
    assert outcomes["writes"] == ["ok"] * 40, Counter(outcomes["writes"])
    assert len(outcomes["lists"]) >= 150
    assert set(outcomes["lists"]) == {"ok"}, Counter(outcomes["lists"])
    listed = host.ok("file.list", {"project": pid, "folder": "w"})["result"]["entries"]
    assert sorted(e["name"] for e in listed) == sorted(f"{i}.bin" for i in range(40))
    for i in (0, 17, 39):
        read = host.ok("file.read", {"project": pid, "path": f"w/{i}.bin"})["result"]
        assert read["sha256"] == hashlib.sha256(bytes([i % 251]) * size).hexdigest()
    # no temporary is left behind in the folder itself
    assert [n for n, _ in host.page.evaluate(RAW_NAMES, [*root, "w"]) if n.startswith(".vbx")] == []
    host.assert_clean()


def _tool_write(host: HostPage, pid: str, path: str) -> dict:
    local = next(
        e["envKey"] for e in host.ok("env.list")["result"]["environments"] if e["kind"] == "local"
    )
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    descriptor = next(t["descriptorId"] for t in tools if t["name"] == "file.write")
    args = {"project": pid, "path": path, "content_b64": "eA=="}
    return host.call(
        "tool.call",
        {"envKey": local, "tool": "file.write", "descriptorId": descriptor, "args": args},
    )


@pytest.mark.parametrize("kind", KINDS)
def test_case_aliases_of_reserved_names_are_refused_through_the_page_and_tool_call(
    site_context: BrowserContext, kind: str
) -> None:
    host = _boot(site_context)
    pid, root = _project(host, kind, [])
    host.ok("file.write", {"project": pid, "path": "first.txt"}, b"makes the metadata exist")
    before = host.page.evaluate(RAW_NAMES, root)
    for path in [
        ".VOICEBOX/x",
        ".Voicebox/x",
        ".VOICEBOX/skeleton.json",
        ".VBX-TMP-x",
        "a/.Vbx-Tmp-1",
    ]:
        for op, args, body in [
            ("file.write", {"path": path}, b"x"),
            ("file.mkdir", {"path": path}, None),
            ("file.read", {"path": path}, None),
        ]:
            refusal = host.refused(op, {"project": pid, **args}, body)
            assert refusal["code"] == "path-reserved", (op, path, refusal)
        answer = _tool_write(host, pid, path)
        assert not answer["ok"], answer
        assert answer["refusal"]["code"] == "path-reserved", (path, answer)
    assert host.page.evaluate(RAW_NAMES, root) == before
    host.assert_clean()


@pytest.mark.parametrize("kind", KINDS)
def test_a_name_differing_only_in_case_from_a_sibling(
    site_context: BrowserContext, kind: str
) -> None:
    """Refused ``path-case-collision`` in a picked folder (on a case-insensitive disk it would
    be the sibling itself); OPFS is case-sensitive and only this host writes it: both stay."""
    host = _boot(site_context)
    pid, root = _project(host, kind, [("src", "dir")])
    attempts = [
        ("file.write", {"path": "readme.md"}, b"another file?"),
        ("file.write", {"path": "SRC/a.txt"}, b"into another folder?"),
        ("file.mkdir", {"path": "Src"}, None),
        ("file.move", {"src": "README.md", "dst": "Readme.md"}, None),
    ]
    before = host.page.evaluate(RAW_NAMES, root)
    if kind == "picked":
        for op, args, body in attempts:
            refusal = host.refused(op, {"project": pid, **args}, body)
            assert refusal["code"] == "path-case-collision", (op, args, refusal)
            assert "README.md" in refusal["message"] or "src" in refusal["message"]
        assert _tool_write(host, pid, "readme.md")["refusal"]["code"] == "path-case-collision"
        assert host.page.evaluate(RAW_NAMES, root) == before
        # the same spelling is the same file: overwriting it is fine
        host.ok("file.write", {"project": pid, "path": "README.md"}, b"hello again")
        host.ok("file.write", {"project": pid, "path": "src/a.txt"}, b"a")
    else:
        for op, args, body in attempts[:3]:
            host.ok(op, {"project": pid, **args}, body)
        names = {n for n, _ in host.page.evaluate(RAW_NAMES, root)}
        assert {"README.md", "readme.md", "src", "SRC", "Src"} <= names
    host.assert_clean()
