"""Fixtures of the WebAssembly suite: create-asset and the example plugins built (and
pin-checked) once per session, and the test-only modules and packages built beside them in a
temporary folder (never in wasm_tools/out/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasm_tools.build import (
    build_create_asset,
    build_plugins,
    build_test_modules,
    build_test_packages,
)


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


@pytest.fixture(scope="session")
def plugins_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build folder holding the example plugins: ``plugins/<id>/`` and ``plugins/*.zip``."""
    out = tmp_path_factory.mktemp("plugins")
    build_plugins(out)
    return out / "plugins"


@pytest.fixture(scope="session")
def plugin_modules(plugins_dir: Path) -> dict[str, bytes]:
    """Example plugin id → its (pin-checked) module bytes."""
    return {
        p.name: (p / f"{p.name}.wasm").read_bytes() for p in plugins_dir.iterdir() if p.is_dir()
    }


@pytest.fixture(scope="session")
def test_packages(
    tmp_path_factory: pytest.TempPathFactory, test_modules: dict[str, Path]
) -> dict[str, Path]:
    """name → path of every hostile test package (wasm_tools/testdata/packages/)."""
    return build_test_packages(tmp_path_factory.mktemp("test-packages"), test_modules)
