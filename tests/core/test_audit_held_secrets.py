"""No audit record holds the value of a secret this host keeps (SPEC §4, security.md "Exact-value
redaction"). A record keeps what a caller typed — a file's path, an operation's name — so a
provider key pasted as a file's name reached the chain in clear (the tryout of stop 46); the
host redacts every held value from a record before it is chained."""

from __future__ import annotations

import json

from core.secret import REDACTED
from tests.missions.kit import HUMAN
from tests.support import HostHarness

KEY = "sk-ant-AUDIT-CANARY-5d1e9a7c3b8f2e4d6a0c1b3e5f7a9d2c"


def test_no_audit_record_holds_a_held_secret_typed_into_a_path_or_an_operation() -> None:
    h = HostHarness()
    answer, _ = h.call(
        "keys.set", origin=HUMAN, provider="anthropic", variable="ANTHROPIC_API_KEY", value=KEY
    )
    assert answer["ok"], answer
    pid = h.ok("project.create", name="Audit")["project"]["id"]
    h.ok("file.write", b"x", project=pid, path=f"notes/{KEY}.txt")
    h.ok("file.mkdir", project=pid, path=f"d-{KEY}")
    h.ok("file.move", project=pid, src=f"notes/{KEY}.txt", dst="notes/plain.txt")
    h.refused(KEY)  # an operation nobody knows, named by the key: audited as refused
    records = [json.dumps(record) for record in h.sink.records.values()]
    assert not [record for record in records if KEY in record]
    written = [r for r in h.sink.records.values() if r["op"] == "file.write"]
    assert written[-1]["details"]["path"] == f"notes/{REDACTED}.txt"
    assert h.ok("audit.verify")["ok"] is True
