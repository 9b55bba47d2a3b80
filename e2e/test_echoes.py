"""Refusals never echo what the caller sent, through the page (issue 13, finding 7; seed 002 §2;
SPEC §4, §5): hostile keys and values — token-shaped (``vbx_…``, ``vbh_…``) or merely unknown —
sent through the page's own client to every operation come back in no refusal, and none of
them is written into the audit. The core suite pins the same law per rule
(``tests/core/test_echoes.py``); this runs it through postMessage, Pyodide and the worker."""

from __future__ import annotations

import json

from core.host.registry import OPERATIONS
from e2e.hostpage import SECRET_SHAPE, HostPage
from tests.core.test_echoes import BEARER, ECHOES, HOST_TOKEN, PLAIN_UNKNOWN, _free_form_calls


def test_hostile_keys_and_values_through_every_operation_reach_no_refusal_and_no_audit_record(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "echoes"})["result"]["project"]["id"]
    refusals = []
    for op in sorted(OPERATIONS):
        for args in ({BEARER: HOST_TOKEN}, {PLAIN_UNKNOWN: BEARER}):
            answer = host.call(op, args, human=True)
            assert not answer["ok"] and answer["refusal"]["code"] == "message-malformed", op
            refusals.append(answer["refusal"])
    for op, args, _ in _free_form_calls(project):
        answer = host.call(op, args, human=True)
        assert not answer["ok"], (op, answer)
        refusals.append(answer["refusal"])
    shown = json.dumps(refusals)
    assert not any(e in shown for e in ECHOES), [
        r for r in refusals if SECRET_SHAPE.search(json.dumps(r))
    ]
    records = host.ok("audit.list", {"limit": 1000})["result"]["records"]
    assert len(records) >= len(refusals)
    audited = json.dumps(records)
    assert not any(e in audited for e in ECHOES)
    received = "\n".join(host.received())
    assert not any(e in received for e in ECHOES)
    host.assert_clean()
