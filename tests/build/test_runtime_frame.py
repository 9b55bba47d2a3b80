"""The Python runtime's frame page (issue 32; docs/python.md): its one script is pinned by hash,
it can connect nowhere and load nothing from any site, and the page frames it sandboxed
without ``allow-same-origin`` (an opaque origin: no storage of the site)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from worker.sitebuild.runtime_frame import build_runtime_frame, frame_script
from worker.sitebuild.serve import headers_for

ROOT = Path(__file__).resolve().parents[2]


def _csp(html: str) -> dict[str, str]:
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found is not None
    return {d.split()[0]: " ".join(d.split()[1:]) for d in found.group(1).split(";") if d.strip()}


def test_the_runtime_frame_runs_only_its_pinned_script_and_connects_nowhere(
    tmp_path: Path,
) -> None:
    html = build_runtime_frame(ROOT, tmp_path).read_text(encoding="utf-8")
    script = frame_script(ROOT)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = _csp(html)
    assert csp["default-src"] == "'none'" and csp["connect-src"] == "'none'"
    assert csp["script-src"] == f"'sha256-{digest}' blob: 'wasm-unsafe-eval'"
    assert "'self'" not in " ".join(csp.values())
    assert csp["worker-src"] == "blob:" and csp["trusted-types"] == "vbx-runtime"
    assert f"<script>{script}</script>" in html


def test_the_page_frames_the_runtime_sandboxed_with_an_opaque_origin() -> None:
    source = (ROOT / "page" / "ui" / "python.mjs").read_text(encoding="utf-8")
    assert 'sandbox: "allow-scripts"' in source and "allow-same-origin" not in source
    assert 'src: "runtime/python.html"' in source
    frame = (ROOT / "runtime" / "python-frame.js").read_text(encoding="utf-8")
    assert 'self.origin !== "null"' in frame  # it refuses to work with a real origin
    assert headers_for("runtime/python.html")["Content-Security-Policy"] == (
        "frame-ancestors 'self'"
    )
    assert headers_for("index.html")["Content-Security-Policy"] == "frame-ancestors 'none'"
