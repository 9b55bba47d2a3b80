"""The host protocol's envelope: how a request and its one answer look on the wire (SPEC §4).

A request is one JSON text plus an optional binary body (file bytes travel beside the JSON,
never inside it)::

    {"v": 1, "id": "r17", "op": "file.write", "args": {...}, "origin": HUMAN_UI}

Every request gets exactly one answer, a result or a refusal::

    {"v": 1, "id": "r17", "ok": true,  "result": {...}, "logged": 42}
    {"v": 1, "id": "r17", "ok": false, "refusal": {"code": "...", "status": 403,
                                                   "message": "..."}, "logged": 43}

``logged`` is the audit sequence number of the decision, or ``null`` for the few
introspection operations that are not audited. It is durable when the answer is sent, except
where a result says ``"logged_pending": true``: a read-only call's record, chained under that
number and committed within :data:`core.audit.GROUP_WINDOW_MS` (issue 18; docs/security.md).
``origin`` is the gesture token (:data:`core.gestures.HUMAN_UI`) only when the page sends the
message on behalf of a person's gesture (SPEC §4); nothing arriving from a peer, plugin or
sandbox can carry it.

Bounds: the JSON text is at most :data:`MAX_MESSAGE_BYTES`, the body at most
:data:`MAX_BODY_BYTES`; ids are short tokens (never one shaped like a bearer or host token:
the answer repeats its id); unknown envelope fields are refused. A refusal names only the
fields this module declares, never an unknown key or an input value
(:func:`core.secret.quiet_error_text`).
The worker's JavaScript compares sizes against :data:`INBOUND_BOUNDS` before it converts
anything into Python (issue 13: a 536M-character text was in the Wasm heap, at 1 GB, before
its bound was checked) and hands an oversized message to the host by its size alone; the
refusal is :func:`oversized`, the same ``message-too-large`` this module gives what passes and
is over.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, ValidationError, WithJsonSchema

from core.gestures import HUMAN_UI, HumanUi
from core.json_bound import nests_too_deep, parse_json, too_deep
from core.model import Contract
from core.refusals import Code, RefusalBody, Refused, invalid_input
from core.secret import known_names, secret_shaped

__all__ = [
    "INBOUND_BOUNDS",
    "MAX_BODY_BYTES",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "Envelope",
    "InboundBounds",
    "MessagePart",
    "RefusalAnswer",
    "RequestId",
    "ResultAnswer",
    "oversized",
    "parse_envelope",
    "salvage_id",
    "version_refused",
]

PROTOCOL_VERSION = 1
"""The one protocol version of this release (issue 29 item 15): the page's envelopes carry it
(``v``, page/contract.gen.mjs), the host checks it; an environment server's ``GET
/api/identity`` answers it (``protocol``), and the host checks that on pairing and on every
(re)connect (:func:`core.custody.remote.check_protocol`)."""
MAX_MESSAGE_BYTES = 1 << 20
MAX_BODY_BYTES = 256 << 20

MessagePart = Literal["message", "body"]


class InboundBounds(Contract):
    """The sizes the worker's JavaScript compares before it converts a page message into
    Python. It compares lengths only; over a bound, it asks the host for the refusal by the
    size alone (:func:`oversized`), and the bytes never cross. What passes is checked exactly
    here (:func:`parse_envelope`, the pipeline's body gate)."""

    message_units: int = Field(
        description="A text with more UTF-16 code units than this is certainly over "
        "MAX_MESSAGE_BYTES: each unit is at least one UTF-8 byte."
    )
    body_bytes: int = Field(description="MAX_BODY_BYTES: the largest binary body, in bytes.")


INBOUND_BOUNDS = InboundBounds(message_units=MAX_MESSAGE_BYTES, body_bytes=MAX_BODY_BYTES)


def oversized(part: MessagePart, size: int) -> Refused:
    """The refusal ``message-too-large`` for a message's JSON text (``size`` in bytes, or in
    UTF-16 units when the worker measured it — never more than its bytes) or its body
    (``size`` in bytes) over its bound."""
    if part == "body":
        text = f"The body is {size} bytes; at most {MAX_BODY_BYTES}."
    else:
        text = f"The message is at least {size} bytes; at most {MAX_MESSAGE_BYTES}."
    return Refused(Code.MESSAGE_TOO_LARGE, text)


def _not_secret_shaped(text: str) -> str:
    if secret_shaped(text):
        raise ValueError("an id is never shaped like a secret")
    return text


RequestId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64, pattern=r"^[\w.:-]+$"),
    AfterValidator(_not_secret_shaped),
]
OpName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_.-]*$")
]


class Envelope(Contract):
    """A request's envelope. ``args`` is validated afterwards by the operation's own model."""

    v: int = Field(description="Protocol version; this host speaks 1.")
    id: RequestId
    op: OpName
    args: dict[str, Any] = Field(default_factory=dict)
    origin: HumanUi | None = Field(
        default=None, description=f"'{HUMAN_UI}' when a person's gesture in the page sent this."
    )


_ENVELOPE_NAMES = known_names(Envelope)


AnyResult = Annotated[
    Any, WithJsonSchema({"additionalProperties": True, "title": "Result", "type": "object"})
]
"""An operation's result: its result model itself (a :class:`~core.model.Contract`), which the
answer's JSON text serialises in one pass as its own class (issue 18, the open row's per-entry
cost: no dict made first). In the schema any object; each operation's own result schema is in
``x-operations``."""


class ResultAnswer(Contract):
    """A successful answer. ``result`` follows the operation's result schema."""

    v: Literal[1] = 1
    id: str | None
    ok: Literal[True] = True
    result: AnyResult
    logged: int | None = None
    logged_pending: Literal[True] | None = Field(
        default=None,
        description=(
            "true: the record numbered `logged` (a read-only call's) is chained but not yet "
            "durable; it is committed within the audit's group window (docs/security.md)"
        ),
    )


class RefusalAnswer(Contract):
    """A refusal answer; ``id`` is ``null`` only when the request's id could not be read."""

    v: Literal[1] = 1
    id: str | None
    ok: Literal[False] = False
    refusal: RefusalBody
    logged: int | None = None


def salvage_id(text: str | bytes) -> str | None:
    """Best-effort read of a request's ``id`` from a message that failed to validate.

    Returns the id only when it is itself valid (a short token); otherwise ``None``. An
    oversized text is not parsed at all. Never raises.
    """
    if len(text) > MAX_MESSAGE_BYTES:
        return None
    try:
        raw = parse_json(text)  # bounded: never json.loads (core/json_bound.py)
    except Refused:
        return None
    if isinstance(raw, dict):
        rid = raw.get("id")
        if (
            isinstance(rid, str)
            and 0 < len(rid) <= 64
            and all(c.isalnum() or c in "_.:-" for c in rid)
            and not secret_shaped(rid)
        ):
            return rid
    return None


def version_refused(theirs: object) -> Refused:
    """``protocol-version-unsupported`` for a page that sent version ``theirs``, naming both
    versions (issue 29 item 15: an old copy of the page, kept by a cache after an update, or an
    old worker beside a new page)."""
    return Refused(
        Code.PROTOCOL_VERSION_UNSUPPORTED,
        f"This page speaks host protocol version {theirs} and this host speaks version "
        f"{PROTOCOL_VERSION}: one of them is an older copy. Reload the page (the browser may "
        "have kept an old copy of it).",
    )


def _salvage_version(text: str | bytes) -> object:
    """The ``v`` of a message that failed to validate, when it is an int; else ``None``."""
    try:
        raw = parse_json(text)  # bounded: never json.loads (core/json_bound.py)
    except Refused:
        return None
    v = raw.get("v") if isinstance(raw, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def parse_envelope(text: str | bytes) -> Envelope:
    """Parse and bound-check a request's JSON text.

    Raises :class:`~core.refusals.Refused` with ``message-too-large``,
    ``message-malformed`` or ``protocol-version-unsupported``. Never lets a parser exception
    or trace escape.
    """
    # "surrogatepass": a lone surrogate (a JS string can hold one) is counted, then refused by
    # the parser below as malformed — never an exception
    if len(text) > MAX_MESSAGE_BYTES:  # at least one byte a character: no copy to count
        raise oversized("message", len(text))
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_MESSAGE_BYTES:
        raise oversized("message", size)
    try:
        env = Envelope.model_validate_json(text)
    except ValidationError as exc:
        if any(
            e["type"] == "json_invalid" and nests_too_deep(str(e.get("ctx", {}).get("error")))
            for e in exc.errors(include_url=False, include_input=False)
        ):  # valid JSON, refused for its depth: said so, not "not valid JSON" (stop 45)
            raise too_deep(Code.MESSAGE_MALFORMED, "The message") from None
        # another version's envelope may have another shape: its version is the refusal
        theirs = _salvage_version(text)
        if theirs is not None and theirs != PROTOCOL_VERSION:
            raise version_refused(theirs) from None
        raise invalid_input(exc, _ENVELOPE_NAMES, code=Code.MESSAGE_MALFORMED) from None
    except (ValueError, RecursionError):
        raise Refused(Code.MESSAGE_MALFORMED, "The message is not valid JSON.") from None
    if env.v != PROTOCOL_VERSION:
        raise version_refused(env.v)
    return env
