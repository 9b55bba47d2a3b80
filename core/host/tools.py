"""The built-in tools of one environment, run in-process through its pipeline (SPEC §4, §7;
seed 003).

:class:`ToolBox` binds each :class:`~core.tools.builtin.BuiltinTool` to the host operation
that performs it, once, when the host is composed — a tool whose operation this host lacks is a
``ValueError`` then, never a silent gap. Discovery shows each tool with its operation's
argument schema, effect class and receipt rule; a description is never an entitlement: every
call is admitted afresh (:mod:`core.tools.admission`) and then run by
:meth:`core.host.pipeline.Host.run` on typed arguments — the same gates, audit and receipt as a
page request, and no JSON text between the two.

For an effect the host performed (a write), the answer carries the host's receipt (rung
``local-write``: path, size, sha256 and, as the store version, the audit sequence number of the
write — :mod:`core.tools.receipts`). A timeout leaves a call's outcome unknown and a mutating
call is never retried blindly (:func:`core.tools.receipts.retry_advice`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from core.host.context import HostContext
from core.host.file_ops import WriteArgs
from core.host.operations import Operation, Operations, Ran
from core.model import Contract, NoArgs
from core.refusals import Code, Refused
from core.tools.admission import Admission, Admitted, CallRequest
from core.tools.builtin import BuiltinTool, FileWriteToolArgs
from core.tools.registry import Descriptor, OperationEntry, OperationRegistry
from core.tools.runner import Sink, ToolOutcome

__all__ = ["ToolBox"]

Request = Callable[[Contract], tuple[Contract, bytes | None]]


class _Pipeline(Protocol):
    async def run(
        self,
        name: str | Operation,
        args: Contract,
        *,
        actor: str,
        body: bytes | None = None,
        sink: Sink | None = None,
        receipt_as: str | None = None,
    ) -> Ran: ...


def _file_write(args: Contract) -> tuple[Contract, bytes | None]:
    """``file.write`` as a tool: its base64 content becomes the operation's body."""
    assert isinstance(args, FileWriteToolArgs)
    try:
        data = base64.b64decode(args.content_b64, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(
            Code.ARGS_INVALID, "content_b64 is not base64.", field="content_b64"
        ) from None
    return WriteArgs(project=args.project, path=args.path, if_absent=args.if_absent), data


REQUESTS: dict[type[Contract], Request] = {FileWriteToolArgs: _file_write}
"""How a tool's own argument model becomes its operation's arguments and body."""


@dataclass(frozen=True, slots=True)
class _Bound:
    entry: OperationEntry
    operation: Operation | None
    request: Request | None


class ToolBox:
    """The built-in tools of the environment ``ctx`` serves, run through ``pipeline`` (module
    docstring). Implements :class:`core.tools.runner.ToolRunner`."""

    def __init__(
        self,
        pipeline: _Pipeline,
        operations: Operations,
        ctx: HostContext,
        tools: tuple[BuiltinTool, ...],
    ) -> None:
        self._pipeline = pipeline
        self._operations = operations
        self._ctx = ctx
        self._registry = OperationRegistry()
        self._bound: dict[str, _Bound] = {}
        for tool in tools:
            op = None if tool.operation is None else operations.get(tool.operation)
            if tool.operation is not None and op is None:
                raise ValueError(f"tool {tool.name!r} names no operation {tool.operation!r}")
            self.add(tool, op)
        self._admission = Admission(self._registry, lambda: ctx.policy)

    def add(self, tool: BuiltinTool, operation: Operation | None) -> None:
        """Offer ``tool``, performed by ``operation`` (``None``: answered by discovery, as
        :data:`~core.tools.builtin.DESCRIBE` is) — which this host runs even when it is not
        one of its protocol's operations (a placement's own). Its effect class and receipt rule
        are the operation's; refuses as :meth:`core.tools.registry.OperationRegistry.register`."""
        request = None if tool.args is None else REQUESTS[tool.args]
        writes = operation is not None and operation.writes
        entry = OperationEntry(
            name=tool.name,
            origin="builtin",
            summary=tool.summary,
            args_model=tool.args or (NoArgs if operation is None else operation.args),
            effect="write" if writes else "read",
            receipt_rule="internal-read" if operation is None else operation.rung,
            capabilities=tool.capabilities,
        )
        self._registry.register(entry)
        self._bound[tool.name] = _Bound(entry, operation, request)

    @property
    def registry(self) -> OperationRegistry:
        """The registry the tools are described and admitted from."""
        return self._registry

    def describe(self) -> tuple[Descriptor, ...]:
        """Discovery: every tool's schema, effect class and receipt rule (not a grant)."""
        return self._registry.describe()

    def mutating(self, name: str) -> bool:
        """True unless ``name`` only reads; an unknown tool counts as mutating."""
        entry = self._registry.get(name)
        return entry is None or entry.mutating

    def admit(self, request: CallRequest) -> Admitted:
        """Admit one call on a fresh policy snapshot (refusals in :mod:`core.tools.admission`)."""
        return self._admission.admit(request)

    async def run(self, admitted: Admitted, *, actor: str, sink: Sink | None = None) -> ToolOutcome:
        """Run an admitted call through the pipeline as ``actor``.

        Streaming tools hand their chunks to ``sink``. Raises the operation's refusal as
        :class:`Refused` with its code, sentence and field.
        """
        name = admitted.entry.name
        bound = self._bound[name]
        if bound.operation is None:
            tools = [d.model_dump(mode="json", by_alias=True) for d in self.describe()]
            return ToolOutcome(result={"tools": tools})
        args, body = admitted.args, None
        if bound.request is not None:
            args, body = bound.request(admitted.args)
        try:
            ran = await self._pipeline.run(
                bound.operation, args, actor=actor, body=body, sink=sink, receipt_as=name
            )
        except Refused as refusal:  # the call's answer says what the operation said
            raise Refused(refusal.code, refusal.message, field=refusal.field) from None
        result = ran.result.model_dump(mode="json", by_alias=True)
        if ran.body is not None:
            result["content_b64"] = base64.b64encode(ran.body).decode()
        return ToolOutcome(result=result, receipt=ran.receipt)
