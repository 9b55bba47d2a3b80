"""The site build's own checks (worker/sitebuild; SPEC §2): pins, hashes, requirements, and the
page's code never reaching storage or another origin."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest

from wasm_tools.build import build_plugins
from worker.sitebuild.serve import WORKER_CSP, headers_for, make_server
from worker.sitebuild.site import check_plugin_package, example_index
from worker.sitebuild.wheels import BuildError, _check, check_requirements, load_lock

ROOT = Path(__file__).resolve().parents[2]


def fake_wheel(where: Path, name: str, version: str, requires: list[str]) -> Path:
    path = where / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            f"{name.replace('-', '_')}-{version}.dist-info/METADATA", "\n".join(meta) + "\n"
        )
    return path


def test_requirements_are_checked_against_the_pinned_versions(tmp_path: Path) -> None:
    wheels = {
        "a": fake_wheel(
            tmp_path, "a", "1.0", ["b==2.0", "c; extra == 'x'", "d; sys_platform == 'win32'"]
        ),
        "b": fake_wheel(tmp_path, "b", "2.0", []),
    }
    assert check_requirements(wheels, "3.14") == {"a": ["b"], "b": []}


def test_an_unmet_pin_stops_the_build_naming_it(tmp_path: Path) -> None:
    wheels = {
        "pydantic": fake_wheel(tmp_path, "pydantic", "2.14.4", ["pydantic-core==2.50.5"]),
        "pydantic-core": fake_wheel(tmp_path, "pydantic-core", "2.41.5", []),
    }
    with pytest.raises(BuildError, match=r"pydantic-core==2\.50\.5.*2\.41\.5"):
        check_requirements(wheels, "3.14")


def test_a_file_whose_hash_differs_is_refused_by_name(tmp_path: Path) -> None:
    f = tmp_path / "x-1.0-py3-none-any.whl"
    f.write_bytes(b"not the pinned bytes")
    with pytest.raises(
        BuildError, match=r"x-1.0-py3-none-any.whl: sha256 [0-9a-f]{64} does not match"
    ):
        _check(f, "0" * 64)


def test_the_lock_pins_pydantic_with_its_matching_core_and_a_wasm_wheel() -> None:
    lock = load_lock(ROOT)
    by_name = {w.name: w for w in lock.wheels}
    assert by_name["pydantic"].version.startswith("2.14.")
    assert by_name["pydantic-core"].file.endswith(f"-{lock.target.platform}.whl")
    assert by_name["markupsafe"].file.endswith("-py3-none-any.whl")
    assert all(re.fullmatch("[0-9a-f]{64}", w.sha256) for w in lock.wheels)


def _code(path: Path) -> str:
    """The file's text without comments (full-line ``//`` and ``/* */`` blocks)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _page_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "page").rglob("*") if p.suffix in {".mjs", ".js", ".html"})


def test_the_page_never_touches_storage_apis() -> None:
    forbidden = re.compile(
        r"navigator\.storage|getDirectory|indexedDB|localStorage|sessionStorage|document\.cookie"
    )
    hits = {p.name: forbidden.findall(_code(p)) for p in _page_sources()}
    assert {k: v for k, v in hits.items() if v} == {}


def test_the_page_never_parses_html_from_strings() -> None:
    sinks = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser"
        r"|createContextualFragment|\beval\(|new Function"
    )
    hits = {p.name: sinks.findall(_code(p)) for p in _page_sources()}
    assert {k: v for k, v in hits.items() if v} == {}


def test_shipped_code_uses_relative_urls_only() -> None:
    absolute = re.compile(r"""["'`](?:https?:)?//[^"'`]+""")
    sources = _page_sources() + sorted((ROOT / "worker").glob("*.mjs"))
    hits = {p.name: absolute.findall(_code(p)) for p in sources}
    assert {k: v for k, v in hits.items() if v} == {}


def _package(where: Path, files: dict[str, bytes]) -> Path:
    path = where / "p.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def _example(name: str) -> tuple[bytes, dict]:
    data = (ROOT / "wasm_tools" / "plugins" / name / "voicebox-plugin.json").read_bytes()
    return data, json.loads(data)


def test_a_plugin_package_ships_only_with_its_committed_manifest_and_pinned_modules(
    tmp_path: Path,
) -> None:
    data, manifest = _example("tidy")
    (module,) = manifest["modules"]
    pinned = _package(tmp_path, {"voicebox-plugin.json": data, module["file"]: b"not it"})
    with pytest.raises(BuildError, match=r"tidy.wasm sha256 [0-9a-f]{64} is not the pinned"):
        check_plugin_package(ROOT, pinned)
    other = _package(tmp_path, {"voicebox-plugin.json": data + b" ", module["file"]: b""})
    with pytest.raises(BuildError, match="not the committed"):
        check_plugin_package(ROOT, other)
    extra = _package(tmp_path, {"voicebox-plugin.json": data, "x.txt": b""})
    with pytest.raises(BuildError, match="holds"):
        check_plugin_package(ROOT, extra)


def test_the_built_example_packages_pass_the_site_check(tmp_path: Path) -> None:
    for package in build_plugins(tmp_path).values():
        check_plugin_package(ROOT, package)


def test_the_site_offers_every_example_plugin_with_the_pin_of_its_package(tmp_path: Path) -> None:
    """Issue 33 item 5: the empty Plugins surface offers the shipped examples from this index;
    the page's fetch checks each zip against ``integrity``, then installs it like any package."""
    built = build_plugins(tmp_path)
    packages = sorted(built.values())
    index = example_index(packages)
    assert [(e["id"], e["file"]) for e in index] == [
        ("textstats", "textstats-1.0.0.zip"),
        ("tidy", "tidy-1.0.0.zip"),
    ]
    for entry, package in zip(index, packages, strict=True):
        data = package.read_bytes()
        digest = base64.b64encode(hashlib.sha256(data).digest()).decode()
        assert entry["integrity"] == f"sha256-{digest}" and entry["size"] == len(data)
        assert entry["title"] and entry["summary"] and entry["release"] == "1.0.0"


def test_every_worker_a_worker_starts_is_served_with_the_workers_csp() -> None:
    """A worker's CSP comes only from its own response header (SPEC §2): every script a worker
    starts (``new URL("….mjs", import.meta.url)`` in worker/ — environment servers and the
    export's reader lanes) gets the same header as the host worker."""
    started = set()
    for module in (ROOT / "worker").glob("*.mjs"):
        text = module.read_text(encoding="utf-8")
        started |= set(re.findall(r'new URL\("([a-z-]+\.mjs)", import\.meta\.url\)', text))
    assert {"peer.mjs", "byte-lane.mjs"} <= started
    for script in sorted(started):
        headers = headers_for(f"worker/{script}")
        assert headers.get("Content-Security-Policy") == WORKER_CSP, script


def test_a_client_that_goes_away_mid_answer_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stop 45's tryout: a page reloaded during a download left a ``BrokenPipeError``
    traceback in the dev server's output. A client gone mid-answer is no error of the
    server's; any other error is still printed as ``socketserver`` prints it."""
    server = make_server(tmp_path, 0)
    try:
        for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
            try:
                raise gone
            except ConnectionError:
                server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real fault")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert "a real fault" in capsys.readouterr().err
    finally:
        server.server_close()
