"""The streamed download (issue 34; docs/archives.md §4, "Where the bytes go"): once the site's
service worker controls the page, the Export button's archive flows from the host worker
through the page into a one-time download URL the service worker answers with a stream — the
bytes are written to the saved file as they are made, never gathered into Blobs.

The laws: the streamed archive is the Blob archive byte for byte; a download cancelled by the
person leaves no file and no half-made export, and frees the host (its reading stops, its next
call is answered); the download URL answers once, and a guessed one never.

The site is on a real static server at 127.0.0.1 (``static_server``): the export's reader
lanes start there (Playwright routing serves no nested worker), as in a person's browser."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext
from playwright.sync_api import Error as PlaywrightError

from e2e.hostpage import HostPage
from e2e.test_export_memory import FILL

MB = 1 << 20

CONTROLLED = """
async () => {
  const registration = await navigator.serviceWorker.ready;
  return Boolean(registration.active) && navigator.serviceWorker.controller !== null;
}
"""

BLOB_EXPORT = """
async ([pid]) => {
  const answer = await window.voicebox.host.call("project.export", { project: pid });
  const bytes = new Uint8Array(await answer.stream.arrayBuffer());
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return { size: bytes.length,
           sha256: [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("") };
}
"""

STATUS_OF = "async (url) => { const r = await fetch(url); return [r.status, (await r.arrayBuffer()).byteLength]; }"


def _controlled_host(context: BrowserContext, url: str) -> HostPage:
    host = HostPage(context.new_page())
    host.open(url)
    host.page.wait_for_function(CONTROLLED, timeout=120_000)
    return host


def _project(host: HostPage, name: str, files: int, file_mb: int) -> str:
    pid = host.ok("project.create", {"name": name})["result"]["project"]["id"]
    host.ok("file.write", {"project": pid, "path": "notes/readme.txt"}, b"small and first\n")
    host.page.evaluate(FILL, [pid, files, file_mb])
    host.page.evaluate("() => voicebox.app.refresh()")
    return pid


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _export_button(host: HostPage, pid: str) -> str:
    host.page.click("nav >> text=Projects")
    selector = f"tr[data-project-id='{pid}'] button.project-export"
    host.page.wait_for_selector(selector)
    return selector


def _settled_bytes_read(host: HostPage) -> int | None:
    """The host's ``byte_path_bytes`` once two reads 300 ms apart agree (≤ 30 s): what a
    cancelled export read before its lanes stopped; None if it never settled."""
    deadline = time.monotonic() + 30
    read = None
    while time.monotonic() < deadline:
        runtime = host.ok("host.info")["result"]["runtime"]
        if runtime["byte_path_bytes"] == read:
            break  # settled: nothing more is being read
        read = runtime["byte_path_bytes"]
        host.page.wait_for_timeout(300)
    return read


def test_the_streamed_download_is_the_blob_archive_byte_for_byte_and_its_url_answers_once(
    served_context: BrowserContext, static_server: str, tmp_path: Path
) -> None:
    host = _controlled_host(served_context, static_server)
    page = host.page
    # 3 files of 9 MiB (over the one-piece bound: read in pieces) and a small one
    pid = _project(host, "Streamed ünïcode", 3, 9)
    button = _export_button(host, pid)
    with page.expect_download(timeout=120_000) as caught:
        page.click(button)
    download = caught.value
    saved = tmp_path / "streamed.zip"
    download.save_as(saved)
    assert download.failure() is None
    assert download.suggested_filename == "Streamed ünïcode.zip"  # the host's name, exact
    page.locator("#alerts .alert-info", has_text="streamed into the saved file").wait_for()
    # the URL: the site's own, a 128-bit token and nothing else
    prefix = static_server + "download/"
    assert download.url.startswith(prefix)
    token = download.url[len(prefix) :]
    assert len(token) == 32 and int(token, 16) >= 0

    blob = page.evaluate(BLOB_EXPORT, [pid])  # the same project through the Blob path
    assert saved.stat().st_size == blob["size"] > 27 * MB
    assert _sha256(saved) == blob["sha256"]

    # single use: asked again (the download finished), or a token never given, is 404, empty
    assert page.evaluate(STATUS_OF, download.url) == [404, 0]
    assert page.evaluate(STATUS_OF, prefix + "0" * 32) == [404, 0]
    refused = "Failed to load resource: the server responded with a status of 404 ()"
    assert host.console_errors == [refused, refused]  # those two answers, and nothing else
    host.console_errors.clear()
    host.assert_clean()


CHUNKS_SEEN = """
() => {
  // every message the page's workers posted to it (e2e/hostpage.py records them): a call's
  // chunk carrying bytes (`data`), or only their count (`bytes`)
  let chunks = 0, withBytes = 0, counted = 0;
  for (const text of window.__received) {
    let m;
    try { m = JSON.parse(text); } catch { continue; }
    if (m?.kind !== "chunk") continue;
    chunks += 1;
    if ("data" in m) withBytes += 1;
    else counted += Number(m.bytes) || 0;
  }
  return { chunks, withBytes, counted };
}
"""


def test_the_streamed_exports_bytes_go_from_the_host_worker_to_the_download_never_through_the_page(
    served_context: BrowserContext, static_server: str, tmp_path: Path
) -> None:
    """Issue 34, round 42: the streamed export's bytes go host worker → service worker on a
    port the page handed over; the page's thread is told only how many bytes went (its
    progress), and not one chunk of them reaches it — yet the saved file is the archive."""
    host = _controlled_host(served_context, static_server)
    page = host.page
    pid = _project(host, "Straight through", 3, 9)
    button = _export_button(host, pid)
    with page.expect_download(timeout=120_000) as caught:
        page.click(button)
    download = caught.value
    saved = tmp_path / "straight.zip"
    download.save_as(saved)
    assert download.failure() is None
    assert download.suggested_filename == "Straight through.zip"  # named by the host
    page.locator("#alerts .alert-info", has_text="streamed into the saved file").wait_for()
    seen = page.evaluate(CHUNKS_SEEN)
    assert seen["withBytes"] == 0  # no byte of the archive crossed the page's thread
    assert seen["chunks"] > 0 and seen["counted"] == saved.stat().st_size  # only their sizes
    page.locator("#archive-progress", has_text="— done").wait_for()

    blob = page.evaluate(BLOB_EXPORT, [pid])  # the same project through the Blob path
    assert saved.stat().st_size == blob["size"] > 27 * MB
    assert _sha256(saved) == blob["sha256"]
    host.assert_clean()


def test_a_cancelled_download_leaves_no_file_stops_the_export_and_frees_the_host(
    served_context: BrowserContext, static_server: str
) -> None:
    host = _controlled_host(served_context, static_server)
    page = host.page
    files, file_mb = 16, 10
    pid = _project(host, "Cancelled", files, file_mb)
    total = files * file_mb * MB
    before = host.ok("host.info")["result"]["runtime"]["byte_path_bytes"]
    button = _export_button(host, pid)
    with page.expect_download(timeout=120_000) as caught:
        page.click(button)
    download = caught.value
    download.cancel()
    assert download.failure() == "canceled"
    with pytest.raises(PlaywrightError, match="canceled"):
        download.path()  # no file: the browser removed what it had written
    page.wait_for_function(
        f"() => ({PROGRESS})().includes('cancelled: the download was stopped')", timeout=60_000
    )
    assert page.locator("#alerts .alert-info").count() == 0  # said once: beside its Cancel
    assert page.locator("#alerts .alert-error").count() == 0  # a cancel is not an error

    # the host is free: its next call is answered at once, and the cancelled export's reading
    # stopped before the end (the lanes stop before their next file)
    read = _settled_bytes_read(host)
    assert read is not None
    print(f"\ncancelled export: {(read - before) / MB:.1f} of {total / MB:.0f} MiB read")
    assert read - before < total
    small = host.ok("project.create", {"name": "after the cancel"})["result"]["project"]["id"]
    host.ok("file.write", {"project": small, "path": "a.txt"}, b"free\n")
    assert page.evaluate(BLOB_EXPORT, [small])["size"] > 0
    host.assert_clean()


PROGRESS = "() => document.getElementById('archive-progress')?.innerText ?? ''"


def test_a_new_export_clears_the_last_ones_done_bar_and_its_cancel_button_leaves_no_file(
    served_context: BrowserContext, static_server: str
) -> None:
    """Issue 34 (round 41): a new export's progress replaces the previous export's "done" bar
    as it starts; the in-page Cancel button drops the call (the host stops reading before the
    end and answers its next call), fails the download (no file kept) and says so — no error."""
    host = _controlled_host(served_context, static_server)
    page = host.page
    small = _project(host, "Small first", 1, 1)
    files, file_mb = 16, 10
    big = _project(host, "Cancelled in the page", files, file_mb)
    total = files * file_mb * MB
    with page.expect_download(timeout=120_000) as caught:
        page.click(_export_button(host, small))
    caught.value.path()
    page.locator("#archive-progress", has_text="— done").wait_for(timeout=60_000)
    before = host.ok("host.info")["result"]["runtime"]["byte_path_bytes"]

    with page.expect_download(timeout=120_000) as caught:
        page.click(_export_button(host, big))
        assert "done" not in page.evaluate(PROGRESS)  # cleared as the new export starts
    download = caught.value
    cancel = page.locator("#archive-progress button.export-cancel")
    cancel.click(timeout=30_000)
    with pytest.raises(PlaywrightError):
        download.path()  # the download failed: the browser keeps no file
    assert download.failure() is not None
    page.wait_for_function(
        f"() => ({PROGRESS})().includes('cancelled: the download was stopped')", timeout=60_000
    )
    assert page.locator("#alerts .alert-info").count() == 0  # said once: beside its Cancel
    assert "download was stopped — nothing was saved" in page.evaluate(PROGRESS)
    assert cancel.count() == 0  # the button goes with the export
    assert page.locator("#alerts .alert-error").count() == 0  # a cancel is not an error

    read = _settled_bytes_read(host)
    assert read is not None
    print(f"\ncancelled in the page: {(read - before) / MB:.1f} of {total / MB:.0f} MiB read")
    assert read - before < total
    assert page.evaluate(BLOB_EXPORT, [small])["size"] > 0  # the host is free
    host.assert_clean()


EXPIRES = """
async () => {
  let cancelled = null;
  const stream = new ReadableStream({ cancel(reason) { cancelled = String(reason); } });
  const channel = new MessageChannel();
  const said = [];
  channel.port1.onmessage = (event) => said.push(event.data);
  // the active worker of this page's registration: the controller, or (should the controller
  // be read as null for a moment after control was seen) the registration's active worker
  const worker = navigator.serviceWorker.controller ?? (await navigator.serviceWorker.ready).active;
  worker.postMessage({ kind: "download", name: "x.zip", stream }, [stream, channel.port2]);
  const started = performance.now();
  while (!said.some((m) => "done" in m) && performance.now() - started < 45_000)
    await new Promise((resolve) => setTimeout(resolve, 250));
  const url = said.find((m) => "url" in m)?.url ?? null;
  return { said, url, cancelled, waited_ms: performance.now() - started };
}
"""


def test_a_download_url_never_asked_for_expires_and_cancels_its_stream(
    served_context: BrowserContext, static_server: str
) -> None:
    host = _controlled_host(served_context, static_server)
    seen = host.page.evaluate(EXPIRES)
    assert seen["url"] is not None and seen["url"].startswith(static_server + "download/")
    assert {"done": False, "why": "expired"} in seen["said"]
    assert 25_000 <= seen["waited_ms"] < 45_000  # at its time (30 s), not before
    assert seen["cancelled"] == "the download was not started in time"
    assert host.page.evaluate(STATUS_OF, seen["url"]) == [404, 0]  # gone
    refused = "Failed to load resource: the server responded with a status of 404 ()"
    assert host.console_errors == [refused]
    host.console_errors.clear()
    host.assert_clean()
