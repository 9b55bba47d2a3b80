"""What this host takes from a peer's answer (seed 002 §1, §4; seed 003 "a result and a receipt
prove different things"; SPEC §6; issue 13).

A peer is another environment — paired and authenticated, and still possibly wrong or lying.
Everything it says is untrusted text, so its answer is re-read here before any of it reaches
the page or the local audit:

- **A refusal** is relayed by its code only, with this host's own sentence ("The peer
  environment refused the call: <the code's meaning>"); the peer's message and details are
  dropped. Its ``field`` is kept only when every part names a field one of our models declares
  (:func:`known_field`; the host composing the caller hands it those names — its operations'
  arguments, the call envelope, letters, blocks, the policy). A code that speaks for this host —
  ``host-restarted``, ``host-active-elsewhere``, ``host-not-ready``, ``boot-failed``,
  ``wheel-refused``, ``environment-not-paired``: no peer can know those of us — is not relayed:
  ``peer-answer-invalid``.
- **An answer outside the contract** (a code not on the closed list, a broken frame) for a
  call that is waiting is ``peer-answer-invalid`` (502) at once, outcome ``unknown``
  (:func:`invalid_answer`) — not a silent wait for the deadline.
- **A receipt** is host evidence only of the environment that performed the effect: one whose
  issuer environment is not the one called, or that is for another tool than the one called,
  is refused ``receipt-forgery-refused`` (field ``receipt``), outcome ``unknown`` — the peer
  may or may not have done something; nothing happened here. One the peer does not sign as
  its own (``issuer`` other than ``host`` on the wire), or with impossible values — a path
  that is not a project path, a project that is not a project id, a ``local-write`` without
  its project (sizes, sha256 and store versions are held to their types by the wire model)
  — is ``peer-answer-invalid``. An accepted receipt reaches the page and the audit marked
  ``issuer: "peer:<envKey fingerprint>"``, never ``host``: it is the peer's claim about
  itself, relayed (issue 29 item 13).
- **A result** (and an accepted receipt) passes the token scrub: every key and string shaped
  like a bearer or a host token becomes ``[redacted]`` (:func:`core.secret.scrub_secrets`).
  A peer's project data shaped like one is shown so, too; the bytes of a streamed archive are
  the project's own and are not rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Set

from pydantic import ValidationError

from core.custody.pair_code import env_fingerprint
from core.custody.wire import CallEnvelope, ExecuteResult
from core.paths import parse_path
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import REFUSALS, Code, RefusalBody, Refused
from core.secret import scrub_secrets
from core.tools.receipts import HostReceipt, retry_advice

__all__ = [
    "NOT_RELAYED",
    "accepted_result",
    "invalid_answer",
    "known_field",
    "relayed_refusal",
]

NOT_RELAYED: frozenset[Code] = frozenset(
    {
        Code.HOST_RESTARTED,
        Code.HOST_ACTIVE_ELSEWHERE,
        Code.HOST_NOT_READY,
        Code.BOOT_FAILED,
        Code.WHEEL_REFUSED,
        Code.ENVIRONMENT_NOT_PAIRED,
    }
)
"""Codes only this host can truthfully give; from a peer they are ``peer-answer-invalid``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_NUMBER = re.compile(r"[0-9]{1,4}")


def _segment_name(part: str) -> str | None:
    """The field name of one dotted part (``ops[2]`` → ``ops``; ``""`` for a bare item number
    ``3``), or ``None`` when the part is not of that shape (at most four ``[i]`` suffixes)."""
    if _NUMBER.fullmatch(part):
        return ""
    name, bracket, rest = part.partition("[")
    if _NAME.fullmatch(name) is None:
        return None
    suffixes = 0
    while bracket:
        index, closed, rest = rest.partition("]")
        suffixes += 1
        if not closed or suffixes > 4 or _NUMBER.fullmatch(index) is None:
            return None
        bracket, rest = rest[:1], rest[1:]
        if bracket not in ("", "["):
            return None
    return name


def known_field(field: str | None, words: Set[str]) -> str | None:
    """``field`` when each of its dotted parts is one of ``words`` — the fields our models
    declare (``[i]`` item numbers allowed: ``ops[2].name``, ``letter.gate.exit_status``);
    otherwise ``None``."""
    if not field or len(field) > 200:
        return None
    for part in field.split("."):
        name = _segment_name(part)
        if name is None or (name and name not in words):
            return None
    return field


def _unknown_outcome(mutating: bool) -> dict[str, str]:
    return {"outcome": "unknown", "retry": retry_advice(mutating)}


def invalid_answer(*, mutating: bool) -> Refused:
    """``peer-answer-invalid`` for a call the peer answered outside the contract."""
    return Refused(
        Code.PEER_ANSWER_INVALID,
        "The peer environment answered outside the protocol; its answer was not accepted, "
        "and whether the call had an effect there is unknown.",
        details=_unknown_outcome(mutating),
        show_details=True,
    )


def relayed_refusal(body: RefusalBody, *, mutating: bool, words: Set[str]) -> Refused:
    """The refusal to give for the peer's refusal ``body`` (rules in the module docstring);
    ``words`` are the field names our models declare (:func:`known_field`)."""
    if body.code in NOT_RELAYED:
        return invalid_answer(mutating=mutating)
    return Refused(
        body.code,
        f"The peer environment refused the call: {REFUSALS[body.code].meaning}",
        field=known_field(body.field, words),
        details={"refused_by": "peer"},
    )


def _possible(receipt: HostReceipt) -> bool:
    """Whether a peer's receipt about itself could be true: signed ``host`` (its own), a
    project path where it names one, a project id where it names one (always for a
    ``local-write``). Sizes, sha256 and store versions are held to their types by the model."""
    if receipt.issuer != "host":
        return False
    if receipt.project is not None and re.fullmatch(PROJECT_ID_PATTERN, receipt.project) is None:
        return False
    if receipt.rung == "local-write" and receipt.project is None:
        return False
    if receipt.path is not None:
        try:
            return str(parse_path(receipt.path, allow_meta=True)) == receipt.path
        except Refused:
            return False
    return True


def accepted_result(
    answer: ExecuteResult, *, envelope: CallEnvelope, mutating: bool
) -> ExecuteResult:
    """``answer`` with its receipt checked against the call (``envelope``: the environment and
    tool called) and marked ``issuer: "peer:<envKey fingerprint>"``, and every token shape
    scrubbed. Refuses ``receipt-forgery-refused``, and ``peer-answer-invalid`` for a receipt
    with impossible values (module docstring; issue 29 item 13)."""
    receipt = answer.receipt
    if receipt is not None and (receipt.env != envelope.env_key or receipt.op != envelope.tool):
        raise Refused(
            Code.RECEIPT_FORGERY_REFUSED,
            "The peer's answer carried a receipt that the environment called did not issue "
            "for this call; it was refused. Nothing was written here; whether the peer did "
            "something is unknown.",
            field="receipt",
            details=_unknown_outcome(mutating),
            show_details=True,
        )
    if receipt is not None:
        if not _possible(receipt):
            raise invalid_answer(mutating=mutating)
        issuer = f"peer:{env_fingerprint(envelope.env_key)}"
        answer = answer.model_copy(
            update={"receipt": receipt.model_copy(update={"issuer": issuer})}
        )
    # the JSON text of a validated model holds every string unescaped, and nothing a
    # replacement could break (a token's characters are never quotes or backslashes)
    try:
        return ExecuteResult.model_validate_json(scrub_secrets(answer.model_dump_json()))
    except ValidationError:  # a token where our contract wants a pattern: not an answer
        raise invalid_answer(mutating=mutating) from None
