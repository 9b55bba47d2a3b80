"""Settings: the operator's policy, read and changed from the page (seed 003; SPEC §7, §11).

``policy.get`` shows every switch of :class:`core.policy.Policy` with how the page should
offer it (a switch, a number with its bounds, a list of names, a map). ``policy.set`` changes
some of them: an operator action, so a person's gesture only, audited with the names of the
fields it changed. The new policy is validated whole, stored in HOST_DIR as ``policy.json``
(the file the browser host loads at start) and takes effect on the very next request — every
admission reads a fresh snapshot.

``policy.set`` is deliberately *not* a write in SAFE mode's sense: SAFE refuses writes to
projects and tools, and turning SAFE off must stay possible while it is on. Nothing here is a
secret: the policy holds switches, names and bounds only, never a token or a bearer.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, get_origin

from pydantic import Field, ValidationError

from core.host.operations import Call, Outcome
from core.model import Contract, JsonOf, NoArgs, canonical_json
from core.policy import POLICY_NAME, Policy
from core.refusals import Code, invalid_input
from core.secret import known_names

__all__ = ["POLICY_NAME", "PolicyAnswer", "PolicyField"]


class PolicyField(Contract):
    """How one policy switch is offered: ``kind`` (``bool``, ``int``, ``list`` of names,
    ``map`` of name → value), bounds for numbers, the title and description the model gives."""

    name: str
    kind: Literal["bool", "int", "list", "map"]
    title: str | None = None
    description: str | None = None
    minimum: int | None = None
    maximum: int | None = None


class PolicyAnswer(Contract):
    """The policy now, how each field is offered, and (after a change) which fields changed."""

    policy: Annotated[dict[str, Any], JsonOf(Policy)]
    fields: list[PolicyField]
    changed: list[str] = Field(default_factory=list)


def _kind(annotation: Any) -> Literal["bool", "int", "list", "map"]:
    origin = get_origin(annotation) or annotation
    if origin is bool:
        return "bool"
    if origin is int:
        return "int"
    if origin in (dict,):
        return "map"
    return "list"


def _fields() -> list[PolicyField]:
    out = []
    for name, info in Policy.model_fields.items():
        minimum = maximum = None
        for meta in info.metadata:
            minimum = getattr(meta, "ge", minimum)
            maximum = getattr(meta, "le", maximum)
        out.append(
            PolicyField(
                name=name,
                kind=_kind(info.annotation),
                title=info.title,
                description=info.description,
                minimum=minimum,
                maximum=maximum,
            )
        )
    return out


def _answer(policy: Policy, changed: list[str] | None = None) -> PolicyAnswer:
    return PolicyAnswer(
        policy=policy.model_dump(mode="json"), fields=_fields(), changed=changed or []
    )


async def policy_get(call: Call[NoArgs]) -> Outcome:
    """Never refuses."""
    return Outcome(_answer(call.ctx.policy))


class PolicySetArgs(Contract):
    """``policy.set``: the fields to change (name → new value); the others are kept."""

    changes: dict[str, Any] = Field(min_length=1, max_length=32)


async def policy_set(call: Call[PolicySetArgs]) -> Outcome:
    """Refuses ``args-invalid`` (an unknown field — ``field`` is then ``changes``, never the
    caller's key — or a value out of its bounds, ``field`` naming the policy field); nothing is
    stored on refusal. A person's gesture only: the pipeline's gate."""
    changes: dict[str, Any] = call.args.changes
    async with call.ctx.state_lock:
        current = call.ctx.policy
        merged = current.model_dump(mode="json") | changes
        try:
            new = Policy.model_validate_json(json.dumps(merged))
        except ValidationError as exc:
            # only the policy's own field names: an unknown key is never named or audited
            names = known_names(Policy)
            refusal = invalid_input(
                exc, names, code=Code.ARGS_INVALID, first=True, fallback="changes"
            )
            raise refusal from None
        before = current.model_dump(mode="json")
        after = new.model_dump(mode="json")
        changed = sorted(k for k in after if after[k] != before[k])
        if changed:
            await call.ctx.state.store(POLICY_NAME, canonical_json(after))
            call.ctx.policy = new
            call.ctx.policy_damage = None  # a whole, valid policy.json is stored now
    details: dict[str, str | int | bool | None] = {"changed": ",".join(changed) or "-"}
    for name in changed:
        value = after[name]
        details[name] = value if isinstance(value, bool | int) else f"{len(value)} entries"
    return Outcome(_answer(new, changed), rule="policy-changed", details=details)
