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
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.host.context import HostContext
from core.host.file_ops import WriteArgs
from core.host.operations import (
    AnyOperation,
    Call,
    HostRuntime,
    Operation,
    Operations,
    Outcome,
    Ref,
)
from core.model import Contract, NoArgs
from core.refusals import Code, Refused
from core.relayed_text import escape_tree
from core.tools.admission import Admission, Admitted, CallRequest
from core.tools.broker import Broker, FilesAccess, StorageAccess
from core.tools.builtin import BuiltinTool, DescribeArgs, FileWriteToolArgs
from core.tools.plugin_call import (
    DecodedWrite,
    PluginOutput,
    decode_output,
    envelope,
    read_requests,
    write_request,
)
from core.tools.plugin_manifest import PluginOperation, PluginPackage
from core.tools.plugin_shelf import PluginShelf
from core.tools.receipts import HostReceipt
from core.tools.registry import Descriptor, OperationEntry, OperationRegistry, ReservedNames
from core.tools.runner import Sink, ToolOutcome

__all__ = [
    "PLUGIN_CHECKS",
    "PluginAnswer",
    "PluginCheck",
    "PluginChecks",
    "PluginRun",
    "ToolBox",
]

Request = Callable[[Contract], tuple[Contract, bytes | None]]


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
    operation: AnyOperation | None
    request: Request | None


class ToolBox:
    """The built-in tools of the environment ``ctx`` serves, run through ``pipeline`` — the
    host, by its one declared :meth:`~core.host.operations.HostRuntime.run` (module docstring).
    Implements :class:`core.tools.runner.ToolRunner`."""

    def __init__(
        self,
        pipeline: HostRuntime,
        operations: Operations,
        ctx: HostContext,
        tools: tuple[BuiltinTool, ...],
    ) -> None:
        self._pipeline = pipeline
        self._operations = operations
        self._ctx = ctx
        # no plugin may take a name of this host's protocol or of its tools (issue 29 item 3)
        reserved = ReservedNames([*operations, *(tool.name for tool in tools)])
        self._registry = OperationRegistry(reserved)
        self._bound: dict[str, _Bound] = {}
        for tool in tools:
            # as declared: a late operation's module is not imported to build the host (issue
            # 34, cold boot); its arguments model is eager (core/host/registry.py), and the
            # pipeline waits for the late import when the tool runs (Host.run)
            op = None if tool.operation is None else operations.declared(tool.operation)
            if tool.operation is not None and op is None:
                raise ValueError(f"tool {tool.name!r} names no operation {tool.operation!r}")
            self.add(tool, op)
        self._admission = Admission(self._registry, lambda: ctx.policy)
        self._broker = Broker(lambda: ctx.policy)
        self.plugins = PluginShelf(ctx.state, self._registry, lambda: ctx.policy)
        """The installed plugins, registered in :attr:`registry` with origin ``plugin:<id>``."""

    def add(self, tool: BuiltinTool, operation: AnyOperation | None) -> None:
        """Offer ``tool``, performed by ``operation`` (``None``: answered by discovery, as
        :data:`~core.tools.builtin.DESCRIBE` is) — which this host runs even when it is not
        one of its protocol's operations (a placement's own). Its effect class and receipt rule
        are the operation's; refuses as :meth:`core.tools.registry.OperationRegistry.register`.
        ``operation`` may be a late one as declared (its handler and result still to be
        imported: :class:`~core.host.operations.Ref`) when its arguments model is real, as the
        host builds its tools (issue 34); a ``ValueError`` when it is not."""
        if operation is not None and tool.args is None and isinstance(operation.args, Ref):
            raise ValueError(f"tool {tool.name!r}: the arguments of {operation.name!r} are late")
        request = None if operation is None or tool.args is None else REQUESTS[tool.args]
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
        self._registry.add(entry)
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
        if admitted.entry.plugin_id is not None:
            return await self._run_plugin(admitted, actor=actor)
        bound = self._bound[name]
        operation = bound.operation
        if operation is not None and operation.pending is not None:
            # a late operation as declared when the tools were built: real once its module is
            # in (the host's shared late import); Host.run waits for that import if it is not
            operation = self._operations.declared(operation.name) or operation
        if operation is None:  # discovery: at most eight live seats, preferred first
            assert isinstance(admitted.args, DescribeArgs)
            offered = self._registry.offer(admitted.policy, prefer=admitted.args.prefer)
            tools = [d.model_dump(mode="json", by_alias=True) for d in offered]
            return ToolOutcome(result={"tools": tools})
        args, body = admitted.args, None
        if bound.request is not None:
            args, body = bound.request(admitted.args)
        try:
            ran = await self._pipeline.run(
                operation, args, actor=actor, body=body, sink=sink, receipt_as=name
            )
        except Refused as refusal:  # the call's answer says what the operation said
            raise Refused(refusal.code, refusal.message, field=refusal.field) from None
        result = ran.result.model_dump(mode="json", by_alias=True)
        if ran.body is not None:
            result["content_b64"] = base64.b64encode(ran.body).decode()
        return ToolOutcome(result=result, receipt=ran.receipt)

    def plugin_operation(self, admitted: Admitted) -> Operation[Contract, PluginAnswer]:
        """The admitted plugin call as an operation of this host, run by
        :meth:`~core.host.operations.HostRuntime.run` like every other (issue 35 item 3): named
        as the tool, taking the tool's own argument model, ``writes`` for a mutating effect
        class (so SAFE mode refuses it at the pipeline's gate and it runs under the write
        lock, its writes nested inside it), ``read_only`` for a reader (its admitted record is
        grouped), its declared receipt rung; its handler is :class:`PluginChecks` over
        :data:`PLUGIN_CHECKS` — the checks, in order, as data the operation carries."""
        entry = admitted.entry
        return Operation(
            name=entry.name,
            args=entry.args_model,
            result=PluginAnswer,
            handler=PluginChecks(self, admitted, PLUGIN_CHECKS),
            summary=entry.summary,
            writes=entry.mutating,
            receipt=entry.receipt_rule,
            read_only=not entry.mutating,
        )

    async def _run_plugin(self, admitted: Admitted, *, actor: str) -> ToolOutcome:
        """One admitted plugin call, run by the pipeline as :meth:`plugin_operation`: its gates,
        then :data:`PLUGIN_CHECKS` in their declared order, then its audit record — a refused
        call's record names the refusal and the check that gave it. The host never runs the
        module itself: only the sandbox port does. A refusal goes on as the check raised it
        (the ``tool.call`` that asked audits it too, with the same details)."""
        ran = await self._pipeline.run(self.plugin_operation(admitted), admitted.args, actor=actor)
        return ToolOutcome(result=ran.result.result, receipt=ran.result.receipt)

    # ---- the plugin call's checks, in PLUGIN_CHECKS order ------------------------------------

    async def _installed(self, run: PluginRun) -> None:
        entry = run.admitted.entry
        assert entry.plugin_id is not None
        package = self.plugins.get(entry.plugin_id)
        op = None if package is None else package.manifest.operation(entry.name)
        if package is None or op is None or package.manifest_sha256 != entry.manifest_sha256:
            raise Refused(Code.PLUGIN_WITHDRAWN, "That plugin is no longer installed.")
        run.package, run.op = package, op
        run.args = run.admitted.args.model_dump(mode="json", by_alias=True)
        run.project = run.args.pop("project")

    async def _reads(self, run: PluginRun) -> None:
        op, entry = run.operation, run.admitted.entry
        opened = await self._ctx.catalog.open(run.project)
        for request in read_requests(op, run.args):
            access = _files_access(self._broker.decide(entry, request))
            found = await opened.files.stat(access.path)
            if found is not None and (found.size or 0) > op.limits.read_bytes:
                raise Refused(Code.FILE_TOO_LARGE, "The file is larger than the plugin reads.")
            data = await opened.files.read(access.path)
            if len(data) > op.limits.read_bytes:
                raise Refused(Code.FILE_TOO_LARGE, "The file is larger than the plugin reads.")
            run.files.append(data)

    async def _pinned(self, run: PluginRun) -> None:
        op, package = run.operation, run.installed
        module = package.modules[op.module]
        pinned = next(m.sha256 for m in package.manifest.modules if m.file == op.module)
        if hashlib.sha256(module).hexdigest() != pinned:
            raise Refused(Code.PLUGIN_PIN_MISMATCH, f"{op.module} is not the pinned module.")
        run.module = module

    async def _sandboxed(self, run: PluginRun) -> None:
        op, package = run.operation, run.installed
        sandbox = self._ctx.services.sandbox
        if sandbox is None:
            raise Refused(Code.SANDBOX_UNAVAILABLE, "No sandbox is connected to this host.")
        run.output = await sandbox.call(
            run.module,
            op.entry,
            envelope(op, run.args, run.files),
            time_ms=op.limits.time_ms,
            max_output=op.limits.output_bytes,
            max_memory=op.limits.memory_bytes,
            config=dict(package.manifest.config),
        )

    async def _decoded(self, run: PluginRun) -> None:
        run.answer, run.writes = decode_output(run.operation, run.args, run.output)

    async def _still_admitted(self, run: PluginRun) -> None:
        entry = run.admitted.entry
        assert entry.plugin_id is not None
        now, policy = self._registry.get(entry.name), self._ctx.policy
        if (
            now is None
            or now.withdrawn
            or now.manifest_sha256 != entry.manifest_sha256
            or policy.plugin_withdrawn(entry.plugin_id, entry.manifest_sha256)
        ):
            raise Refused(Code.PLUGIN_WITHDRAWN, "The plugin was withdrawn during the call.")
        if not policy.plugin_admitted(entry.plugin_id, entry.manifest_sha256):
            raise Refused(Code.PLUGIN_NOT_ADMITTED, "The release's admission was withdrawn.")

    async def _writes_decided(self, run: PluginRun) -> None:
        entry = run.admitted.entry
        run.accesses = [
            _files_access(self._broker.decide(entry, write_request(w.path))) for w in run.writes
        ]

    async def _written(self, run: PluginRun) -> None:
        for access, write in zip(run.accesses, run.writes, strict=True):
            ran = await self._pipeline.run(
                self._operations["file.write"],
                WriteArgs(project=run.project, path=str(access.path)),
                actor=run.actor,
                body=write.data,
                within=run.call,  # inside the plugin call's write lock
                receipt_as=run.admitted.entry.name,
            )
            run.receipt = ran.receipt
            run.written.append(str(access.path))


@dataclass(slots=True)
class PluginRun:
    """What one plugin call's checks hand on, filled in :data:`PLUGIN_CHECKS` order: the
    installed package and its operation, the call's arguments (JSON, ``project`` taken out),
    the files read, the pinned module, the sandbox's output, the decoded answer and its
    writes, the decided write accesses, then what was written and the last write's receipt."""

    admitted: Admitted
    call: Call[Contract]
    package: PluginPackage | None = None
    op: PluginOperation | None = None
    args: dict[str, Any] = field(default_factory=dict)
    project: str = ""
    files: list[bytes] = field(default_factory=list)
    module: bytes = b""
    output: bytes = b""
    answer: PluginOutput | None = None
    writes: list[DecodedWrite] = field(default_factory=list)
    accesses: list[FilesAccess] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    receipt: HostReceipt | None = None

    @property
    def actor(self) -> str:
        """Who the call is audited as (the pipeline's ``actor``)."""
        return self.call.actor

    @property
    def installed(self) -> PluginPackage:
        """The package, once ``installed`` has passed."""
        assert self.package is not None
        return self.package

    @property
    def operation(self) -> PluginOperation:
        """The manifest's operation, once ``installed`` has passed."""
        assert self.op is not None
        return self.op


@dataclass(frozen=True, slots=True)
class PluginCheck:
    """One step of a plugin call (docs/plugins.md "The admission order of one plugin call"):
    its ``name``, the refusal codes it may answer (``refuses``; the sandbox's and the
    decoder's own as well), and the step, run on the call's :class:`PluginRun`."""

    name: str
    refuses: tuple[Code, ...]
    step: Callable[[ToolBox, PluginRun], Awaitable[None]]


class PluginAnswer(Contract):
    """What a plugin call's operation gives back: the plugin's answer as relayed (``ok``,
    ``result``, ``message`` with every invisible control written out, and ``written``: the
    paths the host wrote for it) and the host's receipt of its last write, if any."""

    result: dict[str, Any]
    receipt: HostReceipt | None = None


@dataclass(frozen=True, slots=True)
class PluginChecks:
    """The handler of a plugin call's operation (:meth:`ToolBox.plugin_operation`): runs
    ``checks`` — :data:`PLUGIN_CHECKS` — in their order on one :class:`PluginRun`; the first
    refusal ends the call before anything is written, its audit details naming the check
    (``check``). The admitted record names the plugin and how many files it wrote."""

    box: ToolBox
    admitted: Admitted
    checks: tuple[PluginCheck, ...]

    async def __call__(self, call: Call[Contract]) -> Outcome:
        run = PluginRun(admitted=self.admitted, call=call)
        for check in self.checks:
            try:
                await check.step(self.box, run)
            except Refused as refusal:
                refusal.details = {**refusal.details, "check": check.name}
                raise
        assert run.answer is not None
        result = run.answer.model_dump(mode="json", exclude={"writes"}) | {"written": run.written}
        # the plugin's words are relayed with every invisible control written out (issue 29
        # item 4); its refusals' texts are escaped where every refusal is (Refused.body)
        return Outcome(
            PluginAnswer(result=escape_tree(result), receipt=run.receipt),
            project=getattr(call.args, "project", None),
            details={"plugin": self.admitted.entry.plugin_id, "written": len(run.written)},
        )


PLUGIN_CHECKS: tuple[PluginCheck, ...] = (
    PluginCheck("installed", (Code.PLUGIN_WITHDRAWN,), ToolBox._installed),
    PluginCheck(
        "reads",
        (
            Code.FILES_GRANT_MISSING,
            Code.CAPABILITY_UNDECLARED,
            Code.FILE_NOT_FOUND,
            Code.FILE_TOO_LARGE,
        ),
        ToolBox._reads,
    ),
    PluginCheck("pinned", (Code.PLUGIN_PIN_MISMATCH,), ToolBox._pinned),
    PluginCheck(
        "sandboxed",
        (
            Code.SANDBOX_UNAVAILABLE,
            Code.TOOL_TIMEOUT,
            Code.TOOL_MEMORY_EXCEEDED,
            Code.TOOL_OUTPUT_INVALID,
            Code.NETWORK_EGRESS_REFUSED,
        ),
        ToolBox._sandboxed,
    ),
    PluginCheck(
        "decoded",
        (
            Code.RECEIPT_FORGERY_REFUSED,
            Code.GRANT_FIELD_REFUSED,
            Code.CAPABILITY_UNDECLARED,
            Code.TOOL_OUTPUT_INVALID,
        ),
        ToolBox._decoded,
    ),
    PluginCheck(
        "still-admitted", (Code.PLUGIN_WITHDRAWN, Code.PLUGIN_NOT_ADMITTED), ToolBox._still_admitted
    ),
    PluginCheck(
        "writes-decided",
        (Code.FILES_GRANT_MISSING, Code.EFFECT_CLASS_EXCEEDED),
        ToolBox._writes_decided,
    ),
    PluginCheck("written", (Code.READ_ONLY_MODE,), ToolBox._written),
)
"""The checks of one admitted plugin call, in the order they run (issue 35 item 3: the order is
this data, not prose). Admission (:mod:`core.tools.admission`) comes before them; nothing is
written before ``written``, whose writes go through ``file.write`` in the pipeline (its gates,
audit record and the host's receipt)."""


def _files_access(access: FilesAccess | StorageAccess) -> FilesAccess:
    """``access`` of a files request (:func:`~core.tools.plugins.read_requests`,
    :func:`~core.tools.plugins.write_request` make only those); anything else is a bug of this
    module, answered ``internal-error`` by the pipeline."""
    if not isinstance(access, FilesAccess):
        raise TypeError("a plugin's files request was decided as a storage access")
    return access
