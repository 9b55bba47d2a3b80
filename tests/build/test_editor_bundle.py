"""The editor bundle (issue 17 item 2; BRIEF: pin what ships, nothing from a CDN): the pinned
esbuild bundles the pinned CodeMirror packages into one self-contained module, the same bytes
every time, with no HTML-string sink (Trusted Types) and the licence of every package in it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from worker.sitebuild.bundle import LICENSES_NAME, OUT_NAME, bundle_editor

ROOT = Path(__file__).resolve().parents[2]
SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment"
    r"|\beval\(|new Function"
)


def test_the_bundle_is_reproducible_self_contained_and_holds_no_html_sink(tmp_path: Path) -> None:
    first = bundle_editor(ROOT, tmp_path / "a")
    second = bundle_editor(ROOT, tmp_path / "b")
    assert first == second and "@codemirror/view" in first
    code = (tmp_path / "a" / OUT_NAME).read_bytes()
    assert (
        hashlib.sha256(code).digest()
        == hashlib.sha256((tmp_path / "b" / OUT_NAME).read_bytes()).digest()
    )
    text = code.decode("utf-8")
    assert SINKS.findall(text) == []
    # nothing fetched at run time: no CDN address of a script in it
    assert re.findall(r"https?://[a-z0-9.-]+\.(?:com|net|org|io|dev)/[^\s\"'`]*\.m?js", text) == []


def test_every_bundled_package_is_pinned_and_its_licence_ships(tmp_path: Path) -> None:
    packages = bundle_editor(ROOT, tmp_path)
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    licences = (tmp_path / LICENSES_NAME).read_text(encoding="utf-8")
    for name in packages:
        version = lock[f"node_modules/{name}"]["version"]
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), name
        assert f"{name} {version} — " in licences, name
