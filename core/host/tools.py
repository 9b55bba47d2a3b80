"""Built-in tools: what any environment offers through the call envelope (SPEC §4, §7).

A tool is an :class:`~core.tools.registry.OperationEntry` (origin ``builtin``) bound to the host
operation that performs it, so a tool runs through the very dispatcher — argument models, path
rule, SAFE mode, audit — that the page's own requests go through. Discovery shows each tool's
argument schema, effect class and receipt rule; a description is never an entitlement: every
call is admitted afresh (:mod:`core.tools.admission`).

For an effect the host performed (a write), the result carries a host receipt (rung
``local-write``: path, size, sha256 and, as the store version, the audit sequence number of
the write — :mod:`core.tools.receipts`). A timeout leaves a call's outcome unknown and a mutating
call is never retried blindly (:func:`core.tools.receipts.retry_advice`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from core.host.operations import OPERATIONS
from core.model import Contract, NoArgs
from core.policy import Policy
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused
from core.tools.admission import Admission, Admitted, CallRequest
from core.tools.receipts import HostReceipt
from core.tools.registry import Descriptor, OperationEntry, OperationRegistry

if TYPE_CHECKING:
    from core.host.pipeline import Host

__all__ = ["MAX_CONTENT_BYTES", "ToolBox", "ToolOutcome"]

MAX_CONTENT_BYTES = 4 << 20
"""The most bytes ``file.write`` carries inside a call envelope (base64 in ``args``)."""

Sink = Callable[[bytes], Awaitable[None]]


class FileWriteToolArgs(Contract):
    """``file.write`` as a tool: the bytes travel base64-encoded in the arguments."""

    project: str = Field(pattern=PROJECT_ID_PATTERN)
    path: str = Field(max_length=5000)
    content_b64: str = Field(max_length=(MAX_CONTENT_BYTES * 4) // 3 + 8)
    if_absent: bool = False


class ToolOutcome(Contract):
    """A tool's answer: its result and, for an effect the host performed, the host's receipt."""

    result: dict[str, Any]
    receipt: HostReceipt | None = None


@dataclass(frozen=True, slots=True)
class _Binding:
    entry: OperationEntry
    op: str
    request: Callable[[Contract], tuple[dict[str, Any], bytes | None]]


def _same(args: Contract) -> tuple[dict[str, Any], bytes | None]:
    return args.model_dump(mode="json", by_alias=True), None


def _file_write(args: Contract) -> tuple[dict[str, Any], bytes | None]:
    assert isinstance(args, FileWriteToolArgs)
    try:
        data = base64.b64decode(args.content_b64, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(
            Code.ARGS_INVALID, "content_b64 is not base64.", field="content_b64"
        ) from None
    return {"project": args.project, "path": args.path, "if_absent": args.if_absent}, data


def _builtin(
    name: str,
    op: str,
    summary: str,
    *,
    write: bool,
    args: type[Contract] | None = None,
    request: Callable[[Contract], tuple[dict[str, Any], bytes | None]] = _same,
    capabilities: frozenset[str] = frozenset(),
) -> _Binding | None:
    found = OPERATIONS.get(op)
    if found is None:
        return None
    entry = OperationEntry(
        name=name,
        origin="builtin",
        summary=summary,
        args_model=args or found.args,
        effect="write" if write else "read",
        receipt_rule="local-write" if write else "internal-read",
        capabilities=capabilities,  # type: ignore[arg-type]
    )
    return _Binding(entry, op, request)


def _bindings() -> list[_Binding]:
    made = [
        _builtin("projects.list", "project.list", "List this environment's projects.", write=False),
        _builtin(
            "project.create",
            "project.create",
            "Create an empty project.",
            write=True,
            capabilities=frozenset({"storage"}),
        ),
        _builtin(
            "file.walk",
            "file.walk",
            "List every file of a project, with sizes.",
            write=False,
            capabilities=frozenset({"files"}),
        ),
        _builtin(
            "file.write",
            "file.write",
            "Write a file (bytes as base64) atomically.",
            write=True,
            args=FileWriteToolArgs,
            request=_file_write,
            capabilities=frozenset({"files"}),
        ),
        _builtin(
            "contact.deliver",
            "inbox.deliver",
            "Deliver a message to an agent's inbox here (delivery is not execution).",
            write=True,
            capabilities=frozenset({"storage"}),
        ),
        _builtin(
            "create-asset",
            "asset.create",
            "Generate a PNG in the Wasm sandbox (nothing granted); the host writes it.",
            write=True,
            capabilities=frozenset({"files"}),
        ),
        _builtin(
            "project.export",
            "project.export",
            "Export a project as a deterministic zip archive (streamed).",
            write=False,
            capabilities=frozenset({"files"}),
        ),
    ]
    return [b for b in made if b is not None]


class ToolBox:
    """The built-in tools of one environment, executed through that environment's :class:`Host`.

    ``env`` is the envKey the receipts name; ``policy`` returns the current policy snapshot.
    """

    DESCRIBE = "tools.describe"

    def __init__(self, host: Host, env: str, policy: Callable[[], Policy]) -> None:
        self._host = host
        self._env = env
        self._clock = host.ctx.clock
        self.registry = OperationRegistry()
        self._bindings: dict[str, _Binding] = {}
        describe = OperationEntry(
            name=self.DESCRIBE,
            origin="builtin",
            summary="Describe the tools offered here.",
            args_model=NoArgs,
            effect="read",
            receipt_rule="internal-read",
        )
        self.registry.register(describe)
        for binding in _bindings():
            self.registry.register(binding.entry)
            self._bindings[binding.entry.name] = binding
        self._admission = Admission(self.registry, policy)
        self._n = 0

    def describe(self) -> tuple[Descriptor, ...]:
        """Discovery: every tool's schema, effect class and receipt rule (not a grant)."""
        return self.registry.describe()

    def admit(self, request: CallRequest) -> Admitted:
        """Admit one call on a fresh policy snapshot (refusals in :mod:`core.tools.admission`)."""
        return self._admission.admit(request)

    async def run(self, admitted: Admitted, *, actor: str, sink: Sink | None = None) -> ToolOutcome:
        """Execute an admitted call through the host's dispatcher.

        Streaming tools hand their chunks to ``sink``. Raises the host's refusal as
        :class:`Refused` (same code and message).
        """
        name = admitted.entry.name
        if name == self.DESCRIBE:
            tools = [d.model_dump(mode="json", by_alias=True) for d in self.describe()]
            return ToolOutcome(result={"tools": tools})
        binding = self._bindings[name]
        op_args, body = binding.request(admitted.args)
        self._n += 1
        text = json.dumps({"v": 1, "id": f"tool-{self._n}", "op": binding.op, "args": op_args})
        answer_text, out, _ = await self._host.handle_full(text, body, None, sink, actor=actor)
        answer = json.loads(answer_text)
        if not answer["ok"]:
            refusal = answer["refusal"]
            raise Refused(Code(refusal["code"]), refusal["message"], field=refusal.get("field"))
        result = dict(answer["result"])
        if out is not None:
            result["content_b64"] = base64.b64encode(out).decode()
        receipt = None
        if admitted.entry.receipt_rule == "local-write" and {"path", "size", "sha256"} <= set(
            result
        ):
            receipt = HostReceipt(
                rung="local-write",
                op=name,
                env=self._env,
                project=op_args.get("project", ""),
                path=result["path"],
                size=result["size"],
                sha256=result["sha256"],
                store_version=answer.get("logged") or 0,
                at=self._clock.now_ms(),
            )
        return ToolOutcome(result=result, receipt=receipt)
