"""The person's Python through the real UI in headless Chromium (issue 32; docs/python.md): a
.py file runs in a runtime of its own — a worker with its own Pyodide inside the opaque-origin
frame with connect-src 'none' — as __main__, its output streaming into the panel; the files it
writes are applied by the host (receipt, audit) and appear in the tree; Stop ends a busy loop
and a sleep by restarting the runtime; the console keeps its variables; hostile code reaches
no network, no storage and no reserved path, while the host keeps answering."""

from __future__ import annotations

import time

from e2e.files_kit import file_entry, open_file, set_editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import open_in_ui, shot

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
    host.page.wait_for_selector(file_entry("out/result.txt"), state="attached", timeout=10_000)
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
    shot(host.page, "python-run")
