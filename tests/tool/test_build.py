"""The create-asset build (SPEC §8, issue 5): reproducible byte for byte in any folder, checked
against the committed sha256 pin, loud when it differs, and test-only modules kept apart."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wasm_tools import build
from wasm_tools.build import (
    DEFAULT_OUT,
    PIN_FILE,
    BuildError,
    build_sandbox,
    build_test_modules,
    read_pin,
)

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
        outputs.append((tools / "out" / "create_asset.wasm").read_bytes())
    assert outputs[0] == outputs[1] == module_bytes


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
        "malformed",
        "max_memory_too_large",
        "memory_hog",
        "needs_import",
        "no_max_memory",
        "out_of_bounds",
        "oversize_output",
        "runaway",
        "traps",
    }
    for path in test_modules.values():
        assert path.read_bytes().startswith(b"\0asm")


SANDBOX_CSP = (
    "default-src 'none'; script-src 'sha256-{hash}' 'wasm-unsafe-eval'; worker-src blob:; "
    "connect-src 'none'; base-uri 'none'; form-action 'none'; "
    "require-trusted-types-for 'script'; trusted-types vbx-sandbox"
)


def test_sandbox_page_admits_exactly_its_inlined_script(tmp_path: Path) -> None:
    html = build_sandbox(tmp_path).read_text(encoding="utf-8")
    script = (WASM_TOOLS / "sandbox.js").read_text(encoding="utf-8")
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
