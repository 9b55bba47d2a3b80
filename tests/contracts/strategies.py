"""Hypothesis strategies shared by the contract property tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import settings
from hypothesis import strategies as st

from core.refusals import Refused

T = TypeVar("T")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)

json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)
"""Any JSON value (no NaN or infinities: JSON has none)."""

WIRE_KEYS = (
    "type",
    "role",
    "bearer",
    "id",
    "envKey",
    "tool",
    "descriptorId",
    "args",
    "result",
    "receipt",
    "refusal",
)

near_frames = st.fixed_dictionaries(
    {},
    optional={key: json_values for key in WIRE_KEYS},
) | st.fixed_dictionaries(
    {"type": st.sampled_from(["hello", "execute", "result", "refusal", "other"])},
    optional={key: json_values for key in WIRE_KEYS if key != "type"},
)
"""JSON objects that look much like real frames (so the parsers get past the first check)."""


def attempt(fn: Callable[..., T], *args: object) -> T | Refused:
    """``fn(*args)``, or the :class:`Refused` it raised (any other exception propagates)."""
    try:
        return fn(*args)
    except Refused as exc:
        return exc


def fuzz(examples: int) -> settings:
    """Settings of a contract property test: ``examples`` cases, no deadline, and no example
    database (the suite touches no filesystem, so it runs the same inside Pyodide)."""
    return settings(max_examples=examples, deadline=None, database=None)
