"""What the host builds before ``ready`` (issue 34, cold boot; core/model.py).

Building ~150 contract models' validators was about half of the host's import in Pyodide,
all on the path to ``ready``, while the boot and the first screen use about 20 of them. The
laws: the worker's import of the host builds no model; a model that no boot step and no
first-screen call uses is not built before ``ready``; a settled host (its late import done)
has built every model; and the host's import leaves out the standard-library modules no boot
step uses (``tomllib``, ``difflib``: Pyodide ships the standard library as sources, so each is
compiled on every boot).

The worker's import is ``browser_host.boot_import.import_host`` — the real one, run in a fresh
CPython with ``js`` and ``pyodide`` stood in for by modules that answer any name (only their
names are read at import).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.model import Contract, unbuilt_contracts
from tests.support import HostHarness

ROOT = Path(__file__).resolve().parents[2]

FIRST_SCREEN = ("host.info", "project.list")  # what the page calls before it says Ready

WORKER_IMPORT = """
import json, sys, types

class _Any:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return _Any()
    def __getattr__(self, name): return _Any()
    def __mro_entries__(self, bases): return (object,)

for name in ("js", "pyodide", "pyodide.ffi", "pyodide.http", "pyodide.webloop"):
    stand_in = types.ModuleType(name)
    stand_in.__getattr__ = lambda name: _Any()
    stand_in.__path__ = []
    sys.modules[name] = stand_in

from browser_host.boot_import import import_host
from pydantic import BaseModel

def models():
    out, stack = set(), [BaseModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__module__.startswith(("core.", "browser_host.")) and sub not in out:
                out.add(sub)
                stack.append(sub)
    return out

def built():
    return sorted(f"{m.__module__}.{m.__qualname__}" for m in models() if m.__pydantic_complete__)

import_host()
at_import = built()
from tests.support import HostHarness
from core.host.registry import OPERATIONS
harness = HostHarness()  # the host built as main.start builds it
for op in FIRST_SCREEN:
    harness.ok(op)
at_first_screen = built()
declared = [OPERATIONS.declared(name) for name in OPERATIONS]
unused = sorted(
    {f"{m.__module__}.{m.__qualname__}" for op in declared if op.pending is None
     and op.name not in FIRST_SCREEN for m in (op.args, op.result) if isinstance(m, type)}
    - {f"{m.__module__}.{m.__qualname__}" for op in declared if op.name in FIRST_SCREEN
       for m in (op.args, op.result)}
)
print(json.dumps({
    "models": len(models()),
    "at_import": at_import,
    "at_first_screen": at_first_screen,
    "unused": unused,
    "stdlib": sorted(m for m in ("tomllib", "difflib") if m in sys.modules),
}))
"""


@pytest.fixture(scope="module")
def boot() -> dict:
    """The worker's import, the host built, the first screen's calls: what each built."""
    code = WORKER_IMPORT.replace("FIRST_SCREEN", repr(FIRST_SCREEN))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.cpython_only  # a fresh interpreter: a subprocess, which Pyodide has not
def test_the_workers_import_of_the_host_builds_only_the_models_its_own_lines_use(
    boot: dict,
) -> None:
    """Of ~150 model classes the import makes, it builds the two its module-level lines use:
    the inbound bounds (an instance, ``core.protocol.INBOUND_BOUNDS``) and the refusal body
    (not a contract: a plain model)."""
    assert boot["models"] > 100  # the import did make the classes
    assert boot["at_import"] == ["core.protocol.InboundBounds", "core.refusals.RefusalBody"]


@pytest.mark.cpython_only  # a fresh interpreter: a subprocess, which Pyodide has not
def test_a_model_not_used_before_ready_is_not_built_before_ready(boot: dict) -> None:
    """The operations' models the boot and the first screen do not use (every eager
    operation but host.info and project.list: ~60 models) are still unbuilt after the host
    is built and the first screen's calls are answered; only a few are built at all."""
    built = set(boot["at_first_screen"])
    assert len(boot["unused"]) > 40
    assert sorted(built & set(boot["unused"])) == []
    assert len(built) < boot["models"] // 4, built


@pytest.mark.cpython_only  # a fresh interpreter: a subprocess, which Pyodide has not
def test_the_hosts_import_leaves_out_the_standard_library_no_boot_step_uses(boot: dict) -> None:
    """``tomllib`` (a requirements file's reader) and ``difflib`` (a refusal's near-miss
    hint) are imported where they are used, not on the path to ``ready``."""
    assert boot["stdlib"] == []


@pytest.mark.cpython_only  # runs its own event loop (see tests/core/test_audit_batching.py)
def test_a_settled_host_has_built_every_contract_model() -> None:
    """Once the work after ``ready`` is done (what ``settled`` waits for), no contract model
    is left to be built on a call: a settled host's first call of any operation pays no model
    build."""

    async def settle() -> list[type[Contract]]:
        host = HostHarness().host
        await host.after_ready()
        return unbuilt_contracts()

    assert asyncio.run(settle()) == []


def test_a_model_built_on_first_use_validates_as_before() -> None:
    """A model whose validator is built by its first use refuses and accepts exactly as the
    contract says (strict, closed, frozen): built on use is the same model."""

    class Late(Contract):
        n: int

    assert Late in unbuilt_contracts()
    assert Late.model_validate({"n": 1}).n == 1
    assert Late not in unbuilt_contracts()
    for bad, kind in (({"n": "1"}, "int_type"), ({"n": 1, "extra": 2}, "extra_forbidden")):
        with pytest.raises(ValidationError) as refused:
            Late.model_validate(bad)
        assert refused.value.errors()[0]["type"] == kind
    with pytest.raises(ValidationError, match="frozen"):
        Late(n=1).n = 2  # type: ignore[misc]  # frozen
