"""The mailbox's contract: one line of the log, its content id, and how it is written and
read (seed 004 §2). Pure: no storage.

**Lines.** Each line is one :class:`MailboxLine`, written as canonical JSON plus ``\\n``::

    {"at":"…Z","from":"hand-7","id":"<sha256 hex>","kind":"mission","mission":{…letter…}}
    {"at":"…Z","body":"…","from":"operator","id":"<sha256 hex>","kind":"note","subject":"…",
     "to":"hand-7"}

``kind`` defaults to ``"note"`` (a line without it is a plain letter). ``at`` is the host time of
posting and is not part of the content. The content id ``id`` is:

- for a mission line, the letter's content id (:func:`core.missions.letters.letter_id`) — the sha256
  of the canonical JSON of the ``mission`` member, whose sha12 the next letter names;
- for a note, the sha256 of the canonical JSON of ``{"kind", "from", "to", "subject", "body"}``.

An identical replay has the same id and is not appended again (idempotent). A line the reader
cannot parse — not JSON, an unknown field or phase, an id that does not match its content, a line
longer than :data:`MAX_LINE_BYTES` — is skipped and counted, never fatal; it stays in the log
untouched.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from core.missions.letters import MissionLetter, OneLine, letter_id
from core.model import Contract, canonical_json
from core.time import Instant
from core.vocabulary import Sha256Hex

MAX_LINE_BYTES = 1 << 20
MAX_NOTE_CHARS = 256 * 1024

AgentId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$")]
"""Who posts or receives a letter: an agent id, a seat, or ``operator`` for the page's person."""


def _note_id(sender: str, to: str | None, subject: str | None, body: str | None) -> str:
    content = {"kind": "note", "from": sender, "to": to, "subject": subject, "body": body}
    return hashlib.sha256(canonical_json(content)).hexdigest()


class MailboxLine(Contract):
    """One mailbox line (shape and content id in the module docstring)."""

    model_config = ConfigDict(populate_by_name=True)

    id: Sha256Hex
    at: Instant
    kind: Literal["note", "mission"] = "note"
    from_: AgentId = Field(alias="from")
    to: AgentId | None = None
    subject: OneLine | None = None
    body: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    mission: MissionLetter | None = None

    @model_validator(mode="after")
    def _consistent(self) -> MailboxLine:
        """A mission line carries only its letter; a note carries a body; ids match content."""
        if self.kind == "mission":
            if self.mission is None or any(
                v is not None for v in (self.to, self.subject, self.body)
            ):
                raise ValueError("a mission line carries a letter and nothing else")
            expected = letter_id(self.mission)
        else:
            if self.body is None or self.mission is not None:
                raise ValueError("a note carries a body and no mission letter")
            expected = _note_id(self.from_, self.to, self.subject, self.body)
        if self.id != expected:
            raise ValueError("the id does not match the content")
        return self

    def wire(self) -> dict[str, Any]:
        """The line as JSON data: envelope fields that are null are left out, the letter whole."""
        out: dict[str, Any] = {"id": self.id, "at": self.at, "kind": self.kind, "from": self.from_}
        if self.kind == "mission":
            assert self.mission is not None
            out["mission"] = self.mission.wire()
        else:
            out.update(
                {k: v for k, v in (("to", self.to), ("subject", self.subject)) if v is not None}
            )
            out["body"] = self.body
        return out


def mission_line(letter: MissionLetter, agent_id: str, at: str) -> MailboxLine:
    """The line that posts ``letter`` for ``agent_id`` at host time ``at``."""
    return MailboxLine(id=letter_id(letter), at=at, kind="mission", from_=agent_id, mission=letter)


def note_line(sender: str, to: str | None, subject: str | None, body: str, at: str) -> MailboxLine:
    """A plain letter from ``sender`` to the inbox ``to`` (or to nobody in particular)."""
    return MailboxLine(
        id=_note_id(sender, to, subject, body),
        at=at,
        kind="note",
        from_=sender,
        to=to,
        subject=subject,
        body=body,
    )


def encode_line(line: MailboxLine) -> bytes:
    """The line's bytes in the log: canonical JSON and a newline."""
    return canonical_json(line.wire()) + b"\n"


def decode_line(raw: bytes) -> MailboxLine | None:
    """Parse one log line; ``None`` when it cannot be parsed (it is then skipped, never fatal)."""
    if len(raw) > MAX_LINE_BYTES:
        return None
    try:
        return MailboxLine.model_validate_json(raw)
    except (ValidationError, ValueError, RecursionError):
        return None
