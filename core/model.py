"""The base every contract model shares: strict, closed, frozen (STYLE §2).

Unknown fields are refused (``extra="forbid"``), values are not coerced across types
(``strict=True``: the string ``"1"`` is not the number ``1``), and instances are immutable.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Contract", "NoArgs", "canonical_json"]


class Contract(BaseModel):
    """Base class of every wire, storage and audit model in ``core``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoArgs(Contract):
    """The arguments of an operation that takes none: ``{}``."""


def canonical_json(value: object) -> bytes:
    """Serialise plain JSON data canonically: sorted keys, no spaces, UTF-8.

    Used wherever bytes are hashed (audit chain, content ids), so the same value always hashes
    the same on CPython and in Pyodide. Floats are not part of any hashed contract.
    """
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )
