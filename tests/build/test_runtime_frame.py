"""The Python runtime's frame page (issue 32; docs/python.md): its one script is pinned by hash,
it can connect nowhere and load nothing from any site, and the page frames it sandboxed
without ``allow-same-origin`` (an opaque origin: no storage of the site)."""

from __future__ import annotations

import base64
import hashlib
import json
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
    source = (ROOT / "page" / "frames.mjs").read_text(encoding="utf-8")
    # the attribute when no service worker answers it; the page checks opacity either way
    assert 'frame.setAttribute("sandbox", "allow-scripts")' in source
    assert "allow-same-origin" not in source
    assert "frame.contentDocument === null" in source
    for user, src in (
        ("ui/python.mjs", "runtime/python.html"),
        ("sandbox.mjs", "tools/sandbox.html"),
    ):
        text = (ROOT / "page" / user).read_text(encoding="utf-8")
        assert f'opaqueFrame("{src}"' in text and "<iframe" not in text
    frame = (ROOT / "runtime" / "python-frame.js").read_text(encoding="utf-8")
    assert 'self.origin !== "null"' in frame  # it refuses to work with a real origin
    assert headers_for("index.html")["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_the_runtime_frame_is_sandboxed_by_its_header_from_the_server_and_the_offline_cache(
    tmp_path: Path,
) -> None:
    """issue 32 (Run offline): Chromium never lets a service worker answer a frame sandboxed by
    its attribute, so the frame's opaque origin comes from the header CSP ``sandbox
    allow-scripts`` — which the server sends and the service worker puts on its cached answer,
    stamped from the one table in worker/sitebuild/serve.py."""
    from worker.sitebuild.offline import stamp_service_worker
    from worker.sitebuild.serve import SANDBOXED_FRAMES

    assert set(SANDBOXED_FRAMES) == {"runtime/python.html", "tools/sandbox.html"}
    for frame in SANDBOXED_FRAMES:
        header = headers_for(frame)["Content-Security-Policy"]
        assert header == SANDBOXED_FRAMES[frame]
        directives = dict(d.strip().split(" ", 1) for d in header.split(";"))
        assert directives == {"sandbox": "allow-scripts", "frame-ancestors": "'self'"}
    out = stamp_service_worker(ROOT / "page" / "sw.js", tmp_path, "b" * 64, [])
    text = out.read_text(encoding="utf-8")
    stamped = re.search(r"const SANDBOXED_FRAMES = (\{.*?\});", text)
    assert stamped is not None and json.loads(stamped.group(1)) == SANDBOXED_FRAMES
    # the cached answer gets it (replacing whatever CSP the response had)
    assert "withFrameCsp(key, withWorkerCsp(key, hit ?? (await fetch(request))))" in text
