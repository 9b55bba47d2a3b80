"""``host.info``: versions, policy and the environment this host acts for."""

from __future__ import annotations

from core.host.operations import Call, Outcome, operation
from core.model import Contract, NoArgs
from core.protocol import PROTOCOL_VERSION

__all__ = ["HostInfo"]


class HostInfo(Contract):
    """What the page may know about the host: versions, protocol, SAFE mode."""

    protocol: int
    versions: dict[str, str]
    read_only: bool


@operation(
    "host.info",
    args=NoArgs,
    result=HostInfo,
    audited=False,
    summary="Versions, protocol and policy flags.",
)
async def host_info(call: Call) -> Outcome:
    """Never refuses."""
    ctx = call.ctx
    return Outcome(
        HostInfo(
            protocol=PROTOCOL_VERSION, versions=dict(ctx.versions), read_only=ctx.policy.read_only
        )
    )
