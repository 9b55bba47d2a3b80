"""The operator's policy: the switches the host reads afresh for every request (seed 003).

A :class:`Policy` is a snapshot: admission takes the current one per call, so a change made
after a tool was described takes effect on the very next call (a cached description is not an
entitlement). Stored in HOST_DIR as ``policy.json``.
"""

from __future__ import annotations

from pydantic import Field

from core.model import Contract
from core.refusals import Code, Refused

__all__ = ["DEFAULT_HELLO_BOUND_MS", "DEFAULT_PEER_DEADLINE_MS", "Policy", "require_writable"]

DEFAULT_HELLO_BOUND_MS = 5000
DEFAULT_PEER_DEADLINE_MS = 30_000


class Policy(Contract):
    """Operator switches. ``read_only`` is SAFE mode: every write is refused ``read-only-mode``.

    Admission and the broker (seed 003, SPEC §7) read:

    - ``disabled_tools``: operation names switched off (``tool-disabled``); others are on;
    - ``admitted_plugins``: plugin id → the one release the operator admitted
      (``plugin-not-admitted`` for any other release, or for a plugin not listed);
    - ``files_grants``: origins (``builtin``, ``plugin:<id>``) the operator granted file access
      (``files-grant-missing`` otherwise); the host's own tools have it unless it is removed.

    Peer channels (seed 002 §4, SPEC §6) read ``hello_bound_ms`` — how long a new channel may
    take to send its hello frame — and ``peer_deadline_ms`` — how long a forwarded call may wait
    for its answer before it is ``environment-unreachable``. Both in milliseconds.
    """

    read_only: bool = Field(
        default=False,
        title="Read-only (SAFE) mode",
        description="Every write — files, letters, blocks, receipts, tools — is refused with "
        "read-only-mode. Reading, exporting and tidying the tray still work. Turn it off here at "
        "any time.",
    )
    disabled_tools: tuple[str, ...] = Field(
        default=(),
        max_length=1000,
        title="Tools",
        description="Each switch is one tool of this host: checked (on) means the tool may be "
        "called; unchecked (off) means every call to it is refused with tool-disabled, wherever "
        "the call comes from.",
    )
    admitted_plugins: dict[str, str] = Field(
        default_factory=dict,
        max_length=1000,
        title="Admitted plugin releases",
        description="Each plugin runs only at the release admitted here (plugin-not-admitted "
        "otherwise).",
    )
    files_grants: tuple[str, ...] = Field(
        default=("builtin",),
        max_length=1000,
        title="File access grants",
        description="Origins allowed to reach project files through the broker (builtin is the "
        "host's own tools).",
    )
    hello_bound_ms: int = Field(
        default=DEFAULT_HELLO_BOUND_MS,
        ge=1,
        le=600_000,
        title="Hello bound (ms)",
        description="How long a new peer channel may take to send its hello frame before it is "
        "closed (1008).",
    )
    peer_deadline_ms: int = Field(
        default=DEFAULT_PEER_DEADLINE_MS,
        ge=1,
        le=3_600_000,
        title="Peer call deadline (ms)",
        description="How long a call forwarded to a peer may wait before it is answered "
        "environment-unreachable.",
    )

    def tool_enabled(self, name: str) -> bool:
        """False when the operator switched the operation ``name`` off."""
        return name not in self.disabled_tools

    def release_admitted(self, plugin_id: str, release: str | None) -> bool:
        """True when ``release`` is the release of ``plugin_id`` the operator admitted."""
        return release is not None and self.admitted_plugins.get(plugin_id) == release

    def has_files_grant(self, origin: str) -> bool:
        """True when the operator granted file access to ``origin``."""
        return origin in self.files_grants


def require_writable(policy: Policy) -> None:
    """SAFE mode, the one check: refuse ``read-only-mode`` (403) while ``policy.read_only`` is on.

    Asked by the pipeline for every operation that declares ``writes``, by admission for every
    mutating tool call (seed 003, step 4 of its order) and by the broker for every write a
    plugin asks for — the same rule at each door.
    """
    if policy.read_only:
        raise Refused(Code.READ_ONLY_MODE)
