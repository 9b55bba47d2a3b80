"""core/ is laid out by contract, and its imports flow one way (issue 14; STYLE §1, §4).

Layers, lowest first: the **kernel** (``core/*.py``: model, refusals, secret, ports, runtime,
policy, paths, time, protocol, gestures; and the kernel packages, ``audit/``: issue 35) imports
only the kernel; the **contracts** (``custody/`` seed 002, ``tools/`` seed 003, ``missions/``
seed 004, ``projects/``, ``archive/``) import the kernel and each other, never in a circle; the
**host** (``host/``) imports anything below it; the **adapters** (``memory/``) may import
anything. Nothing but the host itself and the adapters imports the host, and there is no import
cycle anywhere — not even through an import made only for type checking (``if TYPE_CHECKING:``)
or inside a function.

The checks read the syntax trees (no import), so they run on CPython and inside Pyodide.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
CONTRACTS = ("custody", "tools", "missions", "projects", "archive")
KERNEL_PACKAGES = ("audit",)
"""Kernel modules that grew into a package (issue 35): every module in them is kernel."""
RANK = {"kernel": 0, "contracts": 1, "host": 2, "adapters": 3}


def core_sources(root: Path = CORE) -> dict[str, str]:
    """Every module of ``core`` by dotted name (a package by its own name), with its source."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("core", *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Module → the modules of ``sources`` it imports, from every import statement anywhere in
    it (top level, under ``if TYPE_CHECKING:``, inside functions)."""
    known = set(sources)
    packages = {m for m in known if any(o.startswith(m + ".") for o in known)}
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, module in packages, node)
                if base is not None:
                    targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                if target in known and target != module:
                    graph[module].add(target)
    return graph


def layer(module: str) -> str:
    """The layer of a ``core`` module (module docstring)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in KERNEL_PACKAGES:
        return "kernel"
    if len(parts) == 2 and parts[1] not in (*CONTRACTS, "host", "memory"):
        return "kernel"
    if parts[1] in CONTRACTS:
        return "contracts"
    return "host" if parts[1] == "host" else "adapters"


def upward_imports(graph: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """Every import of a higher layer by a lower one, and of the host by anything but the
    host and the adapters."""
    found = []
    for module, targets in graph.items():
        for target in targets:
            if RANK[layer(target)] > RANK[layer(module)]:
                found.append((module, target))
    return sorted(found)


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The contract packages and which of the others each one's modules import."""
    out: dict[str, set[str]] = {f"core.{p}": set() for p in CONTRACTS}
    for module, targets in graph.items():
        if layer(module) != "contracts":
            continue
        own = ".".join(module.split(".")[:2])
        for target in targets:
            other = ".".join(target.split(".")[:2])
            if layer(target) == "contracts" and other != own:
                out[own].add(other)
    return out


# ---- the laws, over core/ -----------------------------------------------------------------


def test_no_lower_layer_imports_a_higher_one() -> None:
    graph = import_graph(core_sources())
    assert len(graph) > 60
    assert upward_imports(graph) == []


def test_nothing_but_the_host_and_the_adapters_imports_the_host() -> None:
    graph = import_graph(core_sources())
    importers = {m for m, targets in graph.items() if any(layer(t) == "host" for t in targets)}
    assert {layer(m) for m in importers} <= {"host", "adapters"}


def test_there_is_no_import_cycle_in_core_even_through_type_checking_imports() -> None:
    assert cycles(import_graph(core_sources())) == []


def test_the_contract_packages_depend_on_each_other_without_a_circle() -> None:
    assert cycles(package_graph(import_graph(core_sources()))) == []


def test_each_seed_has_its_package() -> None:
    packages = {p.name for p in CORE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == {*CONTRACTS, *KERNEL_PACKAGES, "host", "memory"}


# ---- the checks would catch each form -----------------------------------------------------


def test_the_layer_check_catches_an_upward_import_and_a_lazy_one() -> None:
    sources = {
        "core": "",
        "core.model": "from core.host.pipeline import Host\n",
        "core.tools": "",
        "core.tools.box": "def f():\n    from core.host import pipeline\n",
        "core.host": "",
        "core.host.pipeline": "from core.model import X\n",
    }
    assert upward_imports(import_graph(sources)) == [
        ("core.model", "core.host.pipeline"),
        ("core.tools.box", "core.host"),
        ("core.tools.box", "core.host.pipeline"),
    ]


def test_a_kernel_package_is_kernel_in_every_module() -> None:
    sources = {
        "core": "",
        "core.audit": "from core.audit.record import R\n",
        "core.audit.record": "from core.model import X\nfrom core.missions.mailbox import M\n",
        "core.model": "",
        "core.missions": "",
        "core.missions.mailbox": "from core.audit import A\n",
    }
    assert upward_imports(import_graph(sources)) == [("core.audit.record", "core.missions.mailbox")]


def test_the_cycle_check_follows_type_checking_and_relative_imports() -> None:
    sources = {
        "core": "",
        "core.missions": "",
        "core.missions.a": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from core.missions.b import B\n",
        "core.missions.b": "from .c import C\n",
        "core.missions.c": "from . import a\n",
    }
    assert cycles(import_graph(sources)) == [
        ["core.missions.a", "core.missions.b", "core.missions.c"]
    ]
