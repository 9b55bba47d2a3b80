"""The operator's policy: the switches the host reads afresh for every request (seed 003).

A :class:`Policy` is a snapshot: admission takes the current one per call, so a change made
after a tool was described takes effect on the very next call (a cached description is not an
entitlement). Stored in HOST_DIR as ``policy.json``.
"""

from __future__ import annotations

from pydantic import Field

from core.model import Contract

__all__ = ["Policy"]


class Policy(Contract):
    """Operator switches. ``read_only`` is SAFE mode: every write is refused ``read-only-mode``."""

    read_only: bool = Field(default=False, description="SAFE mode: refuse every write.")
