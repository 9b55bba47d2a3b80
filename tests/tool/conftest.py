"""Fixtures of the create-asset suite: the module built (and pin-checked) once per session,
and the test-only modules built beside it in a temporary folder (never in wasm_tools/out/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasm_tools.build import build_create_asset, build_test_modules


@pytest.fixture(scope="session")
def module_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped module, built from source and checked against the committed pin."""
    return build_create_asset(tmp_path_factory.mktemp("wasm"))


@pytest.fixture(scope="session")
def module_bytes(module_path: Path) -> bytes:
    return module_path.read_bytes()


@pytest.fixture(scope="session")
def test_modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name → path of every test-only module built from wasm_tools/testdata/."""
    return build_test_modules(tmp_path_factory.mktemp("test-modules"))
