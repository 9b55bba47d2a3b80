"""The runner suite runs on CPython only (subprocesses, bubblewrap, git, sockets): every test
here carries the ``cpython_only`` marker, like tests/server's."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.cpython_only)
