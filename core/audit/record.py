"""The audit's contract: a record, its hash and MAC input, and the anchor document
(SPEC §5; issue 13). Pure: no storage, no key, no clock.

A record names the environment, the actor (seat), the operation, the decision
(``admitted``/``refused``/``recorded``), the rule or refusal code, the project, and non-secret
details. Each record carries ``prev``, the hash of the record before it, ``hash``, the sha256
of its own canonical JSON without ``hash`` and ``mac``, and ``mac``, an HMAC-SHA256 of that
hash under the host's :class:`~core.ports.AuditKey` — so editing or deleting any record breaks
the chain at that record, and a record (or a whole re-hashed chain) made by anyone without the
key carries no valid MAC.

The anchor document (:class:`AuditAnchor`, kept as :data:`ANCHOR_NAME` in HOST_DIR) is the
head the host last wrote; when it is written and how it is checked is
:mod:`core.audit.anchor` and :mod:`core.audit.verify`.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from core.gestures import HUMAN_UI
from core.model import Contract, canonical_json
from core.vocabulary import Sha256Hex

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

ANCHOR_NAME = "audit-anchor.json"
"""The HOST_DIR document holding the audit's anchor (:class:`AuditAnchor`)."""

RECORD_MAC_LABEL = b"voicebox-audit-record-v1\n"
ANCHOR_ORIGIN = "voicebox-audit-anchor-v1"

Decision = Literal["admitted", "refused", "recorded"]
DetailValue = Annotated[str, StringConstraints(max_length=1000)] | int | bool | None
MAX_DETAILS = 32
Hex64 = Sha256Hex


class AuditRecord(Contract):
    """One audit record. Stored in the sink as its JSON object; hashed canonically."""

    seq: int = Field(ge=1)
    at: str = Field(
        description="When: RFC 3339 UTC with milliseconds and Z (records before issue 14 say "
        "+00:00; they verify as stored).",
        max_length=40,
    )
    env: str = Field(description="The environment the host acted for ('local' or an envKey).")
    actor: str = Field(max_length=200, description=f"Seat or origin: 'page', '{HUMAN_UI}', ...")
    op: str = Field(max_length=200)
    decision: Decision
    rule: str = Field(max_length=200, description="The refusal code, or the rule that admitted.")
    project: str | None = Field(default=None, max_length=200)
    details: dict[Annotated[str, StringConstraints(max_length=64)], DetailValue] = Field(
        default_factory=dict, max_length=MAX_DETAILS
    )
    prev: Sha256Hex
    hash: Sha256Hex
    mac: Hex64 | None = Field(
        default=None,
        description="HMAC-SHA256 of the record's hash under the host's audit key (absent on "
        "records written before the anchor existed).",
    )


class AuditAnchor(Contract):
    """The head the host last wrote, kept in HOST_DIR as :data:`ANCHOR_NAME`
    (:mod:`core.audit.anchor`).

    ``mac`` is the host key's HMAC of :meth:`checkpoint`. ``since`` is the first sequence
    number the host MACs under this anchor (records before it are from before the anchor);
    ``foreign_from``, once set, is the first record the host found past its anchor that it
    had not written — kept so that record is still named ``forged`` after the host writes on.
    """

    v: Literal[1] = 1
    seq: int = Field(ge=0, description="The newest durable record's sequence number (0: none).")
    hash: Hex64 = Field(description="That record's hash (GENESIS when seq is 0).")
    since: int = Field(ge=1)
    foreign_from: int | None = Field(default=None, ge=1)
    mac: Hex64

    def checkpoint(self) -> bytes:
        """The text the MAC covers, a C2SP-style checkpoint body: origin, size, head hash,
        then this anchor's two extension lines."""
        foreign = "-" if self.foreign_from is None else str(self.foreign_from)
        return (
            f"{ANCHOR_ORIGIN}\n{self.seq}\n{self.hash}\nsince {self.since}\nforeign {foreign}\n"
        ).encode()


def record_hash(fields: dict[str, object]) -> str:
    """sha256 hex of the canonical JSON of ``fields`` without its ``hash`` and ``mac`` keys."""
    body = {k: v for k, v in fields.items() if k not in ("hash", "mac")}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def _mac_input(record_hash_hex: str) -> bytes:
    """What a record's MAC covers: a label (so no other MAC of the key can stand for it) and
    the record's hash (which covers every other field and, through ``prev``, the chain)."""
    return RECORD_MAC_LABEL + record_hash_hex.encode()
