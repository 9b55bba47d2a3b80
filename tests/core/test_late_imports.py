"""The host's late modules (issue 18, cold boot; core/host/registry.py, "Late modules").

The operations the first screen does not need are declared by module and imported after the
host is ready, one module at a time, by one shared import (``Host.late_imports``). The law: a
call that arrives while that import is still running waits for it or is answered — it never
fails with an import error, never sees ``operation-unknown`` for an operation the host has,
and never triggers a second import of its own. The modules here are written by the test, so
they are certainly not imported before it starts.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.host.operations import LateModule, Operation, Operations, Ref
from core.host.pipeline import Host
from core.host.registry import LATE_MODULES, OPERATIONS
from core.model import NoArgs
from core.tools.admission import Admitted
from core.tools.builtin import BuiltinTool
from tests.support import HostHarness

LATE_SOURCE = """
import asyncio

from core.host.operations import Outcome
from core.model import Contract

IMPORTED_BY = []
try:
    IMPORTED_BY.append(asyncio.current_task())
except RuntimeError:
    IMPORTED_BY.append(None)


class Said(Contract):
    word: str


async def say(call):
    return Outcome(result=Said(word={word!r}))
"""


@pytest.fixture
def late_modules(tmp_path: Path, request: pytest.FixtureRequest):
    """Two fresh modules ``late_<tag>_one`` / ``late_<tag>_two``, each declaring one
    operation; removed from ``sys.modules`` and ``sys.path`` afterwards."""
    tag = request.node.name.replace("[", "_").replace("]", "_")[-24:]
    names = [f"late_{tag}_one", f"late_{tag}_two"]
    for name, word in zip(names, ("one", "two"), strict=True):
        (tmp_path / f"{name}.py").write_text(LATE_SOURCE.format(word=word), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield names
    finally:
        sys.path.remove(str(tmp_path))
        for name in names:
            sys.modules.pop(name, None)


def _ops(names: list[str]) -> tuple[Operation, ...]:
    out = []
    for name in names:
        late = LateModule(name)
        out.append(Operation(f"late.{name}", NoArgs, late.Said, late.say, "A late test operation."))
    return tuple(out)


def _message(op: str, n: int) -> str:
    return json.dumps({"v": 1, "id": f"m{n}", "op": op, "args": {}})


@pytest.mark.cpython_only  # a fresh interpreter: a subprocess, which Pyodide has not
def test_the_registry_imports_none_of_its_late_modules_and_lists_them_all() -> None:
    """Importing the registry (and the pipeline) imports no late module — checked in a fresh
    interpreter; and the late modules are exactly those the registry names by module."""
    declared = {op.pending for op in map(OPERATIONS.declared, OPERATIONS)} - {None}
    assert declared <= set(LATE_MODULES)
    code = (
        "import sys, core.host.pipeline, core.host.registry as r\n"
        "print(sorted(m for m in r.LATE_MODULES if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m == 'jinja2' or m.startswith('jinja2.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], out.stdout


def test_looking_up_a_late_operation_gives_its_real_models_and_handler(late_modules) -> None:
    ops = Operations(_ops(late_modules))
    name = f"late.{late_modules[0]}"
    assert isinstance(ops.declared(name).result, Ref)  # as declared: nothing imported
    assert late_modules[0] not in sys.modules and not ops.loaded(name)
    op = ops[name]
    assert late_modules[0] in sys.modules and ops.loaded(name)
    assert op.result is sys.modules[late_modules[0]].Said
    assert op.handler is sys.modules[late_modules[0]].say
    assert ops.pending() == (late_modules[1],)


def test_a_late_call_outside_a_task_imports_its_module_and_is_answered(late_modules) -> None:
    """A coroutine driven by hand (not an asyncio task: nothing runs beside it) imports the
    module in the call itself; the call is answered."""
    harness = HostHarness(_ops(late_modules))
    assert harness.ok(f"late.{late_modules[1]}") == {"word": "two"}


@pytest.mark.cpython_only  # runs its own event loop (see tests/core/test_audit_batching.py)
def test_a_call_arriving_during_the_late_imports_waits_and_is_answered(late_modules) -> None:
    """The shared import of the late modules has started (what the worker does right after
    ``ready``) when three calls arrive: one for each late module's operation and one eager
    (``host.info``). The eager call is answered while the import is still running; each
    late call waits for the shared import and is then admitted normally — never an import
    error or ``operation-unknown`` — and each module was imported once, by the shared
    import, not inside a call."""
    one, two = late_modules

    async def scenario() -> tuple[list[dict], list[bool], list[object], asyncio.Future[None]]:
        host = HostHarness(_ops(late_modules)).host
        shared = host.late_imports()
        assert not shared.done()
        texts = [_message(f"late.{two}", 1), _message("host.info", 2), _message(f"late.{one}", 3)]
        calls = [asyncio.ensure_future(host.handle(t)) for t in texts]
        importing_when_answered: list[bool] = [False] * len(calls)
        for i, call in enumerate(calls):
            call.add_done_callback(
                lambda _, i=i: importing_when_answered.__setitem__(i, not shared.done())
            )
        answers = await asyncio.gather(*calls)
        assert host.late_imports() is shared  # one shared import, started once
        by = sys.modules[one].IMPORTED_BY + sys.modules[two].IMPORTED_BY
        return [json.loads(a) for a, _ in answers], importing_when_answered, by, shared

    answers, importing_when_answered, imported_by, shared = asyncio.run(scenario())
    assert all(a["ok"] for a in answers), answers
    assert answers[0]["result"] == {"word": "two"}
    assert answers[2]["result"] == {"word": "one"}
    assert importing_when_answered == [False, True, False]  # host.info did not wait
    assert imported_by == [shared, shared]  # by the shared import, not inside a call


@pytest.mark.cpython_only  # runs its own event loop (see tests/core/test_audit_batching.py)
def test_a_late_operation_is_real_once_its_module_is_in_not_once_every_module_is(
    late_modules,
) -> None:
    """Issue 34: the shared import makes a module's operations real in the step that imports
    it, so a call waiting for one goes on then — before, every late call waited until the
    last late module was in (a fresh host's first post paid the whole late import)."""
    one, two = late_modules

    async def scenario() -> tuple[bool, bool]:
        host = HostHarness(_ops(late_modules)).host
        shared = host.late_imports()
        for _turn in range(1000):  # turn by turn until the first module is in
            if one in sys.modules:
                break
            await asyncio.sleep(0)
        seen = host.operations.loaded(f"late.{one}"), two in sys.modules
        await shared
        return seen

    assert asyncio.run(scenario()) == (True, False)


def test_the_post_and_the_mailbox_are_the_first_late_modules() -> None:
    """Issue 34: a post right after a reload waits for these two imports only, and the
    mailboxes' warm-up (browser_host/main.py) starts once the first is in."""
    assert LATE_MODULES[:2] == ("core.host.mailbox_ops", "core.host.mission_ops")


@pytest.mark.cpython_only  # a fresh interpreter: a subprocess, which Pyodide has not
def test_building_the_host_imports_none_of_its_late_modules() -> None:
    """Issue 34, cold boot: building the host (its built-in tools registered, ``project.export``
    among them) imports no late module — before, the tool box looked its operations up and so
    imported the archive module (and what it imports) before ``ready``."""
    code = (
        "import sys\n"
        "from tests.support import HostHarness\n"
        "import core.host.registry as r\n"
        "HostHarness()\n"
        "print(sorted(m for m in r.LATE_MODULES if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.split("\n")[0] == "[]", out.stdout


@pytest.mark.cpython_only  # runs its own event loop (see tests/core/test_audit_batching.py)
def test_a_tool_of_a_late_operation_waits_for_the_late_import_and_is_answered(
    late_modules,
) -> None:
    """Issue 34: a built-in tool whose operation is a late one is registered without importing
    its module; called while the shared late import is under way, it waits for that import
    and is answered — its module imported once, by the shared import, not by the call."""
    one, _two = late_modules

    async def scenario() -> tuple[bool, dict, list[object], asyncio.Future[None]]:
        harness = HostHarness()
        tool = BuiltinTool("late.tool", f"late.{one}", "A tool of a late operation.")
        host = Host(harness.ctx, OPERATIONS.extended(*_ops(late_modules)), tools=(tool,))
        imported_at_build = one in sys.modules
        entry = host.tools.registry.get("late.tool")
        assert entry is not None and entry.args_model is NoArgs
        shared = host.late_imports()
        assert not shared.done()
        outcome = await host.tools.run(Admitted(entry, NoArgs(), harness.ctx.policy), actor="agent")
        return imported_at_build, outcome.result, sys.modules[one].IMPORTED_BY, shared

    imported_at_build, result, imported_by, shared = asyncio.run(scenario())
    assert not imported_at_build
    assert result == {"word": "one"}
    assert imported_by == [shared]


def test_a_tool_whose_operation_has_late_arguments_is_refused_when_the_host_is_built(
    late_modules,
) -> None:
    """A tool's arguments model is registered when the host is built, so it must be real
    there: a late one is a ``ValueError`` at build, never a late surprise in a call."""
    late = LateModule(late_modules[0])
    op = Operation(f"late.{late_modules[0]}", late.Said, late.Said, late.say, "Late args.")
    tool = BuiltinTool("late.args", op.name, "A tool whose arguments are late.")
    with pytest.raises(ValueError, match="late"):
        Host(HostHarness().ctx, OPERATIONS.extended(op), tools=(tool,))
    assert late_modules[0] not in sys.modules
