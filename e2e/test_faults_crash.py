"""The host worker dies (issue 10; SPEC §3, §4): the page says so, restarts it, and nothing
written before is lost.

How the page learns of it (page/host-client.mjs; docs/security.md, "Host crash"):
- the worker holds a Web Lock the page named, for its whole life; the page's queued request
  for it is granted the moment the worker is gone — a worker that closes itself fires no
  event at all, the lock does;
- an uncaught error in the worker after boot;
- a ping unanswered for ``hangAfterMs`` (60 s; lowered here) — a worker stuck in a loop.
Every call in flight is answered ``host-restarted`` (503), never silence.
"""

from __future__ import annotations

import time
from pathlib import Path

from playwright.sync_api import Worker

from core.refusals import REFUSALS, Code
from e2e.hostpage import HostPage

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
FILES = {f"before/{i}.txt": f"written before the crash #{i}\n".encode() * (i + 1) for i in range(8)}

# In the host worker: the commit of a write of a file named `stuck…` never finishes.
STALL_COMMIT = """() => {
  const move = FileSystemFileHandle.prototype.move;
  FileSystemFileHandle.prototype.move = function (...args) {
    if (String(args.at(-1)).startsWith("stuck")) { console.log("vbx-test: commit held"); return new Promise(() => {}); }
    return move.apply(this, args);
  };
}"""

SEND = """([project, path]) => {
  window.__pending = window.voicebox.host.call("file.write", { project, path }, { body: new TextEncoder().encode("never committed").buffer })
    .then(() => ({ ok: true }), (err) => ({ code: err.code, status: err.status, message: err.message }));
}"""


def _host_worker(host: HostPage) -> Worker:
    (worker,) = [w for w in host.page.workers if w.url.endswith("worker/host.mjs")]
    return worker


def _seed(host: HostPage) -> str:
    project = host.ok("project.create", {"name": "crash"})["result"]["project"]["id"]
    for path, data in FILES.items():
        host.ok("file.write", {"project": project, "path": path}, data)
    host.ok(
        "mailbox.send", {"project": project, "agent_id": "operator", "to": "runner", "text": "kept"}
    )
    return project


def _wait_ready_again(host: HostPage) -> float:
    started = time.monotonic()
    host.page.wait_for_function(
        "() => window.voicebox.host.state === 'ready' && window.voicebox.host.lastLoss !== null",
        timeout=90_000,
    )
    assert host.page.get_attribute("#status", "data-state") == "ready"
    return time.monotonic() - started


def _assert_nothing_lost(host: HostPage, project: str) -> None:
    walk = host.ok("file.walk", {"project": project})["result"]["files"]
    assert {f["path"] for f in walk} == set(FILES)
    for path, data in FILES.items():
        assert host.ok("file.read", {"project": project, "path": path})["body"] == data
    assert "kept" in str(host.ok("mailbox.read", {"project": project})["result"])
    verdict = host.ok("audit.verify")["result"]
    assert verdict["ok"], verdict


def test_a_host_worker_that_ends_itself_is_detected_restarted_and_nothing_is_lost(
    host: HostPage,
) -> None:
    project = _seed(host)
    worker = _host_worker(host)
    held: list[str] = []
    worker.on("console", lambda m: held.append(m.text))
    worker.evaluate(STALL_COMMIT)
    host.page.evaluate(SEND, [project, "stuck.txt"])
    deadline = time.monotonic() + 20
    while "vbx-test: commit held" not in held:
        assert time.monotonic() < deadline
        host.page.wait_for_timeout(20)

    ended_at = worker.evaluate("() => { setTimeout(() => self.close(), 0); return Date.now(); }")
    host.page.wait_for_function("() => window.voicebox.host.lastLoss !== null", timeout=10_000)
    loss = host.page.evaluate("() => window.voicebox.host.lastLoss")
    print(f"\ncrash detected {loss['at'] - ended_at} ms after the worker ended itself")
    assert loss["reason"] == "stopped"
    assert loss["pending"] == 1
    assert loss["at"] - ended_at < 2000

    pending = host.page.evaluate("() => window.__pending")
    assert pending["code"] == "host-restarted"
    assert pending["status"] == REFUSALS[Code.HOST_RESTARTED].status == 503
    assert host.page.get_attribute("#status", "data-state") == "restarting"
    notice = host.page.text_content("#host-notice") or ""
    assert "host-restarted" in notice and "1 call in flight" in notice
    SHOTS.mkdir(exist_ok=True)
    host.page.screenshot(path=str(SHOTS / "host-crash-restarting.png"))

    restart_s = _wait_ready_again(host)
    print(f"restarted and ready again in {restart_s:.2f} s")
    assert "was restarted" in (host.page.text_content("#host-notice") or "")
    host.page.screenshot(path=str(SHOTS / "host-crash-restarted.png"))
    _assert_nothing_lost(host, project)
    # the call whose commit never happened left nothing behind, not even a temporary
    assert host.refused("file.read", {"project": project, "path": "stuck.txt"})["code"] == (
        "file-not-found"
    )
    assert host.page.evaluate(
        """async (project) => { const root = await navigator.storage.getDirectory();
          const dir = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(project);
          const names = []; for await (const n of dir.keys()) names.push(n); return names.sort(); }""",
        project,
    ) == [".voicebox", "before"]
    # the page is usable as it was: no reload
    host.ok("file.write", {"project": project, "path": "after.txt"}, b"after")
    host.assert_clean()


def test_an_uncaught_error_in_the_host_worker_restarts_it(host: HostPage) -> None:
    project = _seed(host)
    _host_worker(host).evaluate("() => { setTimeout(() => { throw new Error('boom'); }, 0); }")
    _wait_ready_again(host)
    loss = host.page.evaluate("() => window.voicebox.host.lastLoss")
    assert (loss["reason"], loss["pending"]) == ("uncaught-error", 0)
    assert "boom" in loss["detail"]
    _assert_nothing_lost(host, project)
    assert [e for e in host.console_errors if "boom" not in e] == []


def test_a_hung_host_worker_is_found_by_its_silence_and_restarted(host: HostPage) -> None:
    project = _seed(host)
    host.page.evaluate("() => { window.voicebox.host.hangAfterMs = 3000; }")
    stuck_at = _host_worker(host).evaluate(
        "() => { setTimeout(() => { for (;;) {} }, 0); return Date.now(); }"
    )
    host.page.wait_for_function("() => window.voicebox.host.lastLoss !== null", timeout=20_000)
    loss = host.page.evaluate("() => window.voicebox.host.lastLoss")
    assert loss["reason"] == "hung"
    detected_ms = loss["at"] - stuck_at
    print(f"\nhang detected after {detected_ms} ms (bound 3000 ms + one ping period)")
    assert 3000 <= detected_ms <= 3000 + 2500
    _wait_ready_again(host)
    _assert_nothing_lost(host, project)
    host.assert_clean()
