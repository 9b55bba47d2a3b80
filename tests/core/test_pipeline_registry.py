"""One explicit registry and one typed pipeline (issue 14; SPEC §4; STYLE §3c, §4).

Every operation is listed in one module (``core/host/registry.py``) with its gates as data;
each names a handler of an ``*_ops`` module and every such handler is listed — nothing
registers itself by being imported. The built-in tools are known by importing
``core.tools`` alone, each names an operation the host has (composing a host with a tool whose
operation is missing fails at once), and a tool call runs its operation in-process on typed
arguments, never through the JSON text of a page message. The context an operation sees holds
typed ports and services only.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from core.host.context import HostContext, HostServices
from core.host.operations import Operations
from core.host.pipeline import Host
from core.host.registry import OPERATIONS
from core.tools import BUILTIN_TOOLS, DESCRIBE, BuiltinTool
from core.tools.admission import CallRequest
from tests.support import HostHarness, run

HOST = Path(__file__).resolve().parents[2] / "core" / "host"
OPS_MODULES = sorted(p.stem for p in HOST.glob("*_ops.py"))


def _handlers_defined() -> set[object]:
    """Every public module-level ``async def name(call: Call[...])`` of the ``*_ops``
    modules (a ``_private`` helper taking a call is not a handler)."""
    found: set[object] = set()
    for name in OPS_MODULES:
        module = importlib.import_module(f"core.host.{name}")
        for node in ast.parse((HOST / f"{name}.py").read_text(encoding="utf-8")).body:
            public = isinstance(node, ast.AsyncFunctionDef) and not node.name.startswith("_")
            if public and node.args.args:
                note = node.args.args[0].annotation
                if note is not None and ast.unparse(note).startswith("Call"):
                    found.add(getattr(module, node.name))
    return found


def test_every_operation_names_a_coroutine_handler_of_an_ops_module() -> None:
    assert len(OPERATIONS) > 40
    for op in OPERATIONS.values():
        assert inspect.iscoroutinefunction(op.handler), op.name
        assert op.handler.__module__.removeprefix("core.host.") in OPS_MODULES, op.name


def test_every_handler_of_the_ops_modules_is_listed_in_the_registry() -> None:
    listed = {op.handler for op in OPERATIONS.values()}
    assert _handlers_defined() - listed == set()


def test_operations_are_listed_in_one_module_and_nothing_registers_by_import() -> None:
    """Only ``registry.py`` builds the host's operations (``operations.py`` defines the
    type); no ops module reaches for the registry or the pipeline (importing one has no effect
    on what the host answers)."""
    builders = []
    for path in sorted(p for p in HOST.glob("*.py") if p.name != "operations.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "Operations":
                builders.append(path.name)
            if path.stem in OPS_MODULES and isinstance(node, ast.ImportFrom):
                assert node.module not in ("core.host.registry", "core.host.pipeline"), path
    assert builders == ["registry.py"]


def test_a_name_listed_twice_is_refused_when_the_registry_is_built() -> None:
    op = OPERATIONS["host.info"]
    with pytest.raises(ValueError, match="listed twice"):
        Operations([op, op])


def test_every_builtin_tool_names_an_operation_the_host_has() -> None:
    assert {t.operation for t in BUILTIN_TOOLS} - {None} <= set(OPERATIONS)
    assert [t.name for t in BUILTIN_TOOLS if t.operation is None] == [DESCRIBE]


def test_a_tool_whose_operation_is_missing_stops_the_host_from_being_composed() -> None:
    h = HostHarness()
    lost = BuiltinTool("files.lost", "file.no_such", "names no operation")
    with pytest.raises(ValueError, match="names no operation"):
        Host(h.ctx, tools=(*BUILTIN_TOOLS, lost))


@pytest.mark.cpython_only  # a fresh interpreter: Pyodide has no subprocess
def test_importing_core_tools_alone_lists_the_builtin_tools() -> None:
    code = (
        "import json, sys, core.tools\n"
        "assert not [m for m in sys.modules if m.startswith('core.host')], 'host imported'\n"
        "print(json.dumps([t.name for t in core.tools.BUILTIN_TOOLS]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [t.name for t in BUILTIN_TOOLS]
    assert len(BUILTIN_TOOLS) == 8


def test_a_tool_call_runs_its_operation_in_process_not_through_a_page_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="p")["project"]["id"]

    async def no_json(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("a tool call went through the page's JSON entry")

    monkeypatch.setattr(h.host, "handle_full", no_json)
    box = h.host.tools
    entry = box.registry.get("file.write")
    assert entry is not None
    args = {"project": pid, "path": "a.txt", "content_b64": "aGk="}
    outcome = run(
        box.run(box.admit(CallRequest("file.write", entry.descriptor_id, args)), actor="agent")
    )
    assert outcome.result["size"] == 2
    assert outcome.receipt is not None
    assert outcome.receipt.store_version == max(h.sink.records)  # the write's audit record


def _mentions_any(hint: object) -> bool:
    if hint is typing.Any:
        return True
    return any(_mentions_any(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("model", [HostContext, HostServices])
def test_the_context_holds_typed_ports_and_services_and_no_free_cache(model: type) -> None:
    hints = typing.get_type_hints(model)
    assert {name for name, hint in hints.items() if _mentions_any(hint)} == set()
    assert "cache" not in hints and "dispatcher" not in hints
