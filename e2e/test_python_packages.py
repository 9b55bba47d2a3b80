"""Packages offline in the person's Python runtime (issue 32 item 2; docs/python.md): the
runtime — and only the runtime — gets ``micropip``, pinned by version and sha256 in
worker/wheels.lock.json like the host's wheels; a pure wheel the person uploaded into the
project installs from the runtime's own copy of it (``emfs:``) with nothing fetched; asking an
index or a URL is refused with a sentence that says why (no network), not a stack trace."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path

from e2e.files_kit import file_entry, open_file, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import open_in_ui
from worker.sitebuild.wheels import load_lock

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_BOOT_MS = 120_000
WHEEL = "vbx_hello-1.0-py3-none-any.whl"

MAIN = f"""\
import micropip
await micropip.install("emfs:wheels/{WHEEL}")
import vbx_hello
print(vbx_hello.greet("Ada"))
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pure_wheel() -> bytes:
    """A minimal pure wheel, ``vbx_hello`` 1.0, built here with zipfile."""
    files = {
        "vbx_hello/__init__.py": b"def greet(name):\n    return f'hello {name}, from a wheel'\n",
        "vbx_hello-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: vbx-hello\n"
        b"Version: 1.0\n",
        "vbx_hello-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: e2e\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [_record_line(n, d) for n, d in files.items()]
    record.append("vbx_hello-1.0.dist-info/RECORD,,")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("vbx_hello-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return buffer.getvalue()


def _wait_status(host: HostPage, text: str) -> str:
    host.page.wait_for_function(
        "(t) => document.getElementById('python-status')?.textContent.includes(t)",
        arg=text,
        timeout=RUNTIME_BOOT_MS,
    )
    return host.page.text_content("#python-status") or ""


def _console(host: HostPage, code: str, status: str) -> str:
    before = len(host.page.text_content("#python-output") or "")
    host.page.evaluate("() => { document.getElementById('python-status').textContent = ''; }")
    console = host.page.locator("#python-console-input")
    console.fill(code)
    console.press("Enter")
    _wait_status(host, status)
    return (host.page.text_content("#python-output") or "")[before:]


def test_micropip_is_pinned_and_shipped_to_the_runtime_only(dist: Path) -> None:
    lock = load_lock(ROOT)
    (micropip,) = [w for w in lock.runtime_wheels if w.name == "micropip"]
    assert micropip.file == f"micropip-{micropip.version}-py3-none-any.whl"
    assert all(w.name != "micropip" for w in lock.wheels)  # never the host's
    manifest = json.loads((dist / "site-manifest.json").read_text(encoding="utf-8"))
    pins = {f["path"]: f["sha256"] for f in manifest["files"]}
    assert pins[f"runtime/wheels/{micropip.file}"] == micropip.sha256
    assert not any(p.startswith("pyodide/micropip") for p in pins)
    host_lock = json.loads((dist / "pyodide" / "pyodide-lock.json").read_text(encoding="utf-8"))
    assert "micropip" not in host_lock["packages"]


def test_micropip_installs_an_uploaded_wheel_offline_and_refuses_the_network_saying_why(
    host: HostPage,
) -> None:
    pid = host.ok("project.create", {"name": "pkgs"}, human=True)["result"]["project"]["id"]
    for path, data in (("main.py", MAIN.encode()), (f"wheels/{WHEEL}", pure_wheel())):
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    open_in_ui(host, pid, "files")
    open_file(host.page, "main.py")
    wait_editor(host.page)
    host.page.click("#python-run")  # top-level await in a file: micropip.install, then import
    status = _wait_status(host, "Exited with status")
    output = host.page.text_content("#python-output") or ""
    assert "status 0" in status, (status, output)
    assert "hello Ada, from a wheel" in output
    # the installed package stays for the console (same runtime, until it restarts)
    out = _console(host, "import vbx_hello; vbx_hello.greet('Bo')", "Exited with status 0")
    assert "hello Bo, from a wheel" in out
    # an index or a URL: refused with a sentence saying why, not a stack trace
    out = _console(host, "await micropip.install('requests')", "Exited with status 1")
    assert "NoNetworkError: Cannot install 'requests' from an index" in out, out
    assert "has no network" in out and "emfs:" in out and "Traceback" not in out
    url = "https://example.com/x-1.0-py3-none-any.whl"
    out = _console(host, f"await micropip.install('{url}')", "Exited with status 1")
    assert f"Cannot fetch {url}" in out and "Traceback" not in out, out
    # a package of the host's lock is not this runtime's either
    out = _console(host, "await micropip.install('jinja2')", "Exited with status 1")
    assert "NoNetworkError" in out and "Traceback" not in out, out


def test_a_py_files_context_menu_runs_it_and_other_files_have_no_run(host: HostPage) -> None:
    pid = host.ok("project.create", {"name": "menu"}, human=True)["result"]["project"]["id"]
    for path, data in (("tool.py", b"print('ran from the menu')\n"), ("notes.txt", b"x\n")):
        host.ok("file.write", {"project": pid, "path": path}, body=data, human=True)
    open_in_ui(host, pid, "files")
    host.page.click(file_entry("notes.txt"), button="right")
    host.page.wait_for_selector("#context-menu [data-action='open']")
    assert host.page.locator("#context-menu [data-action='run']").count() == 0
    host.page.keyboard.press("Escape")
    host.page.wait_for_selector("#context-menu", state="hidden")
    host.page.click(file_entry("tool.py"), button="right")  # not open yet: the menu opens it
    host.page.click("#context-menu [data-action='run']")
    status = _wait_status(host, "Exited with status")
    assert "status 0" in status
    assert host.page.text_content("#viewer-path") == "tool.py"
    assert "ran from the menu" in (host.page.text_content("#python-output") or "")
