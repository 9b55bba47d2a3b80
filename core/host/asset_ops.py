"""``asset.create``: run the create-asset WebAssembly tool and write its PNG (SPEC §7, §8).

The host loads the module and checks its sha256 against the pin (a module that differs never
runs), sends it the argument bytes in the sandbox (nothing granted, bounded in time and
memory), checks what came back (:func:`core.tools.asset_check.check_png`: a complete PNG of exactly
the requested size, within the size cap) and only then writes it itself, atomically, into the
project. The tool never writes. Offered as the built-in tool ``create-asset``
(:mod:`core.tools.builtin`), whose answer carries the host's ``local-write`` receipt.

Refusals: ``sandbox-unavailable`` (no sandbox connected, module missing or not matching its
pin), ``tool-timeout``, ``tool-memory-exceeded``, ``tool-output-invalid``, the path rule's
codes, ``project-not-found``, ``storage-quota-exceeded``, ``is-a-directory`` and — by default
(``on_conflict="refuse"``), checked before the tool runs — ``already-exists``: an existing file
is never replaced unless the call says ``replace``; ``keep-both`` writes beside it
(``name (2).png``). Nothing is written on any refusal.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from core.host.file_ops import FileDigest
from core.host.operations import Call, Outcome
from core.model import Contract, NoArgs
from core.projects.tree import free_path
from core.refusals import Code, Refused
from core.tools.asset_check import MAX_ASSET_BYTES, CreateAssetArgs, check_png
from core.vocabulary import ProjectId

__all__ = ["MODULE", "RUN_TIME_MS", "AssetCreateArgs", "AssetCreated"]

MODULE = "create_asset"
RUN_TIME_MS = 3000


class AssetCreateArgs(CreateAssetArgs):
    """``create-asset``'s arguments plus the project the host writes into."""

    project: ProjectId = Field(description="The project to write into.")
    on_conflict: Literal["refuse", "replace", "keep-both"] = Field(
        default="refuse",
        description="When the path exists: replace it, refuse (already-exists, nothing run), "
        "or write beside it under the first free name.",
    )


class AssetCreated(FileDigest):
    """The PNG the host wrote: path, size, sha256, and its pixel size."""

    width: int
    height: int


class SandboxConnected(Contract):
    """The host now talks to the tool sandbox directly over the port it was handed."""

    connected: bool


async def sandbox_connect(call: Call[NoArgs]) -> Outcome:
    """Refuses ``sandbox-unavailable`` where this host cannot use one (the pipeline refuses a
    call without the port). A new port replaces the old one."""
    services = call.ctx.services
    if services.connect_sandbox is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "This host cannot use a tool sandbox.")
    services.sandbox = services.connect_sandbox(call.attachment)
    return Outcome(SandboxConnected(connected=True))


async def asset_create(call: Call[AssetCreateArgs]) -> Outcome:
    """See the module docstring for the order of checks and the refusals."""
    args: AssetCreateArgs = call.args
    ctx = call.ctx
    target = args.target()
    opened = await ctx.catalog.open(args.project)
    existing = await opened.files.stat(target)
    if existing is not None and existing.kind == "dir":
        raise Refused(Code.IS_A_DIRECTORY, f"'{target}' is a folder.", field="path")
    if existing is not None and args.on_conflict == "refuse":
        raise Refused(Code.ALREADY_EXISTS, f"'{target}' already exists.", field="path")
    sandbox, modules = ctx.services.sandbox, ctx.services.modules
    if sandbox is None or modules is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No tool sandbox is connected to this host.")
    module, pinned = await modules.load(MODULE)
    actual = hashlib.sha256(module).hexdigest()
    if actual != pinned:
        raise Refused(
            Code.SANDBOX_UNAVAILABLE,
            f"The create-asset module's sha256 {actual[:16]}… does not match its pin; "
            "it was not run.",
        )
    output = await sandbox.run(
        module, args.module_input(), time_ms=RUN_TIME_MS, max_output=MAX_ASSET_BYTES
    )
    info = check_png(output, width=args.width, height=args.height)
    if existing is not None and args.on_conflict == "keep-both":
        target = await free_path(opened.files, target)
    await opened.files.write(target, output)
    created = AssetCreated(
        path=str(target),
        size=len(output),
        sha256=hashlib.sha256(output).hexdigest(),
        width=info.width,
        height=info.height,
    )
    return Outcome(
        created,
        project=args.project,
        details={
            "path": created.path,
            "size": created.size,
            "sha256": created.sha256,
            "module": pinned[:16],
        },
    )
