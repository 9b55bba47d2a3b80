"""Verifying the audit: what a walk of the chain against the anchor can find, and how it
is worded (SPEC §5; issue 13). Pure: :meth:`core.audit.AuditLog.verify` reads the store
and the anchor and hands each record to :func:`_check_record` and :class:`_Walk`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError

from core.audit.record import AuditAnchor, AuditRecord, record_hash
from core.model import Contract

Finding = Literal[
    "gap",
    "malformed",
    "renumbered",
    "edited",
    "unlinked",
    "rewritten",
    "forged",
    "truncated",
    "wiped",
    "anchor-lost",
]
"""What :meth:`AuditLog.verify` found, machine-readable:

- ``gap``: a record is missing inside the chain (a record, or the newest ones before a later
  append, were deleted);
- ``malformed`` / ``renumbered`` / ``edited`` / ``unlinked``: a record does not parse, sits
  under another sequence number, does not match its own hash, or does not link to the one
  before it;
- ``rewritten``: a record the anchor vouched for is no longer the one the host wrote — its MAC
  is missing or wrong, or it is not the head the anchor names (a chain re-hashed after an edit);
- ``forged``: a record past the anchored head (or past where the host first found records it
  did not write) carries no valid MAC — the host did not write it;
- ``truncated``: the anchor says the audit reached a record the store no longer has (its
  newest records were deleted);
- ``wiped``: the store is empty but the anchor says records were written;
- ``anchor-lost``: records carry the host's MAC but the anchor is missing, does not open,
  does not carry the host's MAC, or begins after them (it was lost or replaced).
"""


AnchorProblem = Literal["missing", "unreadable", "invalid"]


class Verification(Contract):
    """The outcome of :meth:`AuditLog.verify`.

    ``ok`` is true when every record's hash, link and MAC hold and the store reaches the
    anchored head; otherwise ``finding`` names what was found (:data:`Finding`),
    ``broken_seq`` the first sequence number concerned and ``reason`` says it in words.
    ``checked`` counts records examined. ``unanchored_until`` is the last of the records
    from before the anchor existed (they carry no MAC and are checked by hash chain only),
    or null; ``anchor_seq`` the head the anchor vouches for, or null when there is none.
    """

    ok: bool
    checked: int = Field(description="Records examined.")
    broken_seq: int | None = Field(
        default=None, description="The first sequence number concerned by the finding."
    )
    reason: str | None = Field(default=None, description="The finding in words.")
    finding: Finding | None = Field(
        default=None,
        description="What was found: gap, malformed, renumbered, edited, unlinked, rewritten, "
        "forged, truncated, wiped or anchor-lost (null when ok).",
    )
    unanchored_until: int | None = Field(
        default=None,
        description="The last record from before the anchor existed (no MAC; checked by hash "
        "chain only), or null.",
    )
    anchor_seq: int | None = Field(
        default=None, description="The head the anchor vouches for, or null when there is none."
    )


_LOST: dict[str, str] = {
    "missing": "record carries this host's MAC, but the audit's anchor is missing: deleted "
    "newest records would go unseen",
    "unreadable": "record carries this host's MAC, but the audit's anchor does not open: "
    "deleted newest records would go unseen",
    "invalid": "record carries this host's MAC, but the audit's anchor does not: it was "
    "replaced, and deleted newest records would go unseen",
}


class _Walk:
    """What :meth:`AuditLog.verify` has learnt so far, and how it words a finding."""

    def __init__(self, anchor: AuditAnchor | None, problem: AnchorProblem | None) -> None:
        self.anchor = anchor
        self.problem = problem
        self.checked = 0
        self.seen_mac = False
        self.first_mac: int | None = None
        self.unanchored_until: int | None = None

    def keyed(
        self, seq: int, rec: dict[str, object], mac_holds: bool
    ) -> tuple[Finding, str] | None:
        """Check ``rec``'s MAC and its place against the anchor (hash and link already hold)."""
        anchor = self.anchor
        has_mac = rec.get("mac") is not None
        required = self.seen_mac or (anchor is not None and seq >= anchor.since)
        if has_mac or required:
            if not mac_holds:
                what = "does not carry this host's MAC" if has_mac else "carries no MAC"
                if self._vouched(seq):
                    return (
                        "rewritten",
                        f"record {what}, though the anchor vouched for it: it was rewritten",
                    )
                return "forged", f"record {what}: the host did not write it (a forged record)"
            if anchor is not None and seq < anchor.since:
                return (
                    "anchor-lost",
                    f"record carries this host's MAC, but the audit's anchor begins at record "
                    f"{anchor.since}: it was lost or replaced, and deleted newest records before "
                    f"it would go unseen",
                )
            self.seen_mac = True
            self.first_mac = self.first_mac or seq
        else:
            self.unanchored_until = seq
        if anchor is not None and seq == anchor.seq and rec["hash"] != anchor.hash:
            return (
                "rewritten",
                "record is not the one the anchor vouched for: the chain was rewritten",
            )
        return None

    def _vouched(self, seq: int) -> bool:
        anchor = self.anchor
        if anchor is None or seq > anchor.seq:
            return False
        return anchor.foreign_from is None or seq < anchor.foreign_from

    def _anchor_seq(self) -> int | None:
        return None if self.anchor is None else self.anchor.seq

    def broken(self, finding: Finding, seq: int, reason: str) -> Verification:
        return Verification(
            ok=False,
            checked=self.checked,
            broken_seq=seq,
            reason=reason,
            finding=finding,
            unanchored_until=self.unanchored_until,
            anchor_seq=self._anchor_seq(),
        )

    def intact(self) -> Verification:
        return Verification(
            ok=True,
            checked=self.checked,
            unanchored_until=self.unanchored_until,
            anchor_seq=self._anchor_seq(),
        )


def _check_record(
    seq: int, rec: dict[str, object], expected_prev: str
) -> tuple[Finding, str] | None:
    try:
        parsed = AuditRecord.model_validate(rec)
    except ValidationError:
        return "malformed", "record does not parse"
    if parsed.seq != seq:
        return "renumbered", "sequence number changed"
    if record_hash(rec) != parsed.hash:
        return "edited", "record content does not match its hash"
    if parsed.prev != expected_prev:
        return "unlinked", "record does not link to the previous record"
    return None
