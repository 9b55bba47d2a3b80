"""Fixtures for the end-to-end journeys in headless Debian Chromium (never a downloaded one).

The site is built by ``nox -s e2e`` before pytest runs; the suite refuses to run without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright

from e2e.hostpage import HostPage, assert_custody_of_every_page
from e2e.site import SiteRouter
from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from worker.sitebuild.serve import make_server

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("VOICEBOX_DIST", ROOT / "dist"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """Custody across every journey (SPEC §1, §4): after each test's body, while its pages are
    still open, no message any of its pages received holds a bearer or a host token."""
    result = yield
    assert_custody_of_every_page()
    return result


@pytest.fixture(scope="session")
def dist() -> Path:
    """The built site (``VOICEBOX_DIST`` overrides ``dist/``); fails clearly when missing."""
    if not (DIST / "site-manifest.json").exists():
        pytest.fail("dist/ is missing: run `nox -s e2e` (it builds the site first)")
    return DIST


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Launch Debian's Chromium headless with the flags this machine needs."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def router(dist: Path) -> SiteRouter:
    """A fresh router over ``dist`` (no server)."""
    return SiteRouter(dist)


@pytest.fixture
def site_context(browser: Browser, router: SiteRouter) -> Iterator[BrowserContext]:
    """A fresh browser context whose every request is served by :func:`router`."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    router.install(context)
    yield context
    context.close()


@pytest.fixture
def host(site_context: BrowserContext) -> HostPage:
    """A page of the site, booted and ready."""
    page = HostPage(site_context.new_page())
    page.open()
    return page


def launch_persistent(
    playwright: Playwright, user_data: Path, router: SiteRouter
) -> BrowserContext:
    """A persistent-profile Chromium (for restart journeys) routed through ``router``."""
    context = playwright.chromium.launch_persistent_context(
        str(user_data),
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        headless=True,
        viewport={"width": 1280, "height": 860},
        accept_downloads=True,
    )
    router.install(context)
    return context


@pytest.fixture(scope="session")
def real_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real source distribution from PyPI (jinja2 3.1.6), unpacked: the upload's input."""
    where = tmp_path_factory.mktemp("sdist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary=:all:",
            "-q",
            "--disable-pip-version-check",
            "-d",
            str(where),
            "jinja2==3.1.6",
        ],
        check=True,
    )
    (archive,) = where.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(where, filter="data")
    return where / "jinja2-3.1.6"


@pytest.fixture(scope="session")
def static_server(dist: Path) -> Iterator[str]:
    """``dist/`` on a real static server at 127.0.0.1 (with our recommended headers).

    Only for journeys that spawn nested workers (environment servers): Playwright routing does
    not serve a worker's own workers (microsoft/playwright#27376). The product needs no
    server; the test harness does here.
    """
    server = make_server(dist, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture
def served_context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh context for pages of :func:`static_server` (no routing)."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    yield context
    context.close()
