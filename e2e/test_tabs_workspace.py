"""Every tab a workspace (issue 33 item 2; docs/architecture.md, "Every tab a workspace").

Two pages of one Playwright context are two tabs of one browser profile. The first tab's host
worker owns the storage; the second tab's own worker waits in the storage lock's queue, and
its page reaches the first tab's host through a MessagePort the tabs' broker (a SharedWorker,
``worker/broker.mjs``) hands over: it lists and edits the same projects with the same protocol
and gestures. When the first tab closes, the second tab's worker takes the storage and the
page goes on where it was: never a standby card, never an emptied surface, the last write of
the closed tab present.
"""

from __future__ import annotations

import time
from pathlib import Path

from playwright.sync_api import BrowserContext

from e2e.files_kit import (
    EDITOR,
    editor_text,
    file_entry,
    folder_row,
    open_file,
    set_editor_text,
    wait_editor,
)
from e2e.hostpage import HostPage, two_tabs
from e2e.site import BASE_URL
from e2e.tray_kit import go, open_in_ui

WRITES = 30

# Records, from now on, whether the page ever lost its surface or showed the standby card.
WATCH_EMPTY = """() => {
  window.__emptied = [];
  const look = () => {
    const main = document.getElementById("main");
    if (!main.querySelector(".surface")) window.__emptied.push("no surface");
    if (document.getElementById("host-standby")) window.__emptied.push("standby card");
    const state = document.getElementById("status").dataset.state;
    if (state !== "ready") window.__emptied.push(`status ${state}`);
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
}"""


SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def _role(host: HostPage) -> str | None:
    return host.page.evaluate("() => window.voicebox.host.role")


def test_a_second_tab_is_a_full_workspace_over_the_one_host(site_context: BrowserContext) -> None:
    first, second = two_tabs(site_context)
    assert _role(first) == "leader" and _role(second) == "follower"
    assert not second.page.is_visible("#host-standby")
    assert second.page.locator("nav button[data-surface]").first.is_enabled()
    assert "another tab" in (second.page.text_content("#status") or "")

    # the follower lists and writes what the leader's host holds: one host, one storage
    pid = second.ok("project.create", {"name": "Shared"}, human=True)["result"]["project"]["id"]
    listed = {p["id"] for p in first.ok("project.list")["result"]["projects"]}
    assert pid in listed
    second.ok("file.write", {"project": pid, "path": "a.txt"}, b"from the follower", human=True)
    assert first.ok("file.read", {"project": pid, "path": "a.txt"})["body"] == b"from the follower"
    # the same gesture rule in both tabs: refused without the gesture, admitted with it
    change = {"changes": {"peer_deadline_ms": 20_000}}
    for tab in (first, second):
        refusal = tab.refused("policy.set", change)
        assert refusal["code"] == "human_gesture_required", refusal
    second.ok("policy.set", change, human=True)
    assert first.ok("policy.get")["result"]["policy"]["peer_deadline_ms"] == 20_000
    # one audit, written by the one host: the follower's write is in it
    records = first.ok("audit.list", {"op": "file.write"})["result"]["records"]
    assert any(r["decision"] == "admitted" for r in records)
    assert second.ok("audit.verify")["result"]["ok"]

    # through the follower's own UI: open the project, edit, save; the leader reads it
    open_in_ui(second, pid)
    open_file(second.page, "a.txt")
    wait_editor(second.page)
    set_editor_text(second.page, "edited in the second tab\n")
    second.page.click("#save-file")
    second.page.wait_for_selector("#save-state:text-matches('Saved')")
    got = first.ok("file.read", {"project": pid, "path": "a.txt"})["body"]
    assert got == b"edited in the second tab\n"
    first.assert_clean()
    second.assert_clean()


def test_closing_the_leader_leaves_the_follower_a_working_host_with_the_last_write(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Handover"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "open.txt"}, b"shown\n")
    open_in_ui(second, pid)
    open_file(second.page, "open.txt")
    wait_editor(second.page)
    second.page.click(EDITOR)
    second.page.keyboard.type("unsaved ")
    unsaved = editor_text(second.page)
    assert unsaved != "shown\n"

    for i in range(WRITES):  # every write answered before the next, the last one just before
        first.ok("file.write", {"project": pid, "path": "counter.txt"}, f"round {i}".encode())
    second.page.evaluate(WATCH_EMPTY)
    second.page.evaluate(
        """() => { const h = window.voicebox.host; window.__marks = {};
          for (const e of ["takeover", "ready"]) h.addEventListener(e, (ev) => { window.__marks[e] = performance.now(); window.__marks[`${e}Start`] = ev.detail?.startMs ?? null; });
          window.__marks.close = performance.now(); }"""
    )
    closed_at = time.monotonic()
    first.page.close()
    second.page.wait_for_function("() => window.voicebox.host.role === 'leader'", timeout=30_000)
    # a call made at once is answered by this tab's own host as soon as it is up
    counter = second.ok("file.read", {"project": pid, "path": "counter.txt"})["body"]
    answered_s = time.monotonic() - closed_at
    print(f"\nleader closed → the follower's first answer from its own host: {answered_s:.2f} s")
    assert counter == f"round {WRITES - 1}".encode()
    marks = second.page.evaluate("() => window.__marks")
    print(
        f"take-over said {marks['takeover'] - marks['close']:.0f} ms, "
        f"this tab's host ready {marks['ready'] - marks['close']:.0f} ms after the close began "
        f"(its start alone {marks['readyStart']} ms)"
    )
    second.page.wait_for_selector("#host-notice")
    assert second.page.evaluate("() => window.__emptied") == []
    # the page stayed where it was, the unsaved text with it, and it still works
    assert editor_text(second.page) == unsaved
    second.page.click("#save-file")
    second.page.wait_for_selector("#save-state:text-matches('Saved')")
    assert second.ok("file.read", {"project": pid, "path": "open.txt"})["body"] == unsaved.encode()
    assert second.ok("audit.verify")["result"]["ok"]
    writes = second.ok("audit.list", {"op": "file.write", "limit": 200})["result"]["records"]
    assert sum(r["decision"] == "admitted" for r in writes) == 1 + WRITES + 1
    second.assert_clean()


def _editing(host: HostPage, pid: str, path: str) -> None:
    open_in_ui(host, pid)
    open_file(host.page, path)
    wait_editor(host.page)


def _save_refused(host: HostPage) -> None:
    host.page.click("#save-file")
    host.page.wait_for_selector("#conflict-dialog[open]")
    text = host.page.text_content("#conflict-dialog") or ""
    assert "changed since you opened it" in text and "Nothing was saved" in text
    assert text.count("save yours as another") == 1, text  # the ways out said once (stop 45)
    host.page.screenshot(path=str(SHOTS / "file-changed-conflict.png"))


def test_two_tabs_on_one_file_see_each_others_saves_and_a_conflict_offers_the_choice(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "One file"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "doc.txt"}, b"v1\n", human=True)
    _editing(first, pid, "doc.txt")
    _editing(second, pid, "doc.txt")

    # the leader saves; the follower's clean editor shows it (a file.changed event)
    set_editor_text(first.page, "v2 from the first tab\n")
    first.page.click("#save-file")
    second.page.wait_for_function(
        "() => voicebox.app.filesView?.editor?.text() === 'v2 from the first tab\\n'",
        timeout=10_000,
    )
    # and the other way round
    set_editor_text(second.page, "v3 from the second tab\n")
    second.page.click("#save-file")
    first.page.wait_for_function(
        "() => voicebox.app.filesView?.editor?.text() === 'v3 from the second tab\\n'",
        timeout=10_000,
    )

    def conflict(mine: str, theirs: bytes) -> None:
        """The second tab types `mine` (unsaved); the file becomes `theirs` elsewhere; the
        second tab's Save is refused with the choice."""
        set_editor_text(second.page, mine)
        first.ok("file.write", {"project": pid, "path": "doc.txt"}, theirs, human=True)
        second.page.wait_for_selector("#files-status:text-matches('changed in another tab')")
        assert editor_text(second.page) == mine  # unsaved text is never replaced
        _save_refused(second)

    # Cancel, then Reload: the editor shows theirs, nothing written
    conflict("mine A\n", b"theirs A\n")
    second.page.click("#conflict-dialog button[value='cancel']")
    assert editor_text(second.page) == "mine A\n"
    _save_refused(second)
    second.page.click("#conflict-reload")
    second.page.wait_for_function("() => voicebox.app.filesView.editor.text() === 'theirs A\\n'")
    assert second.ok("file.read", {"project": pid, "path": "doc.txt"})["body"] == b"theirs A\n"

    # Overwrite: mine replaces theirs, on purpose
    conflict("mine B\n", b"theirs B\n")
    second.page.click("#conflict-overwrite")
    second.page.wait_for_selector("#save-state:text-matches('Saved')")
    assert first.ok("file.read", {"project": pid, "path": "doc.txt"})["body"] == b"mine B\n"

    # Save as: mine goes to a new file, theirs stays
    conflict("mine C\n", b"theirs C\n")
    second.page.click("#conflict-saveas")
    second.page.fill("dialog[open] input", "doc-mine.txt")
    second.page.click("dialog[open] button.primary")
    second.page.wait_for_selector("#viewer-path:text-is('doc-mine.txt')")
    assert first.ok("file.read", {"project": pid, "path": "doc-mine.txt"})["body"] == b"mine C\n"
    assert first.ok("file.read", {"project": pid, "path": "doc.txt"})["body"] == b"theirs C\n"
    refused = first.ok("audit.list", {"rule": "file-changed"})["result"]["records"]
    assert len(refused) == 4  # each refused save audited, nothing written by it
    first.assert_clean()
    second.assert_clean()


def test_with_three_tabs_the_follower_that_does_not_take_over_follows_the_new_host(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    third = HostPage(site_context.new_page())
    third.open(BASE_URL)
    assert [_role(t) for t in (first, second, third)] == ["leader", "follower", "follower"]
    pid = third.ok("project.create", {"name": "Three"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "last.txt"}, b"the leader's last write")
    first.page.close()
    for tab in (second, third):  # one of them holds the host now, the other follows it
        tab.page.wait_for_function(
            "() => ['leader', 'follower'].includes(window.voicebox.host.role)", timeout=30_000
        )
    deadline = time.monotonic() + 60
    while sorted(_role(t) or "" for t in (second, third)) != ["follower", "leader"]:
        assert time.monotonic() < deadline, [_role(t) for t in (second, third)]
        second.page.wait_for_timeout(100)
    for tab in (second, third):
        got = tab.ok("file.read", {"project": pid, "path": "last.txt"})["body"]
        assert got == b"the leader's last write"
    third.ok("file.write", {"project": pid, "path": "t3.txt"}, b"3", human=True)
    second.ok("file.write", {"project": pid, "path": "t2.txt"}, b"2", human=True)
    files = {f["path"] for f in third.ok("file.walk", {"project": pid})["result"]["files"]}
    assert files == {"last.txt", "t2.txt", "t3.txt"}
    assert second.ok("audit.verify")["result"]["ok"]
    second.assert_clean()
    third.assert_clean()


def test_the_tree_and_the_project_list_follow_other_tabs_without_a_reload(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Follow"}, human=True)["result"]["project"]["id"]
    for name in ("keep.txt", "gone.txt", "moved.txt"):
        first.ok("file.write", {"project": pid, "path": name}, b"x", human=True)
    open_in_ui(second, pid)
    second.page.wait_for_selector(file_entry("gone.txt"))
    second.page.click(file_entry("keep.txt"))  # selected and focused: both stay
    second.page.evaluate("() => { window.__marker = 1; }")  # gone if the page reloads

    # the first tab deletes, creates a folder, moves and uploads; the second's tree follows
    first.ok("file.delete", {"project": pid, "path": "gone.txt"}, human=True)
    first.ok("file.mkdir", {"project": pid, "path": "made"}, human=True)
    first.ok("file.move", {"project": pid, "src": "moved.txt", "dst": "made/moved.txt"}, human=True)
    batch = {"project": pid, "files": [{"path": "up.txt", "size": 2}]}
    first.ok("file.write_batch", batch, b"up", human=True)
    second.page.wait_for_selector(file_entry("gone.txt"), state="detached", timeout=10_000)
    second.page.wait_for_selector(file_entry("moved.txt"), state="detached", timeout=10_000)
    second.page.wait_for_selector(folder_row("made"), timeout=10_000)
    second.page.wait_for_selector(file_entry("up.txt"), timeout=10_000)
    # a trash restore brings it back
    trashed = first.ok("trash.list", {"project": pid})["result"]["entries"]
    first.ok("trash.restore", {"project": pid, "id": trashed[0]["id"]}, human=True)
    second.page.wait_for_selector(file_entry("gone.txt"), timeout=10_000)
    assert second.page.evaluate("() => window.__marker") == 1  # never reloaded
    keep = second.page.locator(file_entry("keep.txt")).locator(
        "xpath=ancestor::*[@role='treeitem'][1]"
    )
    assert keep.get_attribute("aria-selected") == "true"

    # the Projects surface lists a project another tab created, renamed or deleted
    go(second.page, "projects")
    second.page.wait_for_selector(f"[data-project-id='{pid}']")
    other = first.ok("project.create", {"name": "Made elsewhere"}, human=True)
    oid = other["result"]["project"]["id"]
    second.page.wait_for_selector(f"[data-project-id='{oid}']", timeout=10_000)
    first.ok("project.rename", {"project": oid, "name": "Renamed elsewhere"}, human=True)
    second.page.wait_for_function(
        "(id) => document.querySelector(`tr[data-project-id='${id}']`)?.innerText"
        ".includes('Renamed elsewhere')",
        arg=oid,
        timeout=10_000,
    )
    first.ok("project.delete", {"project": oid}, human=True)
    second.page.wait_for_selector(f"[data-project-id='{oid}']", state="detached", timeout=10_000)
    assert second.page.evaluate("() => window.__marker") == 1
    first.assert_clean()
    second.assert_clean()


PY_WAIT_MS = 120_000  # a runtime frame's boot on this loaded machine


def _run_py(tab: HostPage, said: str) -> None:
    """Click Run in `tab` and wait until its output holds `said` and the run exited 0."""
    tab.page.click("#python-run")
    tab.page.wait_for_function(
        "(t) => document.getElementById('python-output')?.textContent.includes(t)"
        " && document.getElementById('python-status')?.textContent.includes('Exited with status')",
        arg=said,
        timeout=PY_WAIT_MS,
    )
    status = tab.page.text_content("#python-status") or ""
    assert "status 0" in status, (status, tab.page.text_content("#python-output"))


def test_closing_a_tab_that_ran_python_never_breaks_another_tabs_run(
    site_context: BrowserContext,
) -> None:
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Py tabs"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "a.py"}, b"print('leader one')\n", human=True)
    first.ok("file.write", {"project": pid, "path": "b.py"}, b"print('follower one')\n", human=True)
    _editing(first, pid, "a.py")
    _editing(second, pid, "b.py")
    _run_py(first, "leader one")
    _run_py(second, "follower one")  # the follower's frame is the host's runtime now
    second.page.close()
    first.ok("file.write", {"project": pid, "path": "a.py"}, b"print('leader two')\n", human=True)
    first.page.wait_for_function(
        "() => voicebox.app.filesView?.editor?.text() === \"print('leader two')\\n\"",
        timeout=10_000,
    )
    _run_py(first, "leader two")  # its own frame again: output, never a timed-out run
    first.assert_clean()


SPIN = b"print('spinning', flush=True)\nwhile True:\n    pass\n"


def _spinning(tab: HostPage) -> None:
    """Click Run in `tab` on a file that prints, then loops for ever; wait for its print."""
    tab.page.click("#python-run")
    tab.page.wait_for_function(
        "() => document.getElementById('python-output')?.textContent.includes('spinning')",
        timeout=PY_WAIT_MS,
    )


def _stopped_runs(host: HostPage) -> list[str | None]:
    records = host.ok("audit.list", {"op": "python.run", "limit": 20})["result"]["records"]
    return [r["details"].get("stopped_by") for r in records if r["details"].get("stopped")]


def test_a_follower_closed_mid_run_frees_python_at_once(site_context: BrowserContext) -> None:
    """The host learns a follower tab is gone by the lock that tab held for its life: the run
    its frame was going ends "stopped" within about 2 s (not at its 600 s deadline) and the
    leader's next Run goes ahead."""
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Py close"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "a.py"}, b"print('leader')\n", human=True)
    first.ok("file.write", {"project": pid, "path": "spin.py"}, SPIN, human=True)
    _editing(first, pid, "a.py")
    _editing(second, pid, "spin.py")
    _spinning(second)
    assert _stopped_runs(first) == []
    second.page.close()
    closed = time.monotonic()
    while "tab-closed" not in _stopped_runs(first):
        assert time.monotonic() - closed < 4.0, "the closed tab's run is still going"
        first.page.wait_for_timeout(50)  # a poll's pace, bounded by the deadline above
    freed_s = time.monotonic() - closed
    print(f"the closed tab's run ended stopped {freed_s:.2f} s after the close")
    assert freed_s < 2.5, freed_s
    # the closed tab's frame is dropped: nothing answers for it, and the leader's Run
    # connects its own
    assert first.refused("python.warm")["code"] == "sandbox-unavailable"
    _run_py(first, "leader")
    first.assert_clean()


def test_a_run_stopped_by_another_tabs_run_says_python_was_taken(
    site_context: BrowserContext,
) -> None:
    """One runtime per host, in the tab that ran last: the tab whose run another tab's Run
    stopped says why, in plain words, and how to take Python back."""
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Py taken"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "spin.py"}, SPIN, human=True)
    first.ok("file.write", {"project": pid, "path": "b.py"}, b"print('follower')\n", human=True)
    _editing(first, pid, "spin.py")
    _editing(second, pid, "b.py")
    _spinning(first)
    _run_py(second, "follower")
    first.page.wait_for_function(
        "() => document.getElementById('python-status')?.textContent.includes('another tab')",
        timeout=10_000,
    )
    status = first.page.text_content("#python-status") or ""
    assert "taken by another tab" in status and "Run again here" in status, status
    assert not first.page.is_disabled("#python-run")
    assert _stopped_runs(first)[:1] == ["another-tab"]
    first.assert_clean()
    second.assert_clean()


def test_a_project_renamed_or_deleted_in_another_tab_follows_here_and_unsaved_text_is_kept(
    site_context: BrowserContext,
) -> None:
    """The open project renamed in another tab shows its new name here; deleted there, it is
    closed here with a plain sentence, and the editor's unsaved text is offered to be saved
    into another project (or copied) — never dropped in silence."""
    first, second = two_tabs(site_context)
    pid = first.ok("project.create", {"name": "Doomed"}, human=True)["result"]["project"]["id"]
    safe = first.ok("project.create", {"name": "Safe"}, human=True)["result"]["project"]["id"]
    first.ok("file.write", {"project": pid, "path": "note.txt"}, b"stored\n", human=True)
    _editing(second, pid, "note.txt")
    unsaved = "my unsaved words\n"
    set_editor_text(second.page, unsaved)

    first.ok("project.rename", {"project": pid, "name": "Doomed renamed"}, human=True)
    second.page.wait_for_function(
        "() => document.getElementById('open-project-name')?.textContent === 'Doomed renamed'",
        timeout=10_000,
    )
    # the Files surface's heading follows too (a tryout found it stale)
    second.page.wait_for_function(
        "() => document.getElementById('project-title')?.textContent === 'Doomed renamed'",
        timeout=10_000,
    )
    assert editor_text(second.page) == unsaved  # the rename kept the editor as it was

    first.ok("project.delete", {"project": pid}, human=True)
    second.page.wait_for_selector("#orphan-dialog[open]", timeout=10_000)
    said = second.page.text_content("#alerts") or ""
    assert "“Doomed renamed” was deleted in another tab" in said, said
    assert "No project open" in (second.page.text_content("#project-bar") or "")
    assert second.page.input_value("#orphan-text") == unsaved
    second.page.select_option("#orphan-project", safe)
    second.page.click("#orphan-save")
    second.page.wait_for_selector("#orphan-dialog", state="detached")
    second.page.wait_for_function(
        "() => document.getElementById('alerts').textContent.includes('was saved as note.txt')"
    )
    got = first.ok("file.read", {"project": safe, "path": "note.txt"})["body"]
    assert got == unsaved.encode()
    first.assert_clean()
    second.assert_clean()
