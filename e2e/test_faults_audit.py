"""The audit under tampering (issue 13, finding 3; SPEC §5; docs/security.md, "Audit").

Each test edits the host's IndexedDB (``voicebox-host`` → ``audit``) directly from the test,
behind the host's back, the way someone holding the profile's database but not the host's key
could: deleting the newest records (and restarting the browser), rewriting one record and
re-hashing every record after it, clearing the store, and appending a correctly linked
forged record. ``audit.verify`` must fail each time and name what it found; the host never
hands out a sequence number twice; and an audit written before the anchor existed still
verifies, marked unanchored up to the first anchored record.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright

from core.audit import record_hash
from e2e.conftest import launch_persistent
from e2e.hostpage import HostPage
from e2e.site import BASE_URL, SiteRouter

OPEN_DB = """const db = await new Promise((ok, err) => {
    const r = indexedDB.open('voicebox-host'); r.onsuccess = () => ok(r.result); r.onerror = () => err(r.error); });
  const get = (req) => new Promise((ok, err) => { req.onsuccess = () => ok(req.result); req.onerror = () => err(req.error); });"""

# Every stored audit record as [seq, record], ascending.
ROWS = (
    "async () => {"
    + OPEN_DB
    + """
  const store = db.transaction('audit', 'readonly').objectStore('audit');
  const [keys, values] = await Promise.all([get(store.getAllKeys()), get(store.getAll())]);
  db.close();
  return keys.map((seq, i) => [seq, values[i]]);
}"""
)

# One readwrite transaction on the audit store: clear it, delete some keys, put some records.
EDIT = (
    "async ({ clear, remove, put }) => {"
    + OPEN_DB
    + """
  const tx = db.transaction('audit', 'readwrite');
  const store = tx.objectStore('audit');
  if (clear) store.clear();
  for (const seq of remove) store.delete(seq);
  for (const [seq, record] of put) store.put(record, seq);
  await new Promise((ok, err) => { tx.oncomplete = ok; tx.onerror = () => err(tx.error); });
  db.close();
}"""
)


def _rows(host: HostPage) -> dict[int, dict[str, Any]]:
    return {int(seq): rec for seq, rec in host.page.evaluate(ROWS)}


def _edit(
    host: HostPage,
    *,
    clear: bool = False,
    remove: list[int] | None = None,
    put: dict[int, dict[str, Any]] | None = None,
) -> None:
    rows = [[seq, rec] for seq, rec in (put or {}).items()]
    host.page.evaluate(EDIT, {"clear": clear, "remove": remove or [], "put": rows})


def _opened(host: HostPage, after: int = 0) -> int:
    """Wait until the page's own call on opening (``sandbox.connect``, audited) has been
    recorded after record ``after``; return its sequence number."""
    deadline = time.monotonic() + 60
    while True:
        found = host.ok("audit.list", {"op": "sandbox.connect", "limit": 1})["result"]["records"]
        if found and found[0]["seq"] > after:
            return int(found[0]["seq"])
        assert time.monotonic() < deadline, "the page's opening call was never audited"
        time.sleep(0.2)


def _seed(host: HostPage, files: int = 6) -> tuple[str, int]:
    """A project with ``files`` writes, once the page has opened; returns (project id, the
    audit's head seq)."""
    _opened(host)
    project = host.ok("project.create", {"name": "audited"})["result"]["project"]["id"]
    logged = 0
    for i in range(files):
        logged = host.ok("file.write", {"project": project, "path": f"f{i}.txt"}, b"x" * i)[
            "logged"
        ]
    head = host.ok("audit.list", {"limit": 1})["result"]["head"]
    assert head == logged and head >= files + 1
    verdict = host.ok("audit.verify")["result"]  # intact (and the anchor caught up with it)
    assert (verdict["ok"], verdict["checked"]) == (True, head)
    return project, head


def _verify(host: HostPage) -> dict[str, Any]:
    return host.ok("audit.verify")["result"]


def _named(verdict: dict[str, Any]) -> tuple[object, ...]:
    """(ok, finding, broken_seq) of a verdict."""
    return verdict["ok"], verdict.get("finding"), verdict.get("broken_seq")


def _verify_in_the_page(host: HostPage) -> str:
    """Run Verify on the Audit surface and return what it shows."""
    host.page.click("nav >> text=Audit")
    host.page.click("#verify-audit")
    host.page.wait_for_selector("#verify-result.bad")
    return host.page.text_content("#verify-result") or ""


def test_deleting_the_newest_records_is_named_a_truncated_tail_and_no_number_is_reused(
    host: HostPage,
) -> None:
    project, head = _seed(host)
    _edit(host, remove=[head, head - 1, head - 2])
    verdict = _verify(host)
    assert _named(verdict) == (
        False,
        "truncated",
        head - 2,
    )
    shown = _verify_in_the_page(host)
    assert f"record {head - 2}" in shown and verdict["reason"] in shown
    assert host.page.get_attribute("#verify-result", "data-finding") == "truncated"
    # the next record takes the number after the real head, so the gap stays named
    logged = host.ok("file.write", {"project": project, "path": "after.txt"}, b"after")["logged"]
    assert logged == head + 1
    verdict = _verify(host)
    assert _named(verdict) == (False, "gap", head - 2)
    host.assert_clean()


def test_deleting_the_newest_records_then_restarting_never_reuses_a_number(
    playwright: Playwright, router: SiteRouter, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    project, head = _seed(host)
    _edit(host, remove=[head, head - 1, head - 2])
    host.assert_clean()
    context.close()

    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    # the page's own call on opening is audited: it takes the number after the real head, so
    # the deleted records are a gap now
    assert _opened(host, head - 3) == head + 1
    verdict = _verify(host)
    assert _named(verdict) == (False, "gap", head - 2)
    logged = host.ok("file.write", {"project": project, "path": "after.txt"}, b"after")["logged"]
    assert logged == head + 2
    stored = sorted(_rows(host))
    assert [s for s in stored if s > head - 3] == list(range(head + 1, logged + 1))
    verdict = _verify(host)
    assert _named(verdict) == (False, "gap", head - 2)
    host.assert_clean()
    context.close()


def test_a_rewritten_and_rehashed_chain_is_named_rewritten(host: HostPage) -> None:
    _, head = _seed(host)
    rows = _rows(host)
    target = 3
    rows[target]["decision"] = "refused" if rows[target]["decision"] == "admitted" else "admitted"
    prev = rows[target]["prev"]
    for seq in range(target, head + 1):  # the forger re-links and re-hashes every later record
        rows[seq]["prev"] = prev
        rows[seq]["hash"] = record_hash(rows[seq])
        prev = rows[seq]["hash"]
    _edit(host, put={seq: rows[seq] for seq in range(target, head + 1)})
    verdict = _verify(host)
    assert _named(verdict) == (
        False,
        "rewritten",
        target,
    )
    assert "rewritten" in _verify_in_the_page(host).lower()
    host.assert_clean()


def test_a_wiped_audit_is_named_wiped_and_no_number_is_reused(host: HostPage) -> None:
    project, head = _seed(host)
    _edit(host, clear=True)
    assert _rows(host) == {}
    verdict = _verify(host)
    assert _named(verdict)[:2] == (False, "wiped")
    assert str(head) in verdict["reason"]
    logged = host.ok("file.write", {"project": project, "path": "after.txt"}, b"after")["logged"]
    assert logged == head + 1
    verdict = _verify(host)
    assert _named(verdict) == (False, "gap", 1)
    host.assert_clean()


@pytest.mark.parametrize("mac", ["copied", "absent"])
def test_a_forged_linked_append_is_named_forged(host: HostPage, mac: str) -> None:
    _, head = _seed(host)
    last = _rows(host)[head]
    forged = copy.deepcopy(last)
    forged.update(seq=head + 1, op="blocks.ratify", rule="human-ui", prev=last["hash"])
    if mac == "absent":
        forged.pop("mac", None)
    forged["hash"] = record_hash(forged)
    _edit(host, put={head + 1: forged})
    verdict = _verify(host)
    assert _named(verdict) == (
        False,
        "forged",
        head + 1,
    )
    assert "forged" in _verify_in_the_page(host).lower()
    host.assert_clean()


# In a page of the origin that does not boot the host: make the profile look as it did before
# the anchor existed — records without a MAC, no anchor in HOST_DIR, no MAC key.
MAKE_LEGACY = (
    "async () => {"
    + OPEN_DB
    + """
  const tx = db.transaction(['audit', 'keys'], 'readwrite');
  const store = tx.objectStore('audit');
  const [keys, values] = await Promise.all([get(store.getAllKeys()), get(store.getAll())]);
  keys.forEach((seq, i) => { const rec = values[i]; delete rec.mac; store.put(rec, seq); });
  tx.objectStore('keys').delete('audit-mac');
  await new Promise((ok, err) => { tx.oncomplete = ok; tx.onerror = () => err(tx.error); });
  db.close();
  const hostDir = await (await navigator.storage.getDirectory()).getDirectoryHandle('host');
  await hostDir.removeEntry('audit-anchor.json');
  return keys.length;
}"""
)


def test_an_audit_from_before_the_anchor_still_verifies_marked_unanchored(
    playwright: Playwright, router: SiteRouter, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    project, head = _seed(host)
    context.close()

    context = launch_persistent(playwright, profile, router)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(BASE_URL + "favicon.svg")  # the origin, without the host
    assert page.evaluate(MAKE_LEGACY) == head
    context.close()

    context = launch_persistent(playwright, profile, router)
    host = HostPage(context.pages[0] if context.pages else context.new_page())
    host.open()
    assert _opened(host, head) == head + 1  # the first record with a MAC
    verdict = _verify(host)
    assert verdict["ok"], verdict
    assert verdict["unanchored_until"] == head and verdict["finding"] is None
    logged = host.ok("file.write", {"project": project, "path": "after.txt"}, b"after")["logged"]
    verdict = _verify(host)
    assert verdict["ok"] and verdict["unanchored_until"] == head and verdict["checked"] == logged
    assert "mac" in _rows(host)[logged]
    host.assert_clean()
    context.close()
