"""Wire contracts between a host and its peers: the call envelope and the peer channel messages
(seed 002 §1 and §4, SPEC §4 and §6).

The call envelope is what the page sends to call a tool in some environment::

    {"envKey": "ek_…", "tool": "create-asset", "descriptorId": "d_…", "args": {...}}

``envKey`` says *where* (environment identity); ``descriptorId`` says *which admitted
operation* (tool identity, :mod:`core.tools.registry`). The two never stand in for each other.

On a peer channel the first frame is a :class:`HelloFrame` (checked by
:mod:`core.custody.hello_gate`); after it, the caller sends :class:`ExecuteRequest` frames and the
peer answers each with an :class:`ExecuteResult` or an :class:`ExecuteRefusal`. The bearer
travels only in the hello frame — never in an execute frame, never in an answer.

Every model is closed (unknown fields refused), strict, and bounded: a frame is at most
:data:`MAX_FRAME_BYTES` of JSON, ``args`` at most :data:`MAX_ARGS_BYTES`, and the chunks of
one streaming answer (an export) at most :data:`MAX_STREAM_BYTES` in all. The parsers take
any JSON value (or its text) and return a model or raise :class:`~core.refusals.Refused`
(``message-too-large``, ``message-malformed``) — never another exception, and never with an
input value in the message.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from core.model import Contract
from core.refusals import Code, RefusalBody, Refused, invalid_input
from core.secret import REVEAL, Secret, known_names
from core.tools.receipts import HostReceipt
from core.vocabulary import DESCRIPTOR_ID_PATTERN, DescriptorId

__all__ = [
    "CHUNK_HEAD_BYTES",
    "DESCRIPTOR_ID_PATTERN",
    "MAX_ARGS_BYTES",
    "MAX_ARGS_FILE_BYTES",
    "MAX_CHUNK_BYTES",
    "MAX_FRAME_BYTES",
    "MAX_STREAM_BYTES",
    "CallEnvelope",
    "ExecuteRefusal",
    "ExecuteRequest",
    "ExecuteResult",
    "HelloFrame",
    "PeerMessage",
    "chunk_message",
    "frame_text",
    "json_schemas",
    "parse_call_envelope",
    "parse_chunk_head",
    "parse_chunk_message",
    "parse_peer_message",
]

MAX_FRAME_BYTES = 1 << 20
MAX_ARGS_BYTES = 256 << 10
MAX_ARGS_FILE_BYTES = 180 << 10
"""The largest file a call envelope carries inside its ``args`` (``file.write``'s base64
``content_b64``): its base64 (4/3 of it) and the other arguments stay under
:data:`MAX_ARGS_BYTES`."""
MAX_STREAM_BYTES = 1 << 30
"""The most bytes one streaming answer from a peer may carry (its chunks in all): 1 GiB, the
most an archive import here expands to (:class:`core.archive.plan.ImportBounds`). The host relays
a peer's chunks to the page, which gathers them into a Blob; past this the call is refused
``message-too-large`` and no further chunk is relayed (issue 13)."""

ToolName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_.-]*$")
]
EnvKeyText = Annotated[str, StringConstraints(min_length=1, max_length=128)]
"""An ``envKey`` as sent: any short text. One that does not resolve is ``unknown-environment``."""
RequestId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[\w.:-]+$")]

_WIRE = Contract.model_config | {"serialize_by_alias": True, "hide_input_in_errors": True}


class CallEnvelope(Contract):
    """A tool call as the page sends it: where, which operation, with what arguments."""

    model_config = _WIRE

    env_key: EnvKeyText = Field(alias="envKey", description="The environment to run it in.")
    tool: ToolName
    descriptor_id: DescriptorId = Field(
        alias="descriptorId", description="The descriptor the caller was shown (discovery)."
    )
    args: dict[str, Any] = Field(default_factory=dict)


class HelloFrame(Contract):
    """The first frame on a peer channel: who is calling, and the bearer it presents."""

    model_config = _WIRE

    type: Literal["hello"]
    role: Literal["environment"]
    bearer: Secret


class ExecuteRequest(Contract):
    """One call forwarded to a peer over an authenticated channel (no bearer inside)."""

    model_config = _WIRE

    type: Literal["execute"]
    id: RequestId
    env_key: EnvKeyText = Field(alias="envKey")
    tool: ToolName
    descriptor_id: DescriptorId = Field(alias="descriptorId")
    args: dict[str, Any] = Field(default_factory=dict)


class ExecuteResult(Contract):
    """The peer's answer to one execute: its result and, for a host effect, its receipt."""

    model_config = _WIRE

    type: Literal["result"]
    id: RequestId
    result: dict[str, Any] = Field(default_factory=dict)
    receipt: HostReceipt | None = None


class ExecuteRefusal(Contract):
    """The peer's refusal of one execute, ``{code, status, message}`` from the closed list."""

    model_config = _WIRE

    type: Literal["refusal"]
    id: RequestId
    refusal: RefusalBody


PeerMessage = Annotated[
    HelloFrame | ExecuteRequest | ExecuteResult | ExecuteRefusal, Field(discriminator="type")
]
_PEER = TypeAdapter(PeerMessage, config=ConfigDict(defer_build=True))  # built on first use
_PEER_NAMES = known_names(HelloFrame, ExecuteRequest, ExecuteResult, ExecuteRefusal)
_CALL_NAMES = known_names(CallEnvelope)


def _json_text(data: object, limit: int) -> str | bytes:
    """The JSON text of ``data`` (itself if already text), bounded to ``limit`` bytes."""
    if isinstance(data, str | bytes | bytearray):
        text: str | bytes = bytes(data) if isinstance(data, bytearray) else data
    else:
        try:
            text = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            raise Refused(Code.MESSAGE_MALFORMED, "The message is not JSON data.") from None
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > limit:
        raise Refused(Code.MESSAGE_TOO_LARGE, f"The message is larger than {limit} bytes.")
    return text


def _args_bounded(args: dict[str, Any]) -> None:
    size = len(json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > MAX_ARGS_BYTES:
        raise Refused(
            Code.MESSAGE_TOO_LARGE, f"The arguments are larger than {MAX_ARGS_BYTES} bytes."
        )


def _validate(parse: Any, text: str | bytes, names: frozenset[str]) -> Any:
    try:
        return parse(text)
    except ValidationError as exc:
        raise invalid_input(exc, names, code=Code.MESSAGE_MALFORMED) from None
    except (ValueError, RecursionError):
        raise Refused(Code.MESSAGE_MALFORMED, "The message is not valid JSON.") from None


def parse_call_envelope(data: object) -> CallEnvelope:
    """A :class:`CallEnvelope` from a JSON value or its text (bounds in the module docstring).

    Refuses ``message-too-large`` or ``message-malformed``; never raises anything else.
    """
    text = _json_text(data, MAX_FRAME_BYTES)
    envelope: CallEnvelope = _validate(CallEnvelope.model_validate_json, text, _CALL_NAMES)
    _args_bounded(envelope.args)
    return envelope


def parse_peer_message(
    data: object,
) -> HelloFrame | ExecuteRequest | ExecuteResult | ExecuteRefusal:
    """One peer-channel frame from a JSON value or its text, chosen by its ``type``.

    Refuses ``message-too-large`` or ``message-malformed``; never raises anything else.
    """
    text = _json_text(data, MAX_FRAME_BYTES)
    message: HelloFrame | ExecuteRequest | ExecuteResult | ExecuteRefusal = _validate(
        _PEER.validate_json, text, _PEER_NAMES
    )
    if isinstance(message, ExecuteRequest):
        _args_bounded(message.args)
    return message


def frame_text(message: BaseModel, *, reveal: bool = False) -> str:
    """The JSON text of a frame to send. ``reveal`` must be true only for a :class:`HelloFrame`
    going to the peer that issued its bearer; every other frame is sent with secrets redacted."""
    context = {REVEAL: True} if reveal and isinstance(message, HelloFrame) else None
    return message.model_dump_json(by_alias=True, context=context)


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every wire model, by name (for ``docs/``)."""
    return {
        "CallEnvelope": CallEnvelope.model_json_schema(by_alias=True),
        "PeerMessage": _PEER.json_schema(by_alias=True),
    }


MAX_CHUNK_BYTES = 256 << 10
"""The largest chunk one binary channel message carries (a WebSocket; many clients refuse
messages over 1 MiB by default)."""


def chunk_message(request_id: str, data: bytes) -> bytes:
    """The binary message carrying ``data`` for ``request_id`` (``byte 0`` = n, the
    id's length 1..64; ``bytes 1..n`` the id, ASCII; then the chunk — docs/remote.md)."""
    rid = request_id.encode("ascii")
    if not 1 <= len(rid) <= 64:
        raise ValueError("a request id is 1 to 64 ASCII characters")
    return bytes([len(rid)]) + rid + data


CHUNK_HEAD_BYTES = 65
"""The most bytes of a binary message :func:`parse_chunk_head` needs (the id's length, then
at most 64 id bytes)."""


def parse_chunk_head(head: bytes) -> tuple[str, int] | None:
    """``(request id, offset of the chunk)`` from a binary message's first bytes (at least
    ``min(CHUNK_HEAD_BYTES, len(message))`` of them), or ``None`` when it is not a chunk
    message. Lets an adapter relay the chunk without copying it here (issue 34)."""
    if not head or not 1 <= head[0] <= 64 or len(head) < 1 + head[0]:
        return None
    try:
        rid = head[1 : 1 + head[0]].decode("ascii")
    except UnicodeDecodeError:
        return None
    return rid, 1 + head[0]


def parse_chunk_message(message: bytes) -> tuple[str, bytes] | None:
    """``(request id, chunk)`` of a binary message, or ``None`` when it is not one."""
    parsed = parse_chunk_head(message[:CHUNK_HEAD_BYTES])
    if parsed is None:
        return None
    rid, offset = parsed
    return rid, message[offset:]
