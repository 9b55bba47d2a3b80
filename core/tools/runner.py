"""The port through which an admitted tool call runs, and what it answers (seed 003; SPEC §7).

Both sides of custody run tools through it: the host's ``tool.call`` for a local environment
and an environment server for a paired peer's execute frame (:mod:`core.custody.env_server`).
The host implements it (:class:`core.host.tools.ToolBox`) over its pipeline, so a tool call gets
the same gates, audit and receipt as any other call; nothing below the host needs to know how.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from core.model import Contract
from core.tools.admission import Admitted, CallRequest
from core.tools.receipts import HostReceipt
from core.tools.registry import Descriptor, OperationRegistry

__all__ = ["Sink", "ToolOutcome", "ToolRunner"]

Sink = Callable[[bytes], Awaitable[None]]
"""Where a streaming tool's chunks go, in order, as they are produced."""


class ToolOutcome(Contract):
    """A tool's answer: its result and, for an effect the host performed, the host's receipt."""

    result: dict[str, Any]
    receipt: HostReceipt | None = None


class ToolRunner(Protocol):
    """The tools of one environment: discovery, admission, execution."""

    @property
    def registry(self) -> OperationRegistry:
        """The registry the tools are described and admitted from."""
        ...

    def describe(self) -> tuple[Descriptor, ...]:
        """Discovery: every tool's schema, effect class and receipt rule (not a grant)."""
        ...

    def mutating(self, name: str) -> bool:
        """True unless ``name`` is a tool that only reads (an unknown name counts as
        mutating): an abandoned call to it is never blindly retried."""
        ...

    def admit(self, request: CallRequest) -> Admitted:
        """Admit one call on a fresh policy snapshot (refusals in :mod:`core.tools.admission`)."""
        ...

    async def run(self, admitted: Admitted, *, actor: str, sink: Sink | None = None) -> ToolOutcome:
        """Run an admitted call; raise its refusal as :class:`~core.refusals.Refused`."""
        ...
