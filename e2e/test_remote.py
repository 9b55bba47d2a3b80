"""A remote environment through the real UI (issue 15): ``voicebox-env serve`` on a free
127.0.0.1 port, holding a project made of a real unpacked sdist from PyPI (pytz 2024.2: its
Python sources, text files and about 600 binary TZif files), paired from the page by URL +
one-time code; its projects listed, its tree opened, the project exported and every file of
the archive compared by sha256 with the server's disk; no bearer or host token in anything the
page received nor in clear in OPFS or IndexedDB; the server killed (``environment-unreachable``)
and restarted (reconnected, pairing intact); revoked from the page (the server closes the
channel 1008, the next call is ``pairing-revoked``) and by ``voicebox-env revoke`` — shown on
the Environments surface as it happens, without a reload or a new rendering (issue 29 item 15).

The sdist is fetched at test set-up (``pip download --no-binary :all: --no-deps``) into a cache
outside the repository and checked against a pinned sha256. The site is served from 127.0.0.1
with the worker CSP naming the server's origin (``--peer-origin``). Every wait is bounded; the
server and the static site are always stopped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page

from e2e.hostpage import SECRET_SHAPE, HostPage
from e2e.test_faults_custody import EVERY_FILE, EVERY_RECORD
from e2e.test_peers import READ_SECRETS, _tool
from tests.server.harness import Server, cli
from worker.sitebuild.serve import make_server

SDIST = "pytz==2024.2"
SDIST_FILE = "pytz-2024.2.tar.gz"
SDIST_SHA256 = "2aa355083c50a0f93fa581709deac0c9ad65cca8a9e9beac660adcbd493c798a"
CACHE = Path(os.environ.get("VOICEBOX_CACHE", Path.home() / ".cache" / "voicebox")) / "sdists"
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
UI_S = 60_000  # ms: one UI step under a loaded machine


def fetch_sdist() -> Path:
    """The pinned sdist in the cache (downloaded once with pip, sha256 checked every time)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / SDIST_FILE
    if not archive.is_file():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-q",
                "--disable-pip-version-check",
                "-d",
                str(CACHE),
                SDIST,
            ],
            check=True,
            timeout=300,
        )
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert digest == SDIST_SHA256, f"{SDIST_FILE} is not the pinned file ({digest})"
    return archive


@pytest.fixture(scope="module")
def sdist_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist unpacked (its top folder)."""
    where = tmp_path_factory.mktemp("remote-sdist")
    with tarfile.open(fetch_sdist()) as tar:
        tar.extractall(where, filter="data")
    (top,) = where.iterdir()
    return top


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pair_code(root: Path) -> str:
    done = cli(root, "pair-code")
    assert done.returncode == 0, done.stderr
    return next(x for x in done.stdout.splitlines() if x.startswith("pairing code")).split()[-1]


def _disk_files(folder: Path) -> dict[str, str]:
    """Every file of a project folder on the server's disk (its own ``.voicebox`` aside):
    project path → sha256."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != ".voicebox"
    }


class Rig:
    """The environment server and the static site, started in the order their headers need:
    the server's port is chosen first (the site's worker CSP names it), the site's origin is
    the server's ``--allow-origin``."""

    def __init__(self, root: Path, dist: Path) -> None:
        self.port = _free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.site = make_server(dist, 0, peer_origins=(self.origin,))
        self.site_thread = threading.Thread(target=self.site.serve_forever, daemon=True)
        self.site_thread.start()
        self.site_url = f"http://127.0.0.1:{self.site.server_address[1]}/"
        self.server = Server(
            root,
            name="build-box",
            serve_args=("--port", str(self.port), "--allow-origin", self.site_url.rstrip("/")),
        )

    def start_server(self) -> None:
        self.server.url = ""  # read again from the new process (the same port)
        self.server.start()

    def close(self) -> None:
        self.server.stop()
        self.site.shutdown()
        self.site.server_close()


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        made.start_server()
        yield made
    finally:
        made.close()
        print(made.server.text())  # shown by pytest when the test failed


def _fill_server_project(rig: Rig, tree: Path) -> tuple[str, dict[str, str]]:
    """A project on the server (created by its operator), the sdist's files put in its folder
    by another program; returns its id and its files' sha256 as on disk."""
    bearer = rig.server.pair()
    pid = rig.server.create_project(bearer, "pytz-2024.2")
    folder = rig.server.root / "projects" / pid
    for source in tree.rglob("*"):
        if source.is_file():
            target = folder / source.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    files = _disk_files(folder)
    assert len(files) >= 200
    assert any(b"\x00" in (folder / p).read_bytes() for p in files), "binary files too"
    return pid, files


def _state_of(page: Page, name: str) -> str:
    return page.locator(f"tr[data-env='{name}'] .env-state").get_attribute("data-state") or ""


def _environments(page: Page) -> None:
    page.click("nav >> text=Environments")
    page.wait_for_selector("#remote-form", timeout=UI_S)


def _revocation_notice(page: Page) -> str:
    """The notice that answers a revoke from the page once shown, or the error shown instead
    (or, past the bound, whatever is shown)."""
    deadline = time.monotonic() + UI_S / 1000
    shown: list[str] = []
    while time.monotonic() < deadline:
        shown = page.evaluate(
            "() => [...document.querySelectorAll('.alert-info > span, .alert-error')]"
            ".map((e) => e.textContent)"
        )
        for text in shown:
            if text.startswith("Revoked:"):
                return text
        if page.query_selector(".alert-error"):
            break
        time.sleep(0.2)
    return " | ".join(shown)


def _wait_state(host: HostPage, name: str, want: set[str], bound_s: float) -> str:
    """Re-render the Environments surface until the remote's state is one of ``want``."""
    deadline = time.monotonic() + bound_s
    state = ""
    while time.monotonic() < deadline:
        _environments(host.page)
        host.page.wait_for_selector(f"tr[data-env='{name}'] .env-state", timeout=UI_S)
        state = _state_of(host.page, name)
        if state in want:
            return state
        time.sleep(0.5)
    return state


def _add_remote(host: HostPage, rig: Rig) -> dict[str, str]:
    page = host.page
    _environments(page)
    page.fill("#remote-url", rig.server.url)
    page.fill("#remote-code", _pair_code(rig.server.root))
    page.click("#add-remote")
    row = page.wait_for_selector("tr[data-env='build-box']", timeout=UI_S)
    assert row is not None
    identity = httpx.get(f"{rig.origin}/api/identity", timeout=10).json()
    shown = page.locator("tr[data-env='build-box'] .env-fingerprint").inner_text()
    assert shown == identity["fingerprint"]
    assert page.locator("tr[data-env='build-box'] .env-origin").inner_text() == rig.origin
    return identity


def _secrets_at_rest(host: HostPage) -> set[str]:
    opened = host.page.evaluate(READ_SECRETS, ["voicebox-host", "host"])["opened"]
    return {s for text in opened.values() for s in SECRET_SHAPE.findall(text)}


def _assert_nothing_in_clear(host: HostPage, secrets: set[str]) -> None:
    files = host.page.evaluate(EVERY_FILE)
    records = host.page.evaluate(EVERY_RECORD)
    stored = {**files, **records["values"]}
    assert any(p.startswith("host/") for p in files) and len(records["values"]) > 5
    for where, text in stored.items():
        assert not SECRET_SHAPE.search(text), f"a secret's shape is readable in {where}"
        for secret in secrets:
            for start in range(0, len(secret) - 16 + 1, 8):
                assert secret[start : start + 16] not in text, f"part of a secret is in {where}"


def test_pair_a_remote_by_code_browse_export_it_and_lose_it_without_a_credential_in_the_page(
    browser: Browser, rig: Rig, sdist_tree: Path, tmp_path: Path
) -> None:
    pid, disk = _fill_server_project(rig, sdist_tree)
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        identity = _add_remote(host, rig)
        key = identity["envKey"]

        # its projects, its tree (read-only), the export, all through the page
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{pid}']", timeout=UI_S)
        page.click(f"tr[data-project='{pid}'] button:text-is('Files')")
        page.wait_for_selector("#peer-files", timeout=UI_S)
        shown = page.locator("#peer-files tbody tr").evaluate_all(
            "(rows) => rows.map((r) => r.dataset.path)"
        )
        assert set(disk) <= set(shown)
        with page.expect_download(timeout=UI_S * 3) as download_info:
            page.click(f"tr[data-project='{pid}'] button:text-is('Export .zip')")
        archive = tmp_path / "remote.zip"
        download_info.value.save_as(archive)
        with zipfile.ZipFile(archive) as zf:
            exported = {
                n: hashlib.sha256(zf.read(n)).hexdigest()
                for n in zf.namelist()
                if not n.endswith("/") and not n.startswith(".voicebox/")
            }
        assert exported == disk
        assert _wait_state(host, "build-box", {"connected"}, 10) == "connected"
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{pid}']", timeout=UI_S)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "remote-paired.png"), full_page=False)

        # a fenced command, sent by the host with the bearer it holds: refused while the
        # operator has exec off, then it runs in the project's folder on the server
        page.click(f"tr[data-project='{pid}'] button:text-is('Command…')")
        page.fill("#command-argv", "printf\nhello %s\nremote")
        page.click("#run-command")
        page.wait_for_selector(".alert-error .refusal-code", timeout=UI_S)
        assert page.text_content(".alert-error .refusal-code") == "tool-disabled"
        done = cli(rig.server.root, "policy", "--exec", "on")
        assert done.returncode == 0, done.stderr
        page.click("#run-command")
        page.wait_for_selector("#command-output", timeout=UI_S)
        assert page.text_content("#command-output") == "hello remote"
        assert page.text_content("#command-status").startswith("exit status 0")
        page.select_option("#command-kind", "git/init")
        page.click("#run-command")
        page.wait_for_function(
            "() => document.querySelector('#command-output')?.textContent === ''", timeout=UI_S
        )
        assert (rig.server.root / "projects" / pid / ".git").is_dir()

        # custody: nothing the page received, nothing at rest in clear
        secrets = _secrets_at_rest(host)
        assert any(s.startswith("vbx_") for s in secrets), "the remote's bearer is sealed here"
        assert any(s.startswith("vbh_") for s in secrets)
        received = "\n".join(host.received())
        assert "vbx_" not in received and "vbh_" not in received
        for secret in secrets:
            for start in range(0, len(secret) - 12 + 1, 4):
                assert secret[start : start + 12] not in received
        _assert_nothing_in_clear(host, secrets)

        # kill the server: calls are environment-unreachable; restart: reconnects, same pairing
        rig.server.stop()
        assert _tool(host, key, "projects.list", {})["refusal"]["code"] == (
            "environment-unreachable"
        )
        assert _wait_state(host, "build-box", {"unreachable", "reconnecting"}, 30) in {
            "unreachable",
            "reconnecting",
        }
        rig.start_server()
        assert _wait_state(host, "build-box", {"connected"}, 45) == "connected"
        listed = _tool(host, key, "projects.list", {})
        assert listed["ok"], listed
        assert [p["id"] for p in listed["result"]["result"]["projects"]] == [pid]

        # revoke from the page: the server closes the channel (1008), the next call says so
        _environments(page)
        page.click("button[aria-label='Revoke build-box']")
        page.click("dialog .dialog-confirm")
        notice = _revocation_notice(page)  # or the error shown instead, to say what went wrong
        assert re.fullmatch(r"Revoked: 1 live channel\(s\) closed\. Audit record #\d+\.", notice), (
            notice
        )
        assert _tool(host, key, "projects.list", {})["refusal"]["code"] == "pairing-revoked"
        assert _wait_state(host, "build-box", {"revoked"}, 10) == "revoked"

        # remove, pair again with a new code; then the operator revokes it on the server
        page.click("button[aria-label='Remove build-box']")
        page.click("dialog .dialog-confirm")
        page.wait_for_selector("tr[data-env='build-box']", state="detached", timeout=UI_S)
        _add_remote(host, rig)
        assert _tool(host, key, "projects.list", {})["ok"]
        # the surface shown now is not rendered again: the host tells the page (issue 29 15)
        page.evaluate("() => { document.getElementById('env-table').dataset.shownOnce = 'yes'; }")
        done = cli(rig.server.root, "revoke", "--env-key", key)
        assert done.returncode == 0, done.stderr
        page.wait_for_selector(
            "tr[data-env='build-box'] .env-state[data-state='revoked']", timeout=20_000
        )
        assert page.text_content("tr[data-env='build-box'] .env-paired") == "revoked"
        assert page.locator("button[aria-label='Revoke build-box']").count() == 0
        assert page.get_attribute("#env-table", "data-shown-once") == "yes", "not a re-render"
        assert _tool(host, key, "projects.list", {})["refusal"]["code"] == "pairing-revoked"

        assert host.assert_custody() > 20
        host.assert_clean()
    finally:
        context.close()
