"""A plugin call is an operation run by the pipeline, its checks data run in their declared
order, and a host receipt names the audit record of its write or is not made (issue 35 item 3)."""

from __future__ import annotations

from typing import Any

import pytest

from core.host import tools
from core.host.tools import PLUGIN_CHECKS, PluginCheck, PluginChecks, PluginRun, ToolBox
from core.model import Contract
from core.refusals import Code, Refused
from core.tools.admission import Admitted, CallRequest
from core.tools.plugin_call import PluginOutput
from core.tools.registry import EffectClass, OperationEntry
from tests.support import HostHarness, run


def test_a_plugin_calls_checks_are_listed_in_their_order_as_data() -> None:
    assert [check.name for check in PLUGIN_CHECKS] == [
        "installed",
        "reads",
        "pinned",
        "sandboxed",
        "decoded",
        "still-admitted",
        "writes-decided",
        "written",
    ]
    # nothing is written before every check that may refuse a write has passed
    names = [check.name for check in PLUGIN_CHECKS]
    assert names.index("written") == len(names) - 1
    assert all(Code.PLUGIN_WITHDRAWN in c.refuses for c in PLUGIN_CHECKS[:1])


class NoteArgs(Contract):
    project: str
    path: str = "a.txt"


def plugin_call(h: HostHarness, effect: EffectClass = "read") -> Admitted:
    """An admitted call of a plugin operation registered in ``h``'s tool box (no module: the
    tests below replace the checks that would read, pin and sandbox it)."""
    pid = h.ok("project.create", name="p")["project"]["id"]
    entry = OperationEntry(
        name="notes.count",
        origin="plugin:notes",
        summary="Count.",
        args_model=NoteArgs,
        effect=effect,
        receipt_rule="internal-read" if effect == "read" else "local-write",
        capabilities=frozenset({"files"}),
        release="1.0.0",
        manifest_sha256="a" * 64,
    )
    h.host.tools.registry.register(entry)
    return Admitted(entry, NoteArgs(project=pid), h.ctx.policy)


def checks(seen: list[str], *names: str, refuse: str | None = None) -> tuple[PluginCheck, ...]:
    def step(name: str) -> PluginCheck:
        async def record(_box: ToolBox, run: PluginRun) -> None:
            seen.append(name)
            if name == refuse:
                raise Refused(Code.PLUGIN_PIN_MISMATCH, "stop here")
            run.answer = PluginOutput(ok=True, result={"n": len(seen)})

        return PluginCheck(name, (), record)

    return tuple(step(name) for name in names)


def test_a_plugin_call_runs_exactly_the_declared_checks_in_their_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(tools, "PLUGIN_CHECKS", checks(seen, "a", "b", "c", "d", refuse="c"))
    h = HostHarness()
    admitted = plugin_call(h)
    with pytest.raises(Refused) as refused:
        run(h.host.tools.run(admitted, actor="agent"))
    assert refused.value.code == Code.PLUGIN_PIN_MISMATCH
    assert seen == ["a", "b", "c"]


def test_a_plugin_call_is_an_operation_run_by_the_pipeline_with_its_checks_as_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 35 item 3: the call is run by ``Host.run`` as an operation whose handler carries
    the checks (the order read from that data), audited as every operation is — admitted, or
    refused naming the code and the check that gave it."""
    h = HostHarness()
    admitted = plugin_call(h)
    op = h.host.tools.plugin_operation(admitted)
    assert isinstance(op.handler, PluginChecks)
    assert [c.name for c in op.handler.checks] == [c.name for c in PLUGIN_CHECKS]
    assert (op.name, op.args, op.writes, op.read_only) == ("notes.count", NoteArgs, False, True)
    assert h.host.tools.plugin_operation(plugin_call(HostHarness(), "write")).writes

    ran: list[str] = []
    pipeline_run = h.host.run

    async def spy(name: Any, args: Any, **kw: Any) -> Any:
        ran.append(name if isinstance(name, str) else name.name)
        return await pipeline_run(name, args, **kw)

    monkeypatch.setattr(h.host, "run", spy)
    seen: list[str] = []
    monkeypatch.setattr(tools, "PLUGIN_CHECKS", checks(seen, "a", "b"))
    outcome = run(h.host.tools.run(admitted, actor="agent"))
    assert outcome.result == {"ok": True, "result": {"n": 2}, "message": None, "written": []}
    monkeypatch.setattr(tools, "PLUGIN_CHECKS", checks(seen, "a", "b", refuse="b"))
    with pytest.raises(Refused):
        run(h.host.tools.run(admitted, actor="agent"))
    assert ran == ["notes.count", "notes.count"]
    listed = h.ok("audit.list", limit=50)["records"]  # newest first
    records = [r for r in reversed(listed) if r["op"] == "notes.count"]
    assert [(r["decision"], r["rule"]) for r in records] == [
        ("admitted", "admitted"),
        ("refused", "plugin-pin-mismatch"),
    ]
    assert records[0]["project"] == admitted.args.project  # type: ignore[attr-defined]
    assert records[0]["details"] == {"plugin": "notes", "written": 0}
    assert records[1]["details"]["check"] == "b"


def test_a_receipt_names_the_audit_record_of_its_write_or_is_not_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="p")["project"]["id"]
    box = h.host.tools
    entry = box.registry.get("file.write")
    assert entry is not None

    async def lost(**_fields: Any) -> int:
        raise OSError("the audit sink is gone")

    monkeypatch.setattr(h.ctx.audit, "append", lost)
    args = {"project": pid, "path": "a.txt", "content_b64": "aGk="}
    outcome = run(
        box.run(box.admit(CallRequest("file.write", entry.descriptor_id, args)), actor="agent")
    )
    assert outcome.result["size"] == 2  # the write happened
    assert outcome.receipt is None  # but no receipt names a store version 0
