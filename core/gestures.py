"""The human gate: what only a person's gesture in the page may do (seed 004 §8; SPEC §4).

:data:`HUMAN_UI` is the one gesture token; :data:`HUMAN_ORIGINS` the closed allow-list it is
the only member of. Operations that are a person's act declare it
(:class:`core.host.operations.Gesture`: ratifying the block store, importing a receipt,
archiving a mission, hiding a tray card, changing the policy, editing from the owner seat),
and the pipeline asks :func:`require_human_gesture`, the one check, which asks two things:

1. **The input names the gesture**, where the operation says it must — ``ratified_via`` /
   ``imported_via`` / ``archived_via`` is on the allow-list. Absent, empty or any other value
   (``runnerd``, ``human-touchid``…) is refused, naming that field. This is the seed's teaching
   refusal: an agent that simply calls the verb learns it is a person's gesture.
2. **The request came from the page's gesture** — the call's origin, which the pipeline takes
   only from the envelope of a message the page sent (:func:`accept_origin`), is the token. A
   request that arrives any other way — a peer environment's channel, a plugin, the tool
   sandbox — carries no origin, so a token it writes into its arguments is refused here, never
   trusted.

Both refusals are ``human_gesture_required`` and happen before anything is read or written.
Same-origin hostile script is outside the threat model (SPEC §1), exactly as the seed declares
same-user local malware out of its own (§5d): the gate closes the cheap path — an agent calling
the verb — not a hostile script that can already drive the page.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from core.refusals import Code, Refused

__all__ = [
    "HUMAN_ORIGINS",
    "HUMAN_UI",
    "HumanUi",
    "accept_origin",
    "is_human",
    "require_human_gesture",
]

HumanUi = Literal["human-ui"]
"""The type of :data:`HUMAN_UI` (a model field only a person's gesture fills), the token written
once: mypy takes no constant inside ``Literal[...]`` (issue 35)."""

HUMAN_UI: Final[HumanUi] = get_args(HumanUi)[0]
"""The origin token a person's gesture carries (seed 004 §8; SPEC §4). Only the page sets it."""

HUMAN_ORIGINS = frozenset({HUMAN_UI})
"""The closed allow-list of gesture tokens (seed 004 §8: :data:`HUMAN_UI` and nothing else)."""


def is_human(origin: object) -> bool:
    """True when ``origin`` is a person's gesture token."""
    return isinstance(origin, str) and origin in HUMAN_ORIGINS


def accept_origin(origin: str | None, *, from_page: bool) -> str | None:
    """The origin a message may carry: the page's envelope only. A message from anyone else
    (a peer's tool call) with an origin is refused ``human_gesture_required`` (``field:
    "origin"``), never honoured."""
    if origin is not None and not from_page:
        raise Refused(
            Code.HUMAN_GESTURE_REQUIRED,
            "Only a person's gesture in the page may carry the human origin.",
            field="origin",
        )
    return origin


def require_human_gesture(
    *,
    origin: str | None,
    act: str,
    field: str | None = None,
    via: object = None,
    names: str = "origin",
) -> None:
    """Refuse unless this call is a person's gesture in the page (module docstring).

    ``field`` names the input that must carry the token too (its value is ``via``), or is
    ``None`` when the origin alone decides; ``act`` says what the gesture does, for the
    sentence; ``names`` is the field named when the origin is not the page's gesture. Raises
    :class:`~core.refusals.Refused` ``human_gesture_required`` naming ``field`` (rule 1) or
    ``names`` (rule 2). Never echoes the offered value.
    """
    if field is not None and not is_human(via):
        raise Refused(
            Code.HUMAN_GESTURE_REQUIRED,
            f'{act} is a person\'s gesture: the page sends {field}: "{HUMAN_UI}"; '
            "agents and runners never do.",
            field=field,
        )
    if not is_human(origin):
        raise Refused(
            Code.HUMAN_GESTURE_REQUIRED,
            f"{act} is a person's gesture, and this request did not come from one in the page.",
            field=names,
        )
