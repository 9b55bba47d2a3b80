"""A :class:`~core.host.context.HostContext` wholly in memory: the one place the in-memory
adapters are put together into a host's context for a host that keeps nothing — an environment
server of :class:`core.memory.servers.MemoryEnvironmentServers`, the browser host's rehearsal of
the post path (:mod:`core.memory.rehearsal`)."""

from __future__ import annotations

from core.audit import AuditLog
from core.host.context import HostContext
from core.memory.adapters import (
    MemoryAuditKey,
    MemoryAuditSink,
    MemoryHostState,
    MemoryProjectRoots,
)
from core.ports import Clock, Randomness

__all__ = ["memory_host_context"]


def memory_host_context(
    clock: Clock, random: Randomness, sink: MemoryAuditSink | None = None
) -> HostContext:
    """A context over fresh in-memory roots, host state (its own HOST_DIR, anchor and audit
    key) and audit ``sink`` (a new one when ``None``), on ``clock`` and ``random``."""
    state = MemoryHostState()
    audit = AuditLog(sink or MemoryAuditSink(), clock, key=MemoryAuditKey(), state=state)
    return HostContext(
        roots=MemoryProjectRoots(), state=state, audit=audit, clock=clock, random=random
    )
