"""Every session a user or CI runs (README). Plain ``nox`` runs lint, tests, pyodide_tests, e2e.

- ``lint``: ruff check + ruff format --check, ESLint + Prettier --check, a syntax check of the JS.
- ``tests``: the core suite on CPython.
- ``pyodide_tests``: the same core suite inside real Pyodide (the pinned npm runtime, Node).
- ``build``: ``npm ci``, the create-asset Wasm module (sha256-pinned), then ``dist/``.
- ``e2e``: build, then pytest-playwright in headless Debian Chromium.
- ``serve``: build, then serve ``dist/`` on 127.0.0.1 and print the URL.
- ``bench``: benchmarks that print figures and ratios (no timing assertions anywhere else).

Chromium: Debian's ``/usr/bin/chromium`` (``apt-get install chromium``); never
``playwright install``. Override with ``VOICEBOX_CHROMIUM=/path/to/chromium``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["lint", "tests", "pyodide_tests", "e2e"]
nox.options.reuse_existing_virtualenvs = True
nox.options.default_venv_backend = "venv"

PYTHON = "3.11"
RUNTIME = ["pydantic==2.14.4", "jinja2==3.1.6"]
TEST = [
    *RUNTIME,
    "pytest==9.2.0",
    "hypothesis==6.155.2",
    "jsonschema==4.26.0",
    "pillow==13.0.0",
    "wasmtime==50.0.1",  # runs the create-asset module and the plugins on CPython (tests/tool)
    # the reference Extism runtime (its kernel on wasmtime; a 9.6 MB manylinux wheel): our
    # modules must be real Extism plugins (tests/tool/test_extism_reference.py)
    "extism==1.1.1",
    "extism-sys==1.41.0",
]
SERVER = [  # the [server] extra (pyproject.toml) and everything it pulls in, pinned
    "starlette==1.10.0",
    "uvicorn==0.54.0",
    "websockets==17.4",
    "anyio==4.16.0",
    "click==8.5.1",
    "h11==0.16.0",
    "idna==3.20",
]
SERVER_TEST = [*SERVER, "httpx==0.28.1", "httpcore==1.0.9", "certifi==2026.10.19.post1"]
BUILD = ["build==1.6.1", "hatchling==1.33.0", "pyodide-lock==0.1.2", "packaging>=24"]
BROWSER = ["playwright==1.65.2", "pytest-playwright==0.10.0"]
# mypy strict, 0 errors (pyproject.toml [tool.mypy]): CI fails on a new one (issue 35)
MYPY_TARGETS = ["core", "browser_host", "server_host"]
E2E = [*TEST, *BROWSER, *SERVER_TEST]  # e2e/test_remote.py runs a voicebox-env serve


def _npm_ci(session: nox.Session) -> None:
    lock = ROOT / "package-lock.json"
    stamp = ROOT / "node_modules" / ".package-lock.json"
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    session.run("npm", "ci", "--no-audit", "--no-fund", external=True)


def _build(session: nox.Session) -> None:
    _npm_ci(session)
    if (ROOT / "wasm_tools" / "build.py").exists():
        session.run("python", "wasm_tools/build.py")
    session.run("python", "-m", "worker.sitebuild")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff lint and format check; mypy strict (``[tool.mypy]`` in pyproject.toml, issue 35) on
    ``core/`` and the two hosts, whose Pyodide-only modules are typed against ``stubs/``; ESLint
    (eslint.config.mjs) and Prettier --check on every JavaScript file we write (both pinned in
    package-lock.json); ``node --check`` on every shipped JavaScript module."""
    session.install("ruff==0.17.6", "mypy==2.4.1", *RUNTIME, *SERVER_TEST)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", *MYPY_TARGETS)
    _npm_ci(session)
    session.run("npx", "--no-install", "eslint", ".", external=True)
    session.run("npx", "--no-install", "prettier", "--check", ".", external=True)
    scripts = sorted(
        str(p.relative_to(ROOT))
        for folder in ("page", "worker", "wasm_tools")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in {".mjs", ".js"}
    )
    for script in scripts:
        session.run("node", "--check", script, external=True, silent=True)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The core, build and tool suites on CPython (tests/); tests/tool also drives the sandbox
    page in headless Chromium, so it builds the Wasm module and needs Debian's chromium;
    tests/server runs ``voicebox-env serve`` subprocesses on 127.0.0.1 (the [server] extra)."""
    session.install(*TEST, *BUILD, *BROWSER, *SERVER_TEST)
    _npm_ci(session)  # tests/build bundles the editor with the pinned esbuild
    session.run(
        "python", "-m", "pytest", "tests", *session.posargs, env={"HYPOTHESIS_PROFILE": "ci"}
    )


@nox.session(python=PYTHON)
def pyodide_tests(session: nox.Session) -> None:
    """The pure core suite inside real Pyodide under Node (tests/pyodide_runner.mjs)."""
    session.install(*BUILD, *RUNTIME)
    _npm_ci(session)
    session.run("python", "-m", "tests.pyodide_wheels")
    session.run("node", "tests/pyodide_runner.mjs", *session.posargs, external=True)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build ``dist/`` (static site, relative URLs only)."""
    session.install(*BUILD, *RUNTIME)
    _build(session)


@nox.session(python=PYTHON)
def e2e(session: nox.Session) -> None:
    """Build, then the end-to-end journeys in headless Chromium (e2e/)."""
    session.install(*BUILD, *E2E)
    _build(session)
    chromium = os.environ.get("VOICEBOX_CHROMIUM", "/usr/bin/chromium")
    if not shutil.which(chromium):
        session.error(
            f"{chromium} not found: apt-get install -y chromium (never playwright install)"
        )
    # the slowest journeys in the log: the suite's time is kept under CI's bound (≈ 60 of 90 min)
    session.run("python", "-m", "pytest", "e2e", "--durations=30", *session.posargs)


@nox.session(python=PYTHON)
def serve(session: nox.Session) -> None:
    """Build, then serve ``dist/`` on 127.0.0.1 (port from ``--port N`` or 8000); with
    ``--local-env DIR`` also an environment server and its runner (server_host/local_env.py)."""
    session.install(*BUILD, *RUNTIME, *SERVER)
    _build(session)
    # Ctrl+C: give it time to stop what --local-env started (SIGTERM, SIGKILL after 5 s each)
    # before nox would kill it (0.3 s by default)
    session.run(
        "python",
        "-m",
        "worker.sitebuild.serve",
        "--dir",
        "dist",
        *session.posargs,
        interrupt_timeout=20,
    )


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: print figures and ratios, write bench/results/ (see bench/README.md)."""
    session.install(*BUILD, *E2E)
    _build(session)
    session.run("python", "-m", "bench", *session.posargs)
