"""Secrets at rest (issue 10; SPEC §1 custody): after a journey that creates every kind of
secret — host tokens, a bearer issued, stored and used, then revoked — no bearer or token is
readable in clear anywhere a copy of the profile would hold: not in any OPFS file (HOST_DIR,
projects, the peer's fenced root, leftovers), not in any IndexedDB value (audit, handles), and
the key that opens HOST_DIR cannot be exported. (Messages to the page are checked by every
journey: ``HostPage.assert_custody``.)

The real secrets are found the way only same-origin script could — opening the sealed
documents with the database's key (``READ_SECRETS``, shared with ``test_peers.py``) — so the
scan looks for the actual values, not only their shape."""

from __future__ import annotations

import pytest
from playwright.sync_api import BrowserContext

from e2e.hostpage import SECRET_SHAPE, HostPage
from e2e.test_peers import READ_SECRETS, _create_and_pair, _tool

EVERY_FILE = """async () => {
  const out = {};
  async function walk(dir, prefix) {
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === "directory") await walk(handle, `${prefix}${name}/`);
      else {
        let file;
        try { file = await handle.getFile(); } catch (err) {
          if (err.name === "NotFoundError") continue; // a temporary moved into place meanwhile
          throw err;
        }
        out[prefix + name] = new TextDecoder("latin1").decode(new Uint8Array(await file.arrayBuffer()));
      }
    }
  }
  await walk(await navigator.storage.getDirectory(), "");
  return out;
}"""

EVERY_RECORD = """async () => {
  const out = {};
  const keys = [];
  for (const { name } of await indexedDB.databases()) {
    const db = await new Promise((ok, err) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result); r.onerror = () => err(r.error); });
    for (const store of db.objectStoreNames) {
      const values = await new Promise((ok) => { const r = db.transaction(store).objectStore(store).getAll(); r.onsuccess = () => ok(r.result); });
      values.forEach((value, i) => {
        if (value instanceof CryptoKey) keys.push({ db: name, extractable: value.extractable, usages: value.usages });
        out[`${name}/${store}/${i}`] = JSON.stringify(value) ?? String(value);
      });
    }
    db.close();
  }
  const exported = [];
  for (const { name } of await indexedDB.databases()) {
    const db = await new Promise((ok) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result); });
    if (db.objectStoreNames.contains("keys")) {
      const all = await new Promise((ok) => { const r = db.transaction("keys").objectStore("keys").getAll(); r.onsuccess = () => ok(r.result); });
      for (const key of all) {
        if (!(key instanceof CryptoKey)) continue;
        exported.push(await crypto.subtle.exportKey("raw", key).then(() => "exported", (e) => e.name));
      }
    }
    db.close();
  }
  return { values: out, keys, exported };
}"""


def test_no_secret_is_readable_in_clear_in_any_opfs_file_or_indexeddb_value(
    served_context: BrowserContext, static_server: str
) -> None:
    host = HostPage(served_context.new_page())
    host.open(static_server)
    key = _create_and_pair(host)
    made = _tool(host, key, "project.create", {"name": "custody at rest"})
    assert made["ok"], made
    host.ok("project.create", {"name": "local"})
    host.ok("env.revoke", {"envKey": key}, human=True)
    host.ok("env.pair", {"envKey": key}, human=True)  # a live bearer again, beside the revoked one
    assert _tool(host, key, "projects.list", {})["ok"]

    secrets: set[str] = set()
    for db, folder in (
        ("voicebox-host", "host"),
        ("voicebox-env-studio", "environments/studio/host"),
    ):
        opened = host.page.evaluate(READ_SECRETS, [db, folder])["opened"]
        for text in opened.values():
            secrets.update(SECRET_SHAPE.findall(text))
    assert any(s.startswith("vbx_") for s in secrets), "a bearer exists in the sealed store"
    assert any(s.startswith("vbh_") for s in secrets), "host tokens exist in the sealed store"

    files = host.page.evaluate(EVERY_FILE)
    assert any(p.startswith("host/") for p in files) and any(
        p.startswith("environments/") for p in files
    )
    records = host.page.evaluate(EVERY_RECORD)
    stored = {**files, **records["values"]}
    assert len(records["values"]) > 10
    for where, text in stored.items():
        assert not SECRET_SHAPE.search(text), f"a secret's shape is readable in {where}"
        for secret in secrets:
            for start in range(0, len(secret) - 16 + 1, 8):
                assert secret[start : start + 16] not in text, f"part of a secret is in {where}"
    # the key that opens HOST_DIR stays inside the browser
    assert records["keys"] and all(k["extractable"] is False for k in records["keys"])
    assert records["exported"] and set(records["exported"]) == {"InvalidAccessError"}
    assert host.assert_custody() > 10
    host.assert_clean()


def test_the_custody_scan_catches_a_token_shaped_message_wherever_it_comes_from(
    host: HostPage,
) -> None:
    """The scan every journey runs can fail: a token-shaped string reaching the page — here
    posted to the window, as a frame could — is caught and named."""
    assert host.assert_custody() > 0
    host.page.evaluate("() => window.postMessage({ note: 'vbx_' + 'A'.repeat(43) }, '*')")
    host.page.wait_for_function("() => window.__received.some((m) => m.includes('vbx_'))")
    with pytest.raises(AssertionError, match="a secret reached the page"):
        host.assert_custody()
    host.page.close()  # what it received must not fail the after-test scan of this journey
