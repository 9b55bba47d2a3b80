"""The registry of host-protocol operations: name → argument model, result model, handler.

An operation declares whether it writes (refused in SAFE mode), whether it takes or returns a
binary body, and whether its decisions are audited. The dispatcher is the only caller of
handlers; the JSON Schema in ``docs/`` is generated from this registry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.host.context import HostContext
from core.model import Contract

__all__ = ["OPERATIONS", "Call", "Operation", "Outcome", "operation"]


@dataclass(frozen=True, slots=True)
class Call:
    """One admitted request as a handler sees it.

    ``args`` is an instance of the operation's argument model; ``body`` is the binary body
    (bytes) or ``None``; ``origin`` is ``"human-ui"`` or ``None``; ``actor`` names the seat;
    ``attachment`` is an opaque runtime object sent beside the message (a picked folder's
    handle, a port) for the few operations that take one.
    """

    ctx: HostContext
    args: Any
    body: bytes | None
    origin: str | None
    actor: str
    attachment: object = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a handler hands back: its result model, an optional binary body, audit context.

    ``rule`` names the rule that admitted (audit ``rule``); ``details`` are non-secret audit
    details; ``project`` is the project the call concerned; ``attachment`` is an opaque
    runtime object handed back beside the answer (e.g. a folder handle for a permission
    gesture).

    A streaming operation (e.g. an archive export) sets ``stream``: the dispatcher hands each
    chunk to the transport as it is produced — memory does not grow with the stream's size —
    and, once the stream is exhausted, awaits ``finish()`` for the final result (which then
    replaces ``result``) and audits it with ``details``.
    """

    result: Contract
    body: bytes | None = None
    attachment: object = None
    stream: AsyncIterator[bytes] | None = None
    finish: Callable[[], Awaitable[Contract]] | None = None
    project: str | None = None
    rule: str = "admitted"
    details: dict[str, str | int | bool | None] = field(default_factory=dict)


Handler = Callable[[Call], Awaitable[Outcome]]


@dataclass(frozen=True, slots=True)
class Operation:
    """A registered operation (see module docstring)."""

    name: str
    args: type[Contract]
    result: type[Contract]
    handler: Handler
    summary: str
    writes: bool = False
    audited: bool = True
    body_in: Literal["none", "optional", "required"] = "none"
    body_out: bool = False
    attachment_in: bool = False


OPERATIONS: dict[str, Operation] = {}


def operation(
    name: str,
    *,
    args: type[Contract],
    result: type[Contract],
    summary: str,
    writes: bool = False,
    audited: bool = True,
    body_in: Literal["none", "optional", "required"] = "none",
    body_out: bool = False,
    attachment_in: bool = False,
) -> Callable[[Handler], Handler]:
    """Register the decorated coroutine as the handler of operation ``name``.

    Raises ``ValueError`` if ``name`` is taken (a programming error, found at import).
    """

    def register(handler: Handler) -> Handler:
        if name in OPERATIONS:
            raise ValueError(f"operation {name!r} registered twice")
        OPERATIONS[name] = Operation(
            name,
            args,
            result,
            handler,
            summary,
            writes,
            audited,
            body_in,
            body_out,
            attachment_in,
        )
        return handler

    return register
