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
from collections.abc import Callable
from dataclasses import dataclass

from core.host.context import HostContext
from core.host.file_ops import WriteArgs
from core.host.operations import AnyOperation, HostRuntime, Operations
from core.model import Contract, NoArgs
from core.refusals import Code, Refused
from core.relayed_text import escape_tree
from core.tools.admission import Admission, Admitted, CallRequest
from core.tools.broker import Broker, FilesAccess, StorageAccess
from core.tools.builtin import BuiltinTool, DescribeArgs, FileWriteToolArgs
from core.tools.plugin_call import decode_output, envelope, read_requests, write_request
from core.tools.plugin_shelf import PluginShelf
from core.tools.registry import Descriptor, OperationEntry, OperationRegistry, ReservedNames
from core.tools.runner import Sink, ToolOutcome

__all__ = ["ToolBox"]

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
            op = None if tool.operation is None else operations.get(tool.operation)
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
        are the operation's; refuses as :meth:`core.tools.registry.OperationRegistry.register`."""
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
        if admitted.entry.plugin_id is not None:
            return await self._run_plugin(admitted, actor=actor)
        bound = self._bound[name]
        if bound.operation is None:  # discovery: at most eight live seats, preferred first
            assert isinstance(admitted.args, DescribeArgs)
            offered = self._registry.offer(admitted.policy, prefer=admitted.args.prefer)
            tools = [d.model_dump(mode="json", by_alias=True) for d in offered]
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

    async def _run_plugin(self, admitted: Admitted, *, actor: str) -> ToolOutcome:
        """One admitted plugin call (docs/plugins.md "Admission order"), in this order: the
        broker decides each declared read on a fresh policy snapshot and the host reads the
        file (``file-too-large`` past the operation's ``readBytes``); the module's bytes are
        checked against the pin again (``plugin-pin-mismatch``); the sandbox runs the export
        with the manifest's bounds (its refusals); the output is decoded
        (:func:`core.tools.plugin_call.decode_output`); the registry and policy are read again
        (a withdrawal or revoked admission during the run refuses ``plugin-withdrawn`` /
        ``plugin-not-admitted``); the broker decides every write request before any is
        written; the host writes each through ``file.write`` (gates, audit, receipt). The
        host never runs the module itself: only the sandbox port does."""
        entry = admitted.entry
        assert entry.plugin_id is not None
        package = self.plugins.get(entry.plugin_id)
        op = None if package is None else package.manifest.operation(entry.name)
        if package is None or op is None or package.manifest_sha256 != entry.manifest_sha256:
            raise Refused(Code.PLUGIN_WITHDRAWN, "That plugin is no longer installed.")
        args = admitted.args.model_dump(mode="json", by_alias=True)
        project = args.pop("project")
        opened = await self._ctx.catalog.open(project)
        files = []
        for request in read_requests(op, args):
            access = _files_access(self._broker.decide(entry, request))
            found = await opened.files.stat(access.path)
            if found is not None and (found.size or 0) > op.limits.read_bytes:
                raise Refused(Code.FILE_TOO_LARGE, "The file is larger than the plugin reads.")
            data = await opened.files.read(access.path)
            if len(data) > op.limits.read_bytes:
                raise Refused(Code.FILE_TOO_LARGE, "The file is larger than the plugin reads.")
            files.append(data)
        module = package.modules[op.module]
        pinned = next(m.sha256 for m in package.manifest.modules if m.file == op.module)
        if hashlib.sha256(module).hexdigest() != pinned:
            raise Refused(Code.PLUGIN_PIN_MISMATCH, f"{op.module} is not the pinned module.")
        sandbox = self._ctx.services.sandbox
        if sandbox is None:
            raise Refused(Code.SANDBOX_UNAVAILABLE, "No sandbox is connected to this host.")
        output = await sandbox.call(
            module,
            op.entry,
            envelope(op, args, files),
            time_ms=op.limits.time_ms,
            max_output=op.limits.output_bytes,
            max_memory=op.limits.memory_bytes,
            config=dict(package.manifest.config),
        )
        answer, writes = decode_output(op, args, output)
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
        accesses = [
            _files_access(self._broker.decide(entry, write_request(w.path))) for w in writes
        ]
        receipt = None
        written = []
        for access, write in zip(accesses, writes, strict=True):
            ran = await self._pipeline.run(
                self._operations["file.write"],
                WriteArgs(project=project, path=str(access.path)),
                actor=actor,
                body=write.data,
                receipt_as=entry.name,
            )
            receipt = ran.receipt
            written.append(str(access.path))
        result = answer.model_dump(mode="json", exclude={"writes"}) | {"written": written}
        # the plugin's words are relayed with every invisible control written out (issue 29
        # item 4); its refusals' texts are escaped where every refusal is (Refused.body)
        return ToolOutcome(result=escape_tree(result), receipt=receipt)


def _files_access(access: FilesAccess | StorageAccess) -> FilesAccess:
    """``access`` of a files request (:func:`~core.tools.plugins.read_requests`,
    :func:`~core.tools.plugins.write_request` make only those); anything else is a bug of this
    module, answered ``internal-error`` by the pipeline."""
    if not isinstance(access, FilesAccess):
        raise TypeError("a plugin's files request was decided as a storage access")
    return access
