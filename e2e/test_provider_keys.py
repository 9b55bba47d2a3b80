"""Settings → Provider keys through the real page (issue 31 "Keys"): a key typed into the
password field reaches the host in one message and is never seen again by the page — not in
any message a worker or frame posts to it, not in localStorage, sessionStorage, the URL, the
history's state or any IndexedDB value — neither whole nor as any 12-character fragment. The
list shows its fingerprint, survives a reload, and Remove (confirmed) takes it away."""

from __future__ import annotations

import hashlib
import json

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.tray_kit import go

VALUE = "sk-canary-Qz7Wm2Lx9Pv4Rt6Yk1Hn8Bd3Fj5Gs0Ce"

PAGE_READABLE = """async () => {
  const out = [location.href, JSON.stringify(history.state), document.documentElement.outerHTML];
  for (const store of [localStorage, sessionStorage])
    for (let i = 0; i < store.length; i++) out.push(store.key(i), store.getItem(store.key(i)));
  for (const { name } of await indexedDB.databases()) {
    const db = await new Promise((ok, err) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result); r.onerror = () => err(r.error); });
    for (const store of db.objectStoreNames) {
      const values = await new Promise((ok) => { const r = db.transaction(store).objectStore(store).getAll(); r.onsuccess = () => ok(r.result); });
      for (const v of values) out.push(v instanceof CryptoKey ? "[key]" : (JSON.stringify(v) ?? String(v)));
    }
    db.close();
  }
  out.push(...(window.__received || []));
  return out;
}"""


def _scan(host: HostPage) -> list[str]:
    """Every piece of text the page can read that holds the value or a 12-character
    fragment of it (the field's own value included: the DOM is scanned)."""
    texts = host.page.evaluate(PAGE_READABLE)
    fragments = {VALUE[i : i + 12] for i in range(len(VALUE) - 11)}
    return [t[:120] for t in texts if isinstance(t, str) and any(f in t for f in fragments)]


def test_a_provider_key_set_in_settings_is_never_readable_by_the_page(host: HostPage) -> None:
    page = host.page
    go(page, "settings")
    page.wait_for_selector("#key-form")
    page.select_option("#key-provider", "openai")
    assert page.input_value("#key-variable") == "OPENAI_API_KEY"
    page.fill("#key-value", VALUE)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#keys-table tr[data-variable='OPENAI_API_KEY']")
    assert page.input_value("#key-value") == ""
    fingerprint = hashlib.sha256(VALUE.encode()).hexdigest()[:8]
    row = page.locator("#keys-table tr[data-variable='OPENAI_API_KEY']")
    assert row.locator(".fingerprint").inner_text() == fingerprint
    assert _scan(host) == []

    # a key the host would refuse is said as it is typed (its own sentence), and neither sent
    # nor asked "Replace OPENAI_API_KEY?" for (stop 46's tryout: the dialog came first)
    page.select_option("#key-provider", "openai")
    page.fill("#key-value", "sk-short")
    page.wait_for_selector("#key-value-rule:has-text('must be 16–512 characters')")
    page.click("#key-form button[type=submit]")
    assert page.evaluate("() => document.querySelector('dialog[open]')") is None
    assert page.get_attribute("#key-value", "aria-invalid") == "true"
    page.fill("#key-value", "sk-with a space-0123456789")
    page.wait_for_selector("#key-value-rule:has-text('holds a space')")
    page.fill("#key-value", "")
    refused = host.ok("audit.list", {"op": "keys.set"})["result"]["records"]
    assert [r["decision"] for r in refused] == ["admitted"]  # nothing was sent

    # a forbidden variable is said as it is typed, with the host's reason, and not sent; the
    # host refuses it all the same when asked (it decides), saying no key
    page.fill("#key-variable", "LD_PRELOAD")
    page.wait_for_selector("#key-variable-rule:has-text('the loader puts into every program')")
    page.fill("#key-value", VALUE)
    page.click("#key-form button[type=submit]")
    assert page.evaluate("() => document.querySelector('dialog[open]')") is None
    assert page.get_attribute("#key-variable", "aria-invalid") == "true"
    said = page.inner_text("#key-variable-rule")
    answer = host.call(
        "keys.set", {"provider": "openai", "variable": "LD_PRELOAD", "value": VALUE}, human=True
    )
    assert not answer["ok"], answer
    refusal = answer["refusal"]
    assert (refusal["code"], refusal["message"]) == ("args-invalid", said)
    assert VALUE not in json.dumps(refusal)
    page.select_option("#key-provider", "anthropic")  # the provider's variable: checked again
    assert page.inner_text("#key-variable-rule") == ""
    assert page.get_attribute("#key-variable", "aria-invalid") is None
    page.fill("#key-value", "")
    assert _scan(host) == []

    records = host.ok("audit.list", {"op": "keys.set"})["result"]["records"]
    # newest first: the refusal is the call above, the form sent nothing more
    assert [r["decision"] for r in records] == ["refused", "admitted"]
    assert [r["details"].get("fingerprint") for r in records if r["decision"] == "admitted"] == [
        fingerprint
    ]

    host.reload()
    go(page, "settings")
    page.wait_for_selector("#keys-table tr[data-variable='OPENAI_API_KEY']")
    assert row.locator(".fingerprint").inner_text() == fingerprint
    assert _scan(host) == []

    row.locator("button", has_text="Remove").click()
    page.click("dialog button:has-text('Remove')")
    page.wait_for_selector("#keys-table", state="detached")
    assert host.ok("keys.list")["result"]["keys"] == []
    assert _scan(host) == []
    host.assert_clean()


def test_a_key_is_granted_and_revoked_per_paired_environment_in_settings(
    served_context: BrowserContext, static_server: str
) -> None:
    from e2e.test_peers import _boot, _create_and_pair

    host = _boot(served_context, static_server)  # a peer's worker needs the served site
    key = _create_and_pair(host)
    page = host.page
    go(page, "settings")
    page.wait_for_selector("#key-form")
    page.select_option("#key-provider", "anthropic")
    page.fill("#key-value", VALUE)
    page.click("#key-form button[type=submit]")
    switch = f"#keys-table tr[data-variable='ANTHROPIC_API_KEY'] input[data-env='{key}']"
    page.wait_for_selector(switch)
    assert not page.is_checked(switch)
    assert "studio" in page.inner_text("#keys-table tr[data-variable='ANTHROPIC_API_KEY']")
    page.check(switch)
    page.wait_for_selector("#keys-status:has-text('Granting ANTHROPIC_API_KEY: done')")
    assert host.ok("keys.list")["result"]["keys"][0]["granted"] == [key]
    page.uncheck(switch)
    page.wait_for_selector("#keys-status:has-text('Revoking ANTHROPIC_API_KEY: done')")
    assert host.ok("keys.list")["result"]["keys"][0]["granted"] == []
    rules = [r["rule"] for r in host.ok("audit.list", {"op": "keys.grant"})["result"]["records"]]
    assert rules == ["key-granted"]
    assert _scan(host) == []
    host.assert_clean()
