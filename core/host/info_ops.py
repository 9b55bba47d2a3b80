"""``host.info``: versions, policy, the environment this host acts for, and runtime figures."""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from core.host.operations import Call, Outcome, operation
from core.model import Contract, NoArgs
from core.protocol import PROTOCOL_VERSION

__all__ = ["RUNTIME_PROBE", "HostInfo", "RuntimeFigures", "RuntimeProbe"]

RUNTIME_PROBE = "runtime-probe"
"""Key of the host's :class:`RuntimeProbe` in ``HostContext.cache`` (set by the placement)."""


class RuntimeProbe(Protocol):
    """Reads non-secret figures of the runtime the host runs in (a port; browser_host's is
    ``browser_host.diagnostics.runtime_figures``)."""

    def __call__(self) -> dict[str, int]:
        """``{"wasm_memory_bytes": ..., "python_allocated_blocks": ...}`` (any subset)."""
        ...


class RuntimeFigures(Contract):
    """Memory figures for operations and the benchmark; never a secret, never project data."""

    wasm_memory_bytes: int | None = Field(
        default=None, ge=0, description="Size of the Wasm memory (Pyodide's heap), bytes."
    )
    python_allocated_blocks: int | None = Field(
        default=None, ge=0, description="Memory blocks the Python allocator holds (a count)."
    )


class HostInfo(Contract):
    """What the page may know about the host: versions, protocol, SAFE mode, runtime figures
    (``runtime`` is null where the placement has no probe)."""

    protocol: int
    versions: dict[str, str]
    read_only: bool
    runtime: RuntimeFigures | None = None


@operation(
    "host.info",
    args=NoArgs,
    result=HostInfo,
    audited=False,
    summary="Versions, protocol, policy flags and runtime memory figures.",
)
async def host_info(call: Call) -> Outcome:
    """Never refuses."""
    ctx = call.ctx
    probe: RuntimeProbe | None = ctx.cache.get(RUNTIME_PROBE)
    return Outcome(
        HostInfo(
            protocol=PROTOCOL_VERSION,
            versions=dict(ctx.versions),
            read_only=ctx.policy.read_only,
            runtime=None if probe is None else RuntimeFigures.model_validate(probe()),
        )
    )
