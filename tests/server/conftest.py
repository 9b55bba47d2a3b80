"""The server suite runs on CPython only (a subprocess, sockets, SQLite, POSIX descriptors):
every test here carries the ``cpython_only`` marker, so the in-Pyodide run deselects it by
name. Each test gets its own server root; the ``server`` fixture is started and stopped by
the test (bounded)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.harness import Server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.cpython_only)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A started server over a fresh environment root, hello bound 600 ms."""
    with Server(tmp_path / "env", env={"VOICEBOX_HELLO_BOUND_MS": "600"}) as running:
        yield running
    print(running.text())  # shown by pytest when the test failed
