"""Audit operations: ``audit.list`` (newest first, filterable) and ``audit.verify`` (SPEC §5).

These two read the audit; they are not themselves audited, or every look at the audit would
grow it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from core.audit.record import AuditRecord
from core.host.operations import Call, Outcome
from core.model import Contract, JsonOf, NoArgs

__all__ = ["AuditListArgs"]


class AuditListArgs(Contract):
    """``audit.list``: records with ``seq < before`` (newest first), optionally filtered.

    Filters match exactly: ``op``, ``decision``, ``rule`` (a refusal code or rule name).
    """

    before: int | None = Field(default=None, ge=1)
    limit: int = Field(default=100, ge=1, le=1000)
    op: str | None = Field(default=None, max_length=200)
    decision: str | None = Field(default=None, max_length=20)
    rule: str | None = Field(default=None, max_length=200)


class AuditPage(Contract):
    """A page of audit records, newest first; ``next_before`` continues the walk (or null)."""

    records: list[Annotated[dict[str, Any], JsonOf(AuditRecord)]]
    head: int
    next_before: int | None


def _matches(rec: dict[str, Any], args: AuditListArgs) -> bool:
    return all(
        want is None or rec.get(key) == want
        for key, want in (("op", args.op), ("decision", args.decision), ("rule", args.rule))
    )


async def audit_list(call: Call[AuditListArgs]) -> Outcome:
    """Scans back from ``before`` in pages until ``limit`` matching records are found."""
    args: AuditListArgs = call.args
    log = call.ctx.audit
    head = await log.head_seq()
    before = args.before
    found: list[dict[str, Any]] = []
    scanned = 0
    while len(found) < args.limit and scanned < 20_000:
        page = await log.page(before=before, limit=500)
        if not page:
            before = None
            break
        scanned += len(page)
        for rec in page:
            seq = rec["seq"]  # an audit record's number: always an int
            before = seq if isinstance(seq, int) else int(str(seq))
            if _matches(rec, args):
                found.append(rec)
                if len(found) == args.limit:
                    break
    next_before = before if before is not None and before > 1 else None
    return Outcome(AuditPage(records=found, head=head, next_before=next_before))


async def audit_verify(call: Call[NoArgs]) -> Outcome:
    """Returns :class:`~core.audit.Verification`: ``{ok, checked, finding, broken_seq, reason,
    unanchored_until, anchor_seq}`` (``finding`` from the closed list :data:`core.audit.Finding`).
    """
    return Outcome(await call.ctx.audit.verify())
