"""Admission: may this call run, now, under the current policy? (seed 003 "discovery is not
admission", SPEC §7).

Checked for every call, on a policy snapshot taken for that call, in this fixed order — the
first failing check names the refusal:

1. the operation is registered under that name ............ ``tool-unknown`` (404)
2. the operator has not switched it off .................... ``tool-disabled`` (403)
3. its dispatch owner is still the one the caller was shown  ``dispatch-owner-changed`` (409)
4. SAFE / read-only mode does not forbid a mutating call ... ``read-only-mode`` (403)
5. for a plugin: its package (manifest sha256) is admitted .. ``plugin-not-admitted`` (403)
6. for a plugin: the operation/package is not withdrawn .... ``plugin-withdrawn`` (410)
7. the arguments satisfy its schema ........................ ``args-invalid`` (422)
8. if it needs confirmation, a person confirmed it ......... ``confirmation-required`` (428)

A description obtained earlier (a cached descriptor, a seat on the model-facing surface) is
never consulted: only the registry and policy as they are at the call.

Step 4 is SAFE mode's one check (:func:`core.policy.require_writable`), asked early: the
operation that then runs the call declares ``writes`` for a mutating tool and meets the same
check at the pipeline's gate, on the policy as it is when it runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.gestures import HumanUi, is_human
from core.model import Contract
from core.policy import Policy, require_writable
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.tools.registry import OperationEntry, OperationRegistry

__all__ = ["ADMISSION_ORDER", "Admission", "Admitted", "CallRequest", "admit"]

ADMISSION_ORDER: tuple[Code, ...] = (
    Code.TOOL_UNKNOWN,
    Code.TOOL_DISABLED,
    Code.DISPATCH_OWNER_CHANGED,
    Code.READ_ONLY_MODE,
    Code.PLUGIN_NOT_ADMITTED,
    Code.PLUGIN_WITHDRAWN,
    Code.ARGS_INVALID,
    Code.CONFIRMATION_REQUIRED,
)
"""The refusal codes of admission, in the order they are checked."""


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One call to admit: operation ``tool``, the ``descriptor_id`` the caller was shown, its
    ``args`` (a JSON object), and ``confirmed_by`` — the gesture token only when a person's
    gesture in the page confirmed this very call (nothing else can confirm)."""

    tool: str
    descriptor_id: str
    args: dict[str, Any] = field(default_factory=dict)
    confirmed_by: HumanUi | None = None


@dataclass(frozen=True, slots=True)
class Admitted:
    """An admitted call: the entry as registered now, its parsed arguments, and the policy
    snapshot it was admitted under (the broker decides its requests on the same snapshot)."""

    entry: OperationEntry
    args: Contract
    policy: Policy


def admit(registry: OperationRegistry, policy: Policy, request: CallRequest) -> Admitted:
    """Admit ``request`` against ``registry`` and ``policy`` now, or raise the first refusal of
    :data:`ADMISSION_ORDER`. Argument errors name fields of the schema, never input values."""
    entry = registry.get(request.tool)
    if entry is None:
        raise Refused(Code.TOOL_UNKNOWN, field="tool")
    if not policy.tool_enabled(entry.name):
        raise Refused(Code.TOOL_DISABLED, field="tool")
    if request.descriptor_id != entry.descriptor_id:
        raise Refused(Code.DISPATCH_OWNER_CHANGED, field="descriptorId")
    if entry.mutating:
        require_writable(policy)
    if entry.plugin_id is not None:
        if not policy.plugin_admitted(entry.plugin_id, entry.manifest_sha256):
            raise Refused(Code.PLUGIN_NOT_ADMITTED, field="tool")
        if entry.withdrawn or policy.plugin_withdrawn(entry.plugin_id, entry.manifest_sha256):
            raise Refused(Code.PLUGIN_WITHDRAWN, field="tool")
    args = _parse_args(entry, request.args)
    if entry.needs_confirmation and not is_human(request.confirmed_by):
        raise Refused(Code.CONFIRMATION_REQUIRED)
    return Admitted(entry, args, policy)


def _parse_args(entry: OperationEntry, args: dict[str, Any]) -> Contract:
    """The arguments as ``entry``'s model, read with JSON semantics (they arrived as JSON)."""
    try:
        text = json.dumps(args, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise Refused(Code.ARGS_INVALID, "The arguments are not JSON data.", field="args") from None
    try:
        return entry.args_model.model_validate_json(text)
    except ValidationError as exc:
        names = known_names(entry.args_model)
        raise invalid_input(exc, names, code=Code.ARGS_INVALID, field="args") from None


class Admission:
    """Admits calls against one registry, taking a fresh policy snapshot for each call.

    ``policy`` is called once per :meth:`admit` (it reads the operator's current switches).
    """

    def __init__(self, registry: OperationRegistry, policy: Callable[[], Policy]) -> None:
        self._registry = registry
        self._policy = policy

    def admit(self, request: CallRequest) -> Admitted:
        """See :func:`admit`; the snapshot is taken now, for this call only."""
        return admit(self._registry, self._policy(), request)
