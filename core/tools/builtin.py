"""The built-in tools: what every environment offers through the call envelope (SPEC §4, §7;
seed 003).

:data:`BUILTIN_TOOLS` lists them, each bound by name to the host operation that performs it —
so a tool runs through the very pipeline (argument model, gates, path rule, SAFE mode, audit,
receipt) that the page's own requests go through (:mod:`core.host.tools`). Importing this
module is enough to know them: nothing registers itself elsewhere.

A tool's effect class and receipt rule are its operation's (an operation that writes is a
``write`` tool with the ``local-write`` rung); its argument model is the operation's, unless
the tool declares its own (``file.write`` carries its bytes base64-encoded in the arguments,
:class:`FileWriteToolArgs`, because a call envelope has no binary body). ``tools.describe`` is
answered by discovery itself and performs no operation: it offers at most
:data:`~core.tools.registry.MAX_OFFERED_SEATS` live tools (seed 003: a context limit, never a
grant), the names the caller prefers first (:class:`DescribeArgs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from core.model import Contract
from core.tools.registry import MAX_OFFERED_SEATS, Capability
from core.vocabulary import ProjectId

__all__ = [
    "BUILTIN_TOOLS",
    "DESCRIBE",
    "MAX_CONTENT_BYTES",
    "BuiltinTool",
    "DescribeArgs",
    "FileWriteToolArgs",
]

MAX_CONTENT_BYTES = 4 << 20
"""The most bytes ``file.write`` carries inside a call envelope (base64 in ``args``)."""

DESCRIBE = "tools.describe"
"""The tool that describes the tools offered here (discovery; a description, never a grant)."""


class DescribeArgs(Contract):
    """``tools.describe``'s arguments: ``prefer``, at most eight tool names to offer first (a
    name that is not offered here is passed over, never an error). The answer holds at most
    :data:`~core.tools.registry.MAX_OFFERED_SEATS` tools that the policy would admit now —
    switched-off tools, withdrawn operations and unadmitted plugin releases are left out
    (seed 003 discovery; :meth:`core.tools.registry.OperationRegistry.offer`). A description
    is never a grant: every call is admitted again (:mod:`core.tools.admission`)."""

    prefer: tuple[Annotated[str, Field(max_length=200)], ...] = Field(
        default=(), max_length=MAX_OFFERED_SEATS
    )


class FileWriteToolArgs(Contract):
    """``file.write`` as a tool: the bytes travel base64-encoded in the arguments."""

    project: ProjectId
    path: str = Field(max_length=5000)
    content_b64: str = Field(max_length=(MAX_CONTENT_BYTES * 4) // 3 + 8)
    if_absent: bool = False


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    """One built-in tool: its ``name`` in discovery and calls, the host ``operation`` that
    performs it (``None`` for :data:`DESCRIBE`), a one-line ``summary``, the broker
    ``capabilities`` it declares, and its own argument model ``args`` when it is not the
    operation's."""

    name: str
    operation: str | None
    summary: str
    capabilities: frozenset[Capability] = frozenset()
    args: type[Contract] | None = None


BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool(
        DESCRIBE, None, "Describe the tools offered here (eight at most).", args=DescribeArgs
    ),
    BuiltinTool("projects.list", "project.list", "List this environment's projects."),
    BuiltinTool(
        "project.create", "project.create", "Create an empty project.", frozenset({"storage"})
    ),
    BuiltinTool(
        "file.walk", "file.walk", "List every file of a project, with sizes.", frozenset({"files"})
    ),
    BuiltinTool(
        "file.write",
        "file.write",
        "Write a file (bytes as base64) atomically.",
        frozenset({"files"}),
        FileWriteToolArgs,
    ),
    BuiltinTool(
        "contact.deliver",
        "inbox.deliver",
        "Deliver a message to an agent's inbox here (delivery is not execution).",
        frozenset({"storage"}),
    ),
    BuiltinTool(
        "create-asset",
        "asset.create",
        "Generate a PNG in the Wasm sandbox (nothing granted); the host writes it.",
        frozenset({"files"}),
    ),
    BuiltinTool(
        "project.export",
        "project.export",
        "Export a project as a deterministic zip archive (streamed).",
        frozenset({"files"}),
    ),
)
"""Every built-in tool, in discovery's order of registration (discovery sorts by name)."""
