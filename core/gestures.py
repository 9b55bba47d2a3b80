"""The human gate: writes only a person's gesture in the page may make (seed 004 §8; SPEC §4).

Three writes change what a person sees and are theirs alone: ratifying the system-block store,
importing a receipt, and archiving a mission (posting an ``archived`` letter). Each passes
:func:`require_human_gesture`, the one check, which asks two things:

1. **The input names the gesture** — the operation's ``ratified_via`` / ``imported_via`` /
   ``archived_via`` argument is on the closed allow-list :data:`HUMAN_ORIGINS` (only
   ``"human-ui"``). Absent, empty or any other value (``runnerd``, ``human-touchid``…) is
   refused, naming that field. This is the seed's teaching refusal: an agent that simply calls
   the verb learns it is a person's gesture.
2. **The request came from the page's gesture** — the call's origin, which the dispatcher takes
   only from the envelope of a message the page sent (:class:`core.host.pipeline.Host`),
   is ``"human-ui"``. A request that arrives any other way — a peer environment's channel, a
   plugin, the tool sandbox — reaches a handler with no origin, so a ``"human-ui"`` it writes
   into its arguments is refused here (``field: "origin"``), never trusted.

Both refusals are ``human_gesture_required`` and happen before anything is read or written.
Same-origin hostile script is outside the threat model (SPEC §1), exactly as the seed declares
same-user local malware out of its own (§5d): the gate closes the cheap path — an agent calling
the verb — not a hostile script that can already drive the page.
"""

from __future__ import annotations

from core.protocol import HUMAN_UI
from core.refusals import Code, Refused

__all__ = ["HUMAN_ORIGINS", "is_human", "require_human_gesture"]

HUMAN_ORIGINS = frozenset({HUMAN_UI})
"""The closed allow-list of gesture tokens (seed 004 §8: ``"human-ui"`` and nothing else)."""


def is_human(origin: str | None) -> bool:
    """True when a call's origin is a person's gesture in the page."""
    return origin in HUMAN_ORIGINS


def require_human_gesture(*, origin: str | None, via: object, field: str, act: str) -> None:
    """Refuse unless the input's ``via`` and the call's ``origin`` are both ``"human-ui"``.

    ``field`` names the input (``ratified_via``…); ``act`` says what the gesture does, for the
    sentence. Raises :class:`~core.refusals.Refused` ``human_gesture_required`` naming
    ``field`` (rule 1) or ``origin`` (rule 2). Never echoes the offered value.
    """
    if not isinstance(via, str) or via not in HUMAN_ORIGINS:
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
            field="origin",
        )
