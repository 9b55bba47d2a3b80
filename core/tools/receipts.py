"""Receipts: what a result proves, and the host's own evidence of effects it performed
(seed 003 "a result and a receipt prove different things"; SPEC §7).

Five rungs, weakest evidence first (:data:`RUNGS` says what each does and does not prove):
``internal-read``, ``external-read``, ``local-write``, ``external-write``, ``trusted-native``.
Every operation declares its rung in discovery (its *receipt rule*, :mod:`core.tools.registry`).

- A :class:`HostReceipt` is issued by the host only, for an effect the host itself performed.
  For a ``local-write`` it names the path, the size in bytes, the sha256 of the bytes written and
  the store version after the write (:func:`write_receipt`).
- :func:`decode_plugin_result` reads a plugin's answer and refuses one that tries to supply a
  receipt of its own (``receipt-forgery-refused``): a plugin's words are its account, never
  host evidence.
- A call that timed out has outcome ``unknown`` (:func:`timed_out`); a mutating call is marked
  ``retry: "not-blindly"`` — the effect may have happened.

The import of a mission receipt and its execution-window checks are a different rule, owned by
``core.missions.receipt_window`` (seed 004, SPEC §9).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from core.json_bound import parse_json
from core.model import Contract
from core.paths import ProjectPath
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.vocabulary import Sha256Hex

__all__ = [
    "ISSUER_PATTERN",
    "MAX_PLUGIN_RESULT_BYTES",
    "RUNGS",
    "CallOutcome",
    "Evidence",
    "HostReceipt",
    "Outcome",
    "PluginResult",
    "Retry",
    "Rung",
    "decode_plugin_result",
    "no_receipt_note",
    "retry_advice",
    "timed_out",
    "write_receipt",
]

Rung = Literal["internal-read", "external-read", "local-write", "external-write", "trusted-native"]

RUNGS: dict[str, str] = {
    "internal-read": "The answer is the operation's own account; no host effect to prove.",
    "external-read": "The host fetched from outside; proves what came back, not that it is true.",
    "local-write": "The host wrote the bytes itself: path, size, sha256, store version.",
    "external-write": "The host sent a change outside; proves the request, not every effect.",
    "trusted-native": "Built into the host and trusted by the operator; no separate proof.",
}
"""Each rung and what its evidence means (shown by discovery and in docs)."""


def no_receipt_note(*, here: bool) -> str:
    """What a tool call's result proves when it carries no receipt, in words a person reads
    under it (issue 33 item 5; seed 003 "a result and a receipt prove different things").
    ``here``: the call ran in this host — a built-in, or a plugin in its sandbox (E1: the
    page's sandboxed frame) — not at a paired environment."""
    if here:
        return (
            "No host receipt: this result is the tool's own account, worked out here — in "
            "this host's sandbox (in the browser: a sandboxed frame of this page) or by its "
            "built-in code — and nothing the host wrote."
        )
    return (
        "No host receipt: this result is the paired environment's own account "
        "(nothing this host wrote)."
    )


Outcome = Literal["done", "refused", "unknown"]
Retry = Literal["safe", "not-blindly"]
Evidence = Literal["host-receipt", "plugin-account", "none"]
MAX_PLUGIN_RESULT_BYTES = 1 << 20
ISSUER_PATTERN = r"^(host|peer:[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3})$"
"""``host``, or ``peer:`` and the envKey fingerprint of the environment that issued a receipt
(:func:`core.custody.pair_code.env_fingerprint`, the one the Environments surface shows)."""


def retry_advice(mutating: bool) -> Retry:
    """``"not-blindly"`` for an operation that may change something, else ``"safe"``."""
    return "not-blindly" if mutating else "safe"


class HostReceipt(Contract):
    """Host evidence of one effect the host performed (never built from a plugin's answer).

    ``at`` in ms since the epoch; ``size`` in bytes; ``sha256`` lower-case hex of the bytes;
    ``store_version`` the project's store version after the effect. A ``local-write`` receipt
    must carry path, size, sha256 and store version.

    ``issuer`` says whose evidence it is: ``"host"`` when this host performed the effect;
    ``"peer:<envKey fingerprint>"`` when a peer environment issued it about an effect of its own
    and this host relays it — the peer's claim, shape-checked, not this host's evidence
    (:func:`core.custody.peer_answers.accepted_result`; issue 29 item 13).
    """

    issuer: str = Field(
        default="host",
        pattern=ISSUER_PATTERN,
        description="'host' (this host's evidence) or 'peer:<envKey fingerprint>' (relayed).",
    )
    rung: Rung
    op: str = Field(max_length=64)
    env: str = Field(max_length=64, description="'local' or the envKey that performed it.")
    project: str | None = Field(default=None, max_length=64)
    path: str | None = Field(default=None, max_length=4096)
    size: int | None = Field(default=None, ge=0)
    sha256: Sha256Hex | None = None
    store_version: int | None = Field(default=None, ge=0)
    at: int = Field(ge=0)

    @model_validator(mode="after")
    def _write_is_complete(self) -> HostReceipt:
        if self.rung == "local-write" and None in (
            self.path,
            self.size,
            self.sha256,
            self.store_version,
        ):
            raise ValueError("a local-write receipt names path, size, sha256 and store version")
        return self


def write_receipt(
    *,
    op: str,
    env: str,
    project: str,
    path: ProjectPath | str,
    size: int,
    sha256: str,
    store_version: int | None,
    at_ms: int,
) -> HostReceipt | None:
    """The ``local-write`` receipt of ``size`` bytes with digest ``sha256`` the host just
    wrote at ``path``; ``store_version`` is the audit record of that write. ``None`` when the
    write has no record (the audit append failed): a receipt names the record of its write or
    is not made — never a version 0 that names nothing (issue 35 item 3). The pipeline makes
    every host receipt here (:meth:`core.host.pipeline.Host.run`, step 7)."""
    if store_version is None:
        return None
    return HostReceipt(
        rung="local-write",
        op=op,
        env=env,
        project=project,
        path=str(path),
        size=size,
        sha256=sha256,
        store_version=store_version,
        at=at_ms,
    )


class PluginResult(Contract):
    """A plugin's answer as the host accepts it: ``{ok, result?, message?}`` and nothing else."""

    ok: bool
    result: dict[str, Any] = Field(default_factory=dict)
    message: str | None = Field(default=None, max_length=2000)


_RESULT_NAMES = known_names(PluginResult)


def _names_receipt(obj: object) -> bool:
    return isinstance(obj, dict) and any(
        isinstance(k, str) and "receipt" in k.casefold() for k in obj
    )


def decode_plugin_result(data: object) -> PluginResult:
    """Decode a plugin's answer (a JSON value, or its text) into a :class:`PluginResult`.

    Refuses ``receipt-forgery-refused`` when the answer, or its ``result`` object, has any key
    naming a receipt (``receipt``, ``receipts``, ``hostReceipt``... compared case-folded): only
    the host issues receipts. Refuses ``message-too-large`` past 1 MiB and
    ``message-malformed`` for anything else that is not the shape above.
    """
    if isinstance(data, str | bytes):
        if len(data) > MAX_PLUGIN_RESULT_BYTES:
            raise Refused(Code.MESSAGE_TOO_LARGE)
        data = parse_json(data, what="The plugin's answer")  # ≤ 1 Mi characters: < 16 MiB
    if _names_receipt(data) or (isinstance(data, dict) and _names_receipt(data.get("result"))):
        raise Refused(Code.RECEIPT_FORGERY_REFUSED, field="receipt")
    try:
        text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        raise Refused(Code.MESSAGE_MALFORMED, "The plugin's answer is not JSON data.") from None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PLUGIN_RESULT_BYTES:
        raise Refused(Code.MESSAGE_TOO_LARGE)
    try:
        return PluginResult.model_validate_json(text)
    except ValidationError as exc:
        raise invalid_input(exc, _RESULT_NAMES, code=Code.MESSAGE_MALFORMED) from None


class CallOutcome(Contract):
    """What the host can say about one call after it ended.

    ``outcome``: ``done`` (answered), ``refused`` (refused before any effect) or ``unknown``
    (no answer in time: the effect may or may not have happened). ``evidence``: a host receipt,
    only the plugin's account, or nothing. ``retry``: whether repeating it is harmless.
    """

    outcome: Outcome
    evidence: Evidence
    receipt: HostReceipt | None = None
    retry: Retry


def timed_out(*, mutating: bool) -> CallOutcome:
    """The outcome of a call with no answer before its deadline: ``unknown``, no evidence."""
    return CallOutcome(outcome="unknown", evidence="none", retry=retry_advice(mutating))
