"""Storage under faults (issue 10; SPEC §3, §5): a tab killed mid-write, and a full disk.

- Killed mid-write: a 20 MB write is in flight when the tab goes (closed, or its renderer
  killed). Reopened, the file's sha256 is the old bytes' or the new bytes', never anything
  else; the mailbox and the audit still parse and verify; no temporary is listed as a file,
  and a leftover one is swept.
- Full disk: with the origin's quota lowered through the DevTools protocol
  (``Storage.overrideQuotaForOrigin``), a write that does not fit is refused
  ``storage-quota-exceeded`` (507) — whether Chromium says ``QuotaExceededError`` or, for one
  large write from a worker, ``AbortError`` (checked against the quota, so an ``AbortError``
  with room to spare stays ``storage-failed``); no temporary is left, the old bytes stay, the
  audit records the refusal and verifies, and the host goes on answering.
- Read while overwritten: reads of a file the same host overwrites meanwhile each answer its
  old or its new bytes, whole, never a refusal (a ``getFile()`` snapshot taken before the move
  reads as NotReadableError or NotFoundError: the read starts again on a new one).
"""

from __future__ import annotations

import contextlib
import hashlib
import time

import pytest
from playwright.sync_api import BrowserContext, Worker
from playwright.sync_api import Error as PlaywrightError

from e2e.hostpage import HostPage
from e2e.site import ORIGIN

MB = 1 << 20
BIG = 20 * MB

# Send a write of `size` bytes, every byte `fill`, from the page and do not wait for it.
SEND_WRITE = """([project, path, fill, size]) => {
  const body = new Uint8Array(size).fill(fill).buffer;
  window.__write = window.voicebox.host.call("file.write", { project, path }, { body })
    .then(() => ({ ok: true }), (err) => ({ code: err.code, status: err.status, message: err.message }));
}"""

# Every name in the project's OPFS folder, as the browser has it (temporaries included).
RAW_NAMES = """async (project) => {
  const root = await navigator.storage.getDirectory();
  const dir = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(project);
  const names = [];
  for await (const name of dir.keys()) names.push(name);
  return names.sort();
}"""

# In the host worker: make one storage step hang (the write stays in flight) and say so.
STALL = """(step) => {
  const where = step === "move" ? FileSystemFileHandle.prototype : FileSystemWritableFileStream.prototype;
  const original = where[step];
  where[step] = function (...args) {
    const size = args[0]?.byteLength ?? 0;
    if (step === "write" && size < (1 << 20)) return original.apply(this, args);
    if (step === "move" && typeof args[0] === "string" && !args[0].startsWith("big")) return original.apply(this, args);
    if (step === "write") original.apply(this, args); // the bytes go to the browser, never closed
    console.log(`vbx-test: ${step} in flight`);
    return new Promise(() => {});
  };
}"""


# From the page: one loop overwrites `path` `rounds` times (round i: `round i` repeated
# 1 + 500·(i % 7) times, up to 34 KB) while three loops read it until the writes are done.
# Resolves how many reads answered, each distinct text read, and every refusal.
OVERWRITE_WHILE_READING = """async ([project, path, rounds]) => {
  const host = window.voicebox.host;
  const texts = new Set(), refused = [];
  let reads = 0, done = false;
  const writer = (async () => {
    for (let i = 0; i < rounds; i++) {
      const body = new TextEncoder().encode(`round ${i}\\n`.repeat(1 + (i % 7) * 500)).buffer;
      await host.call("file.write", { project, path }, { body });
    }
  })().finally(() => { done = true; });
  const reader = async () => {
    while (!done) {
      try {
        const { body } = await host.call("file.read", { project, path });
        texts.add(new TextDecoder().decode(body));
        reads++;
      } catch (err) { refused.push(`${err.code}: ${err.message}`); }
    }
  };
  await Promise.all([writer, reader(), reader(), reader()]);
  return { reads, texts: [...texts], refused };
}"""


def _sha(fill: int, size: int = BIG) -> str:
    return hashlib.sha256(bytes([fill]) * size).hexdigest()


def _host_worker(host: HostPage) -> Worker:
    (worker,) = [w for w in host.page.workers if w.url.endswith("worker/host.mjs")]
    return worker


def _open(context: BrowserContext) -> HostPage:
    host = HostPage(context.new_page())
    host.open()
    return host


def _seed(host: HostPage) -> str:
    project = host.ok("project.create", {"name": "killed mid-write"})["result"]["project"]["id"]
    host.page.evaluate(SEND_WRITE, [project, "big.bin", 1, BIG])
    assert host.page.evaluate("() => window.__write") == {"ok": True}
    letter = {"project": project, "agent_id": "operator", "to": "runner", "text": "before"}
    host.ok("mailbox.send", letter)
    return project


def _crash(host: HostPage) -> None:
    with host.page.expect_event("crash", timeout=10_000), contextlib.suppress(PlaywrightError):
        host.page.goto("chrome://crash", timeout=5000)


def _check_after_reopen(context: BrowserContext, project: str, new_fill: int) -> str:
    """Reopen the site; the file is old or new, nothing else; everything still parses."""
    host = _open(context)
    answer = host.ok("file.read", {"project": project, "path": "big.bin"})
    assert answer["body_sha256"] == answer["result"]["sha256"]
    got = answer["result"]["sha256"]
    assert got in (_sha(1), _sha(new_fill)), "the file is neither the old nor the new bytes"
    listed = host.ok("file.list", {"project": project})["result"]["entries"]
    assert [e["name"] for e in listed] == ["big.bin"]
    walked = host.ok("file.walk", {"project": project})["result"]["files"]
    assert [f["path"] for f in walked] == ["big.bin"]
    # the listing swept whatever temporary the killed write left behind
    assert [n for n in host.page.evaluate(RAW_NAMES, project) if n.startswith(".vbx-tmp-")] == []
    letters = host.ok("mailbox.read", {"project": project})["result"]
    assert "before" in str(letters)
    verdict = host.ok("audit.verify")["result"]
    assert verdict["ok"], verdict
    host.assert_clean()
    host.page.close()
    return "old" if got == _sha(1) else "new"


@pytest.mark.parametrize("step", ["write", "move"])
def test_a_tab_closed_while_a_20_mb_write_is_in_flight_leaves_the_old_bytes(
    site_context: BrowserContext, step: str
) -> None:
    host = _open(site_context)
    project = _seed(host)
    seen: list[str] = []
    worker = _host_worker(host)
    worker.on("console", lambda m: seen.append(m.text))
    worker.evaluate(STALL, step)
    host.page.evaluate(SEND_WRITE, [project, "big.bin", 2, BIG])
    deadline = time.monotonic() + 30
    while f"vbx-test: {step} in flight" not in seen:
        assert time.monotonic() < deadline, seen
        host.page.wait_for_timeout(20)
    if step == "move":
        # the new bytes are complete in the temporary: only the rename was missing
        names = host.page.evaluate(RAW_NAMES, project)
        assert any(n.startswith(".vbx-tmp-") for n in names), names
    host.page.close()
    assert _check_after_reopen(site_context, project, 2) == "old"


def test_a_tab_killed_at_random_moments_of_a_20_mb_write_leaves_old_or_new_bytes(
    site_context: BrowserContext,
) -> None:
    host = _open(site_context)
    project = _seed(host)
    host.page.close()
    outcomes = []
    for round_, delay_ms in enumerate([0, 60, 200, 500]):
        host = _open(site_context)
        # each round overwrites with the new bytes, then the tab dies after `delay_ms`
        host.page.evaluate(SEND_WRITE, [project, "big.bin", 1, BIG])
        assert host.page.evaluate("() => window.__write") == {"ok": True}
        host.page.evaluate(SEND_WRITE, [project, "big.bin", 3 + round_, BIG])
        host.page.wait_for_timeout(delay_ms)
        if round_ % 2:
            host.page.close()  # the tab is closed
        else:
            _crash(host)  # the tab's renderer — page and workers — is killed outright
            host.page.close()
        outcomes.append(_check_after_reopen(site_context, project, 3 + round_))
    print(f"\nkilled mid-write, outcome per round: {outcomes}")


# ------------------------------------------------------------------------------- full disk


# The offline cache precaches the whole site (~18 MB) once the page is idle after ready; its
# bytes count against the same quota, so the room is measured after it has installed.
OFFLINE_CACHE_INSTALLED = """() => Promise.race([
  navigator.serviceWorker.ready.then(() => true),
  new Promise((resolve) => setTimeout(() => resolve(false), 60000)),
])"""


def _lower_quota(host: HostPage, room: int) -> None:
    assert host.page.evaluate(OFFLINE_CACHE_INSTALLED), "the offline cache never installed"
    cdp = host.page.context.new_cdp_session(host.page)
    usage = cdp.send("Storage.getUsageAndQuota", {"origin": ORIGIN})["usage"]
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": ORIGIN, "quotaSize": usage + room})
    assert cdp.send("Storage.getUsageAndQuota", {"origin": ORIGIN})["overrideActive"]


def _lift_quota(host: HostPage) -> None:
    cdp = host.page.context.new_cdp_session(host.page)
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": ORIGIN})


def _write(host: HostPage, project: str, path: str, fill: int, size: int) -> dict:
    host.page.evaluate(SEND_WRITE, [project, path, fill, size])
    return host.page.evaluate("() => window.__write")


def test_a_write_that_does_not_fit_the_quota_is_refused_and_leaves_nothing(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "full disk"})["result"]["project"]["id"]
    assert _write(host, project, "keep.bin", 7, 200_000) == {"ok": True}
    _lower_quota(host, 4 * MB)

    refused = _write(host, project, "keep.bin", 8, BIG)
    assert (refused.get("code"), refused.get("status")) == ("storage-quota-exceeded", 507), refused
    assert _write(host, project, "new.bin", 9, BIG)["code"] == "storage-quota-exceeded"

    assert host.page.evaluate(RAW_NAMES, project) == [".voicebox", "keep.bin"]
    kept = host.ok("file.read", {"project": project, "path": "keep.bin"})
    assert kept["result"]["sha256"] == _sha(7, 200_000)
    records = host.ok("audit.list", {"op": "file.write", "limit": 2})["result"]["records"]
    assert [(r["decision"], r["rule"]) for r in records] == [
        ("refused", "storage-quota-exceeded"),
        ("refused", "storage-quota-exceeded"),
    ]
    assert records[0]["project"] == project
    assert host.ok("audit.verify")["result"]["ok"]
    # the host is not wedged: what fits is still written
    assert _write(host, project, "small.bin", 10, MB) == {"ok": True}
    host.assert_clean()


def test_an_abort_error_is_named_quota_only_when_the_quota_is_what_stopped_it(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "abort"})["result"]["project"]["id"]
    assert _write(host, project, "keep.bin", 7, 1000) == {"ok": True}
    # what Chromium gives for one large write from a worker over quota (PLATFORM.md)
    _host_worker(host).evaluate(
        """() => { FileSystemWritableFileStream.prototype.write = function () {
          return Promise.reject(new DOMException("Failed to write data to data pipe", "AbortError")); }; }"""
    )
    _lower_quota(host, 4 * MB)
    over = _write(host, project, "keep.bin", 8, BIG)
    assert over.get("code") == "storage-quota-exceeded", over
    _lift_quota(host)
    fits = _write(host, project, "keep.bin", 8, MB)
    assert fits.get("code") == "storage-failed", fits
    assert "AbortError" in fits["message"]
    assert host.page.evaluate(RAW_NAMES, project) == [".voicebox", "keep.bin"]
    assert host.ok("file.read", {"project": project, "path": "keep.bin"})["body"] == b"\x07" * 1000
    rules = [
        r["rule"]
        for r in host.ok("audit.list", {"op": "file.write", "limit": 2})["result"]["records"]
    ]
    assert rules == ["storage-failed", "storage-quota-exceeded"]
    assert host.ok("audit.verify")["result"]["ok"]


def test_reads_of_a_file_being_overwritten_answer_its_old_or_new_bytes_never_a_refusal(
    host: HostPage,
) -> None:
    rounds = 80
    project = host.ok("project.create", {"name": "overwritten"})["result"]["project"]["id"]
    host.ok("file.write", {"project": project, "path": "counter.txt"}, b"round -1\n")
    seen = host.page.evaluate(OVERWRITE_WHILE_READING, [project, "counter.txt", rounds])
    print(f"\n{seen['reads']} reads during {rounds} overwrites, {len(seen['texts'])} versions seen")
    assert seen["refused"] == []
    written = {"round -1\n"} | {f"round {i}\n" * (1 + (i % 7) * 500) for i in range(rounds)}
    assert set(seen["texts"]) <= written, "a read answered bytes no write wrote (a mix)"
    assert len(seen["texts"]) > 2, "the reads ran while the file was overwritten"
    last = host.ok("file.read", {"project": project, "path": "counter.txt"})["body"]
    assert last == f"round {rounds - 1}\n".encode() * (1 + ((rounds - 1) % 7) * 500)
    host.assert_clean()
