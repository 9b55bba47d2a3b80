"""The offline cache's service worker as the build ships it (worker/sitebuild/offline.py;
SPEC §2): stamped with the build hash and exactly the pinned files, never shipped unstamped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worker.sitebuild.offline import StampError, stamp_service_worker
from worker.sitebuild.serve import SERVICE_WORKER_CSP, headers_for

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "page" / "sw.js"
FILES = [
    {"path": "index.html", "size": 10, "sha256": "a" * 64},
    {"path": "pyodide/pyodide.asm.wasm", "size": 20, "sha256": "b" * 64},
    {"path": "sw.js", "size": 30, "sha256": "c" * 64},
]


def _stamped(tmp_path: Path) -> str:
    return stamp_service_worker(TEMPLATE, tmp_path, "0123456789abcdef", FILES).read_text()


def test_the_shipped_worker_names_its_build(tmp_path: Path) -> None:
    assert 'const BUILD = "0123456789abcdef";' in _stamped(tmp_path)


def test_the_shipped_worker_lists_exactly_the_pinned_files_but_itself(tmp_path: Path) -> None:
    text = _stamped(tmp_path)
    listed = json.loads(re.search(r"const FILES = (\[.*?\]);", text).group(1))
    assert listed == [["index.html", "a" * 64], ["pyodide/pyodide.asm.wasm", "b" * 64]]


def test_a_template_without_its_placeholders_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "sw.js"
    bare.write_text("const BUILD = 'x';\n")
    with pytest.raises(StampError):
        stamp_service_worker(bare, tmp_path, "0123456789abcdef", FILES)


def test_the_service_worker_script_gets_its_own_csp() -> None:
    assert headers_for("sw.js")["Content-Security-Policy"] == SERVICE_WORKER_CSP
    assert "'wasm-unsafe-eval'" not in SERVICE_WORKER_CSP


def test_the_page_policy_admits_the_service_worker_url_and_nothing_new() -> None:
    policy = (ROOT / "page" / "trusted-types.mjs").read_text()
    assert 'new URL("sw.js", document.baseURI)' in policy
    assert not re.search(r"createHTML\s*[(:]", policy)


def test_the_service_worker_gives_worker_scripts_the_one_workers_csp(tmp_path: Path) -> None:
    """issue 29 item 12: the CSP sw.js puts on a worker script served without one is stamped
    from worker/sitebuild/serve.py — the workers' CSP with connect-src widened for the remote
    environments the egress guard admits, every other directive the same."""
    from worker.sitebuild.serve import WORKER_CSP, WORKER_SCRIPTS, service_worker_worker_csp

    text = _stamped(tmp_path)
    stamped = json.loads(re.search(r"const WORKER_CSP = (\".*?\");", text).group(1))
    scripts = json.loads(re.search(r"const WORKER_SCRIPTS = (\[.*?\]);", text).group(1))
    assert stamped == service_worker_worker_csp() and scripts == list(WORKER_SCRIPTS)

    def directives(csp: str) -> dict[str, str]:
        return dict(part.strip().split(" ", 1) for part in csp.split(";"))

    given, strict = directives(stamped), directives(WORKER_CSP)
    assert given.pop("connect-src").split() == ["'self'", "http:", "ws:", "https:", "wss:"]
    strict.pop("connect-src")
    assert given == strict and given["script-src"] == "'self' 'wasm-unsafe-eval'"
