"""Peer environments in the browser (issue 4; SPEC §6, §10): an environment server in a worker
the host spawns, pairing, proxied calls, revocation, and exporting a peer project as a zip that
downloads through the page — with zero credentials reaching the page.

Served by a real static server (nested workers are not routed by Playwright); the recorder in
HostPage captures every message the page receives."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page

from e2e.hostpage import SECRET_SHAPE, HostPage

FILES = {
    "Проект-ü-📦/файл.txt": "Привет, мир — ünïcode ✓\n".encode(),
    "Проект-ü-📦/вложено/глубже/📄.md": b"# nested\n",
    "bin/blob.dat": bytes(range(256)) * 40,
    "README.txt": b"peer project\n",
}

READ_SECRETS = """
async ([dbName, folder]) => {
  // What the test needs to know the real secrets: open the sealed HOST_DIR documents with the
  // database's key (same-origin script can; a copy of the files alone cannot).
  const db = await new Promise((ok, err) => { const r = indexedDB.open(dbName);
    r.onsuccess = () => ok(r.result); r.onerror = () => err(r.error); });
  const key = await new Promise((ok) => { const r = db.transaction("keys").objectStore("keys").get("host-state");
    r.onsuccess = () => ok(r.result); });
  db.close();
  let dir = await navigator.storage.getDirectory();
  for (const part of folder.split("/")) dir = await dir.getDirectoryHandle(part);
  const out = {};
  const raw = {};
  for await (const [name, handle] of dir.entries()) {
    if (handle.kind !== "file") continue;
    let bytes;
    try { bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer()); } catch (err) {
      if (err.name === "NotFoundError") continue; // a temporary moved into place meanwhile
      throw err;
    }
    raw[name] = new TextDecoder("latin1").decode(bytes);
    if (bytes[0] === 0x56 && bytes[1] === 0x42 && bytes[2] === 0x58 && bytes[3] === 0x31) {
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.subarray(4, 16) }, key, bytes.subarray(16));
      out[name] = new TextDecoder().decode(plain);
    }
  }
  return { opened: out, raw };
}
"""


def _boot(context: BrowserContext, url: str) -> HostPage:
    host = HostPage(context.new_page())
    host.open(url)
    return host


def _tool(host: HostPage, env_key: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    # built-in tools have the same descriptor in every environment of this core: discover them
    # here, so a call to a revoked peer is still sent (and refused by the peer)
    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    descriptor = next(t["descriptorId"] for t in tools if t["name"] == tool)
    return host.call(
        "tool.call", {"envKey": env_key, "tool": tool, "descriptorId": descriptor, "args": args}
    )


def _secrets(page: Page) -> list[str]:
    found: list[str] = []
    for db, folder in (
        ("voicebox-host", "host"),
        ("voicebox-env-studio", "environments/studio/host"),
    ):
        docs = page.evaluate(READ_SECRETS, [db, folder])
        for raw in docs["raw"].values():
            assert not SECRET_SHAPE.search(raw), f"a secret is readable in clear in {folder}"
        for text in docs["opened"].values():
            found += SECRET_SHAPE.findall(text)
    return sorted(set(found))


def _assert_no_secret_reached_the_page(host: HostPage) -> int:
    secrets = _secrets(host.page)
    assert any(s.startswith("vbx_") for s in secrets), "the journey paired, so a bearer exists"
    assert any(s.startswith("vbh_") for s in secrets), "hosts have tokens"
    received = host.received()
    assert received, "the recorder saw no message"
    joined = "\n".join(received)
    assert "vbx_" not in joined and "vbh_" not in joined
    for secret in secrets:
        for start in range(0, len(secret) - 12 + 1):
            assert secret[start : start + 12] not in joined
    return len(received)


def _create_and_pair(host: HostPage) -> str:
    made = host.ok("env.create", {"name": "studio"}, human=True)["result"]["environment"]
    key = made["envKey"]
    assert host.refused("tool.discover", {"envKey": key})["code"] == "environment-not-paired"
    host.ok("env.pair", {"envKey": key}, human=True)
    return key


def test_export_a_peer_project_through_the_page_with_no_credential_in_the_page(
    served_context: BrowserContext, static_server: str, tmp_path: Path
) -> None:
    host = _boot(served_context, static_server)
    page = host.page
    key = _create_and_pair(host)
    made = _tool(host, key, "project.create", {"name": "Проект-ü-📦"})
    pid = made["result"]["result"]["project"]["id"]
    for path, data in FILES.items():
        wrote = _tool(
            host,
            key,
            "file.write",
            {"project": pid, "path": path, "content_b64": base64.b64encode(data).decode()},
        )
        receipt = wrote["result"]["receipt"]
        assert (receipt["rung"], receipt["env"], receipt["sha256"]) == (
            "local-write",
            key,
            hashlib.sha256(data).hexdigest(),
        )

    # export from the page's Environments surface: a real download
    page.click("nav >> text=Environments")
    page.click("button.env-open:text-is('studio')")
    page.wait_for_selector("#peer-projects")
    with page.expect_download() as download_info:
        page.click(f"tr[data-project='{pid}'] button:text-is('Export .zip')")
    first = tmp_path / "first.zip"
    download_info.value.save_as(first)
    assert page.locator("#peer-progress progress").get_attribute("value") not in (None, "0")

    with zipfile.ZipFile(first) as zf:
        names = zf.namelist()
        manifest_name = next(n for n in names if n.endswith("manifest.json") and "voicebox" in n)
        manifest = json.loads(zf.read(manifest_name))
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
        assert listed == {p: hashlib.sha256(d).hexdigest() for p, d in FILES.items()}
        for path, data in FILES.items():
            assert zf.read(path) == data
        assert manifest["name"] == "Проект-ü-📦"
        assert (
            manifest.get("source_env") == key
            or manifest.get("envKey") == key
            or key in json.dumps(manifest)
        )
        assert all(info.flag_bits & 0x800 for info in zf.infolist())

    # determinism: the same project exported twice is byte-identical
    exported = host.page.evaluate(
        """async ([key, pid]) => { const h = window.voicebox.host;
          const tools = (await h.call("tool.discover", {envKey: key})).result.tools;
          const d = tools.find((t) => t.name === "project.export").descriptorId;
          const a = await h.call("tool.call", {envKey: key, tool: "project.export", descriptorId: d, args: {project: pid}});
          const bytes = new Uint8Array(await a.stream.arrayBuffer());
          let s = ""; for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
          return btoa(s); }""",
        [key, pid],
    )
    assert base64.b64decode(exported) == first.read_bytes()

    # import it as a local project: byte-identical round trip
    imported = host.ok("project.import", {"name": "round trip"}, first.read_bytes())
    local = imported["result"]["project"]["id"]
    walk = host.ok("file.walk", {"project": local})["result"]["files"]
    back = {
        f["path"]: host.ok("file.read", {"project": local, "path": f["path"]})["body"] for f in walk
    }
    assert back == FILES

    count = _assert_no_secret_reached_the_page(host)
    assert count > 20
    host.assert_clean()


def test_revoke_answers_the_pending_call_and_stays_revoked_after_reload(
    served_context: BrowserContext, static_server: str
) -> None:
    host = _boot(served_context, static_server)
    page = host.page
    key = _create_and_pair(host)
    pid = _tool(host, key, "project.create", {"name": "big"})["result"]["result"]["project"]["id"]
    # a large file written straight into the peer's fenced OPFS root, so the export is slow
    page.evaluate(
        """async ([pid, mb]) => {
          let dir = await navigator.storage.getDirectory();
          for (const p of ["environments", "studio", "projects", pid]) dir = await dir.getDirectoryHandle(p);
          const w = await (await dir.getFileHandle("big.bin", { create: true })).createWritable();
          const block = crypto.getRandomValues(new Uint8Array(1 << 16));
          for (let i = 0; i < mb * 16; i++) await w.write(block);
          await w.close(); }""",
        [pid, 96],
    )
    outcome = page.evaluate(
        """async ([key, pid]) => { const h = window.voicebox.host;
          const tools = (await h.call("tool.discover", {envKey: key})).result.tools;
          const d = tools.find((t) => t.name === "project.export").descriptorId;
          let revoked = null;
          const pending = h.call("tool.call", {envKey: key, tool: "project.export", descriptorId: d, args: {project: pid}},
            { onChunk: () => { if (!revoked) revoked = h.call("env.revoke", {envKey: key}, {human: true}); } })
            .then(() => ({ code: "answered-ok" }), (e) => ({ code: e.code, message: e.message }));
          const call = await pending;
          const revocation = await revoked;
          return { call, revocation: { result: revocation.result, logged: revocation.logged } }; }""",
        [key, pid],
    )
    assert outcome["call"]["code"] == "pairing-revoked", outcome
    assert outcome["revocation"]["result"]["channelsClosed"] == 1
    logged = outcome["revocation"]["logged"]
    envs = host.ok("env.list")["result"]["environments"]
    assert [e["connected"] for e in envs if e["envKey"] == key] == [False]  # the 1008 close

    assert _tool(host, key, "projects.list", {})["refusal"]["code"] == "pairing-revoked"
    host.reload()
    assert _tool(host, key, "projects.list", {})["refusal"]["code"] == "pairing-revoked"
    # the page says revoked (not paired) and offers to pair again
    page.click("#surfaces button[data-surface='environments']")
    page.wait_for_selector("tr[data-env='studio'] .env-paired:text-is('revoked')")
    assert page.is_visible("tr[data-env='studio'] button:text-is('Pair again')")
    records = host.ok("audit.list", {"rule": "pairing-revoked"})["result"]["records"]
    revocations = [r for r in records if r["decision"] == "admitted"]
    assert [(r["seq"], r["op"]) for r in revocations] == [(logged, "env.revoke")]
    # the pending export and both later calls were refused with the same rule
    refused = [r for r in records if r["decision"] == "refused"]
    assert len(refused) == 3 and {r["op"] for r in refused} == {"tool.call"}
    _assert_no_secret_reached_the_page(host)


def test_a_channel_that_never_says_hello_is_closed_within_the_bound(
    served_context: BrowserContext, static_server: str
) -> None:
    host = _boot(served_context, static_server)
    key = _create_and_pair(host)
    assert key
    (peer,) = [w for w in host.page.workers if w.url.endswith("worker/peer.mjs")]
    probe = """async ([frame, envKey]) => {
      const channel = new MessageChannel();
      const started = performance.now();
      const closed = new Promise((resolve) => {
        channel.port1.onmessage = (e) => { if (e.data && e.data.close) resolve({ ...e.data.close, ms: performance.now() - started }); };
      });
      // the peer's own entry point for a new channel (what the host worker sends)
      self.dispatchEvent(new MessageEvent("message", { data: { kind: "connect", envKey }, ports: [channel.port2] }));
      if (frame !== null) channel.port1.postMessage({ text: frame });
      return await closed; }"""
    silent = peer.evaluate(probe, [None, key])
    assert (silent["code"], silent["reason"]) == (1008, "unauthenticated-call")
    assert 4500 <= silent["ms"] <= 5000 + 1500
    stranger = json.dumps({"type": "hello", "role": "environment", "bearer": "vbx_" + "A" * 43})
    forged = peer.evaluate(probe, [stranger, key])
    assert (forged["code"], forged["reason"]) == (1008, "bearer-refused")
    junk = peer.evaluate(probe, ['{"type": "execute"}', key])
    assert (junk["code"], junk["reason"]) == (1008, "unauthenticated-call")
    # seed 002 §1: a channel for an envKey the peer does not serve is unknown-environment
    # whatever its hello holds — before any bearer is looked at
    for frame in (stranger, '{"type": "execute"}'):
        elsewhere = peer.evaluate(probe, [frame, "ek_" + "0" * 32])
        assert (elsewhere["code"], elsewhere["reason"]) == (1008, "unknown-environment")
    unknown = host.call(
        "tool.call",
        {
            "envKey": "ek_" + "0" * 32,
            "tool": "projects.list",
            "descriptorId": "d_" + "0" * 24,
            "args": {},
        },
    )
    assert (unknown["refusal"]["code"], unknown["refusal"]["status"]) == (
        "unknown-environment",
        404,
    )
