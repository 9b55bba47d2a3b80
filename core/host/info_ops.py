"""``host.info``: versions, policy, the environment this host acts for, and runtime figures."""

from __future__ import annotations

from pydantic import Field

from core.host.operations import Call, Outcome
from core.model import Contract, NoArgs
from core.protocol import PROTOCOL_VERSION

__all__ = ["HostInfo", "ListingFigures", "RuntimeFigures", "host_info"]


class RuntimeFigures(Contract):
    """Memory figures for operations and the benchmark; never a secret, never project data."""

    wasm_memory_bytes: int | None = Field(
        default=None, ge=0, description="Size of the Wasm memory (Pyodide's heap), bytes."
    )
    python_allocated_blocks: int | None = Field(
        default=None, ge=0, description="Memory blocks the Python allocator holds (a count)."
    )
    byte_path_peak_held_bytes: int | None = Field(
        default=None,
        ge=0,
        description="The most file bytes the export's byte path held at once, outside the "
        "Wasm memory, since the host started (docs/archives.md §4).",
    )
    byte_path_bytes: int | None = Field(
        default=None, ge=0, description="File bytes the export's byte path relayed, in all."
    )
    gc_frozen_objects: int | None = Field(
        default=None,
        ge=0,
        description="Objects moved out of the cycle collector's sight once the host settled "
        "(its modules and models: issue 34); 0 before.",
    )


class ListingFigures(Contract):
    """The listings the host keeps for ``file.list`` (:mod:`core.projects.listing_cache`);
    counts only, never a name."""

    entries: int = Field(ge=0, description="Entries kept now, over every project.")
    folders: int = Field(ge=0, description="Folder listings kept now.")
    watched: int = Field(ge=0, description="Projects whose folder is being watched now.")
    hits: int = Field(ge=0, description="Listings answered from a kept one since the start.")
    reports: int = Field(
        ge=0, description="Batches of changes the folders' watches reported since the start."
    )


class HostInfo(Contract):
    """What the page may know about the host: versions, protocol, SAFE mode, runtime figures
    (``runtime`` is null where the placement has no probe; ``listings`` where it keeps
    none)."""

    protocol: int
    versions: dict[str, str]
    read_only: bool
    safe_reason: str | None = Field(
        default=None,
        max_length=1000,
        description="Why SAFE mode was forced: policy.json could not be used (issue 29 item "
        "11); null when the policy was read.",
    )
    runtime: RuntimeFigures | None = None
    listings: ListingFigures | None = None


async def host_info(call: Call[NoArgs]) -> Outcome:
    """Never refuses."""
    ctx = call.ctx
    probe = ctx.services.runtime_probe
    return Outcome(
        HostInfo(
            protocol=PROTOCOL_VERSION,
            versions=dict(ctx.versions),
            read_only=ctx.policy.read_only,
            safe_reason=ctx.policy_damage,
            runtime=None if probe is None else RuntimeFigures.model_validate(probe()),
            listings=None
            if ctx.listings is None
            else ListingFigures.model_validate(ctx.listings.figures()),
        )
    )
