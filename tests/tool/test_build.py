"""The WebAssembly build (SPEC §8, issues 5 and 16): create-asset and the example plugins are
reproducible byte for byte in any folder — modules and package zips — checked against their
committed sha256 pins (create_asset.wasm.sha256; each plugin's manifest), loud when one differs,
and test-only modules and packages kept apart."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wasm_tools import build
from wasm_tools.build import (
    DEFAULT_OUT,
    MANIFEST_NAME,
    PIN_FILE,
    PLUGINS,
    BuildError,
    build_sandbox,
    build_test_modules,
    build_test_packages,
    read_pin,
    sandbox_script,
)

EXAMPLES = {"textstats": "textstats-1.0.0.zip", "tidy": "tidy-1.0.0.zip"}

WASM_TOOLS = Path(build.__file__).resolve().parent


def copy_tools(where: Path) -> Path:
    """A copy of wasm_tools/ (sources, build script, pin, testdata) at ``where``."""
    shutil.copytree(WASM_TOOLS, where, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return where


def run_build(tools: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tools / "build.py"), *args], capture_output=True, text=True
    )


def custom_section_count(wasm: bytes) -> int:
    pos, count = 8, 0
    while pos < len(wasm):
        section, pos = wasm[pos], pos + 1
        size = shift = 0
        while True:
            byte, pos = wasm[pos], pos + 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        count += section == 0
        pos += size
    return count


def test_build_matches_the_committed_pin(module_bytes: bytes) -> None:
    assert hashlib.sha256(module_bytes).hexdigest() == read_pin()
    assert PIN_FILE.read_text().split() == [read_pin(), "create_asset.wasm"]


def test_builds_in_two_folders_are_byte_identical(tmp_path: Path, module_bytes: bytes) -> None:
    outputs = []
    for folder in ("first", "second/nested deeper"):
        tools = copy_tools(tmp_path / folder / "wasm_tools")
        result = run_build(tools, "--out", str(tools / "out"))
        assert result.returncode == 0, result.stderr
        out = tools / "out"
        built = {"create_asset.wasm": (out / "create_asset.wasm").read_bytes()}
        for pid, package in EXAMPLES.items():
            built[package] = (out / "plugins" / package).read_bytes()
            built[f"{pid}.wasm"] = (out / "plugins" / pid / f"{pid}.wasm").read_bytes()
        outputs.append(built)
    assert outputs[0] == outputs[1]
    assert outputs[0]["create_asset.wasm"] == module_bytes


def test_every_example_module_matches_its_manifest_pin(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    assert run_build(tools, "--out", str(tools / "out")).returncode == 0
    for pid in EXAMPLES:
        manifest = json.loads((PLUGINS / pid / MANIFEST_NAME).read_text())
        for module in manifest["modules"]:
            data = (tools / "out" / "plugins" / pid / module["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == module["sha256"]
            assert custom_section_count(data) == 0


def test_a_package_holds_exactly_its_manifest_and_modules_stored_at_a_fixed_time(
    tmp_path: Path,
) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    assert run_build(tools, "--out", str(tools / "out")).returncode == 0
    for pid, package in EXAMPLES.items():
        manifest_bytes = (PLUGINS / pid / MANIFEST_NAME).read_bytes()
        manifest = json.loads(manifest_bytes)
        with zipfile.ZipFile(tools / "out" / "plugins" / package) as archive:
            infos = archive.infolist()
            assert [i.filename for i in infos] == [
                MANIFEST_NAME,
                *(m["file"] for m in manifest["modules"]),
            ]
            assert archive.read(MANIFEST_NAME) == manifest_bytes
            for info in infos:
                assert info.compress_type == zipfile.ZIP_STORED
                assert info.date_time == (1980, 1, 1, 0, 0, 0)
                assert info.external_attr >> 16 == 0o100644
        assert package == f"{manifest['id']}-{manifest['release']}.zip"


def test_a_plugin_pin_mismatch_fails_loudly_and_leaves_no_package(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    manifest_path = tools / "plugins" / "tidy" / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text())
    manifest["modules"][0]["sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    result = run_build(tools)
    assert result.returncode == 1
    assert "tidy/tidy.wasm does not match its pin" in result.stderr
    assert "--repin" in result.stderr
    assert not (tools / "out" / "plugins" / "tidy-1.0.0.zip").exists()
    assert not (tools / "out" / "plugins" / "tidy").exists()


def test_a_changed_plugin_source_fails_its_pin_until_repinned(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    source = tools / "plugins" / "textstats" / "textstats.c"
    source.write_text(source.read_text().replace("MAX_HEADINGS = 500", "MAX_HEADINGS = 499"))
    assert run_build(tools).returncode == 1
    assert run_build(tools, "--repin").returncode == 0
    manifest = json.loads((tools / "plugins" / "textstats" / MANIFEST_NAME).read_text())
    pinned = json.loads((PLUGINS / "textstats" / MANIFEST_NAME).read_text())
    assert manifest["modules"][0]["sha256"] != pinned["modules"][0]["sha256"]
    assert {k: v for k, v in manifest.items() if k != "modules"} == {
        k: v for k, v in pinned.items() if k != "modules"
    }
    assert run_build(tools).returncode == 0


def test_module_carries_no_custom_section(module_bytes: bytes) -> None:
    # no names, no producers, no debug info: nothing that could carry a path or a date
    assert custom_section_count(module_bytes) == 0


def test_a_pin_mismatch_fails_loudly_and_leaves_no_module(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    (tools / "create_asset.wasm.sha256").write_text("0" * 64 + "  create_asset.wasm\n")
    result = run_build(tools)
    assert result.returncode == 1
    assert "does not match its pin" in result.stderr
    assert "--repin" in result.stderr
    assert not (tools / "out" / "create_asset.wasm").exists()


def test_a_changed_source_fails_the_pin(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    source = tools / "create_asset.c"
    source.write_text(source.read_text().replace("0x2b, 0x0f, 0x0e", "0x2b, 0x0f, 0x0f"))
    assert run_build(tools).returncode == 1


def test_repin_is_deliberate_and_then_holds(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    source = tools / "create_asset.c"
    source.write_text(source.read_text().replace("0x2b, 0x0f, 0x0e", "0x2b, 0x0f, 0x0f"))
    assert run_build(tools, "--repin").returncode == 0
    new_pin = (tools / "create_asset.wasm.sha256").read_text().split()[0]
    assert new_pin != read_pin()
    assert run_build(tools).returncode == 0
    digest = hashlib.sha256((tools / "out" / "create_asset.wasm").read_bytes()).hexdigest()
    assert digest == new_pin


def test_test_modules_are_never_built_into_the_shipped_folder() -> None:
    with pytest.raises(BuildError):
        build_test_modules(DEFAULT_OUT)


def test_every_test_module_builds(test_modules: dict[str, Path]) -> None:
    assert set(test_modules) == {
        "bad_signature",
        "deep",
        "fails",
        "forge",
        "host_function",
        "http",
        "initial_too_large",
        "kernel_probe",
        "malformed",
        "max_memory_too_large",
        "memory_hog",
        "needs_import",
        "no_max_memory",
        "out_of_bounds",
        "oversize_output",
        "runaway",
        "traps",
        "wasi",
    }
    for path in test_modules.values():
        assert path.read_bytes().startswith(b"\0asm")


def test_test_packages_are_never_built_into_the_shipped_folder() -> None:
    with pytest.raises(BuildError):
        build_test_packages(DEFAULT_OUT)


def test_the_hostile_packages_are_real_packages_except_for_their_one_flaw(
    test_packages: dict[str, Path],
) -> None:
    assert set(test_packages) == {
        "bad-pin",
        "builtin-name",
        "deep",
        "extra-entry",
        "forge",
        "hog",
        "host-name",
        "http",
        "loop",
        "needs-import",
        "network",
        "traversal",
        "unknown-field",
    }
    for name, package in test_packages.items():
        with zipfile.ZipFile(package) as archive:
            manifest = json.loads(archive.read(MANIFEST_NAME))
            names = archive.namelist()
            listed = [m["file"] for m in manifest["modules"]]
            if name == "extra-entry":
                assert names == [MANIFEST_NAME, *listed, "README.txt"]
            elif name == "traversal":
                assert names == [MANIFEST_NAME, *(f"../{f}" for f in listed)]
            else:
                assert names == [MANIFEST_NAME, *listed]
                for module in manifest["modules"]:
                    digest = hashlib.sha256(archive.read(module["file"])).hexdigest()
                    assert (digest == module["sha256"]) is (name != "bad-pin")
        assert manifest["format"] == "voicebox-plugin/1"
        assert ("allowedHosts" in manifest) is (name == "unknown-field")
        names_of_ops = {op["name"] for op in manifest["operations"]}
        assert ("file.write" in names_of_ops) is (name == "builtin-name")
        effects = {op["effect"] for op in manifest["operations"]}
        assert ("network" in effects) is (name == "network")


SANDBOX_CSP = (
    "default-src 'none'; script-src 'sha256-{hash}' 'wasm-unsafe-eval'; worker-src blob:; "
    "connect-src 'none'; base-uri 'none'; form-action 'none'; "
    "require-trusted-types-for 'script'; trusted-types vbx-sandbox"
)


def test_sandbox_page_admits_exactly_its_inlined_script(tmp_path: Path) -> None:
    html = build_sandbox(tmp_path).read_text(encoding="utf-8")
    script = sandbox_script()
    assert script == "\n".join(
        (WASM_TOOLS / name).read_text(encoding="utf-8") for name in ("pdk_host.js", "sandbox.js")
    )
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    (csp,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert csp == SANDBOX_CSP.format(hash=digest)
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert scripts == [script]
    assert "<script src" not in html
    assert "@SCRIPT" not in html


def test_sandbox_page_is_reproducible(tmp_path: Path) -> None:
    first = build_sandbox(tmp_path / "a").read_bytes()
    assert build_sandbox(tmp_path / "b").read_bytes() == first


def test_a_script_that_could_end_its_element_is_refused(tmp_path: Path) -> None:
    tools = copy_tools(tmp_path / "wasm_tools")
    (tools / "sandbox.js").write_text('const s = "</script>";\n')
    result = run_build(tools)
    assert result.returncode == 1
    assert "</script" in result.stderr
