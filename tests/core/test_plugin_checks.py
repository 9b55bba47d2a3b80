"""A plugin call's checks are data, run in their declared order, and a host receipt names the
audit record of its write or is not made (issue 35 item 3)."""

from __future__ import annotations

from typing import Any

import pytest

from core.host import tools
from core.host.tools import PLUGIN_CHECKS, PluginCheck, PluginRun, ToolBox
from core.refusals import Code, Refused
from core.tools.admission import CallRequest
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


def test_a_plugin_call_runs_exactly_the_declared_checks_in_their_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def step(name: str, refuse: bool) -> PluginCheck:
        async def record(_box: ToolBox, _run: PluginRun) -> None:
            seen.append(name)
            if refuse:
                raise Refused(Code.PLUGIN_PIN_MISMATCH, "stop here")

        return PluginCheck(name, (), record)

    monkeypatch.setattr(
        tools, "PLUGIN_CHECKS", (step("a", False), step("b", False), step("c", True))
    )
    box = HostHarness().host.tools
    with pytest.raises(Refused) as refused:
        run(box._run_plugin(object(), actor="agent"))  # type: ignore[arg-type]
    assert refused.value.code == Code.PLUGIN_PIN_MISMATCH
    assert seen == ["a", "b", "c"]


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
