"""The operator's policy: the switches the host reads afresh for every request (seed 003).

A :class:`Policy` is a snapshot: admission takes the current one per call, so a change made
after a tool was described takes effect on the very next call (a cached description is not an
entitlement). Stored in HOST_DIR as ``policy.json``.
"""

from __future__ import annotations

import re

from pydantic import Field

from core.model import Contract
from core.refusals import Code, Refused

__all__ = [
    "DEFAULT_HELLO_BOUND_MS",
    "DEFAULT_PEER_DEADLINE_MS",
    "Policy",
    "plugin_grantee",
    "plugin_release_key",
    "require_writable",
]

DEFAULT_HELLO_BOUND_MS = 5000
DEFAULT_PEER_DEADLINE_MS = 30_000
_SHA256 = re.compile(r"[0-9a-f]{64}")


def plugin_release_key(plugin_id: str, manifest_sha256: str) -> str:
    """``<id>@<manifest sha256>``: one release of a plugin, named by its bytes (the manifest
    pins every module), as :attr:`Policy.withdrawn_plugins` lists it (issue 29 items 1–2)."""
    return f"{plugin_id}@{manifest_sha256}"


def plugin_grantee(plugin_id: str, manifest_sha256: str) -> str:
    """``plugin:<id>@<manifest sha256>``: how :attr:`Policy.files_grants` names a plugin's
    release (a grant follows the bytes, never the release label; issue 29 item 1)."""
    return f"plugin:{plugin_release_key(plugin_id, manifest_sha256)}"


class Policy(Contract):
    """Operator switches. ``read_only`` is SAFE mode: every write is refused ``read-only-mode``.

    Admission and the broker (seed 003, SPEC §7) read:

    - ``disabled_tools``: operation names switched off (``tool-disabled``); others are on;
    - ``admitted_plugins``: plugin id → the sha256 of the one manifest the operator admitted
      (``plugin-not-admitted`` for any other package, or for a plugin not listed). The manifest
      pins every module, so an admission follows the bytes: another package with the same id
      and release label is another release (issue 29 item 1). A value that is not a sha256 —
      a release label stored by a host before issue 29 — admits nothing: the person admits the
      release again (:meth:`admitted_by_label_only` lets the page say so);
    - ``files_grants``: the grantees (``builtin``, ``plugin:<id>@<manifest sha256>``,
      :func:`plugin_grantee`) the operator granted file access (``files-grant-missing``
      otherwise); the host's own tools have it unless it is removed. An older ``plugin:<id>``
      grant names no bytes and grants nothing;
    - ``withdrawn_plugins``: ``<id>@<manifest sha256>`` of every release the operator withdrew
      (``plugin-withdrawn``), kept with the admission it cancels so a restart or a reload
      cannot bring it back; installing the same bytes again keeps it withdrawn (issue 29
      item 2).

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
        description="Each plugin runs only as the exact package admitted here, named by its "
        "manifest's sha256 (plugin-not-admitted otherwise). An entry holding a release label "
        "(from an older host) admits nothing: admit the release again on the Plugins surface.",
    )
    files_grants: tuple[str, ...] = Field(
        default=("builtin",),
        max_length=1000,
        title="File access grants",
        description="Who may reach project files through the broker: builtin (the host's own "
        "tools) or plugin:<id>@<manifest sha256> (one plugin package, by its bytes).",
    )
    withdrawn_plugins: tuple[str, ...] = Field(
        default=(),
        max_length=1000,
        title="Withdrawn plugin releases",
        description="Plugin packages withdrawn by the operator, as <id>@<manifest sha256>: every "
        "call of their operations is refused with plugin-withdrawn, also after a restart.",
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

    def plugin_admitted(self, plugin_id: str, manifest_sha256: str | None) -> bool:
        """True when the package of ``plugin_id`` whose manifest has sha256 ``manifest_sha256``
        (hex) is the one the operator admitted (issue 29 item 1)."""
        if manifest_sha256 is None or not _SHA256.fullmatch(manifest_sha256):
            return False
        return self.admitted_plugins.get(plugin_id) == manifest_sha256

    def admitted_by_label_only(self, plugin_id: str, release: str) -> bool:
        """True when ``plugin_id`` is listed with the release label ``release`` instead of a
        manifest sha256 — an admission stored before issue 29, which admits nothing now."""
        return self.admitted_plugins.get(plugin_id) == release and not _SHA256.fullmatch(release)

    def plugin_withdrawn(self, plugin_id: str, manifest_sha256: str | None) -> bool:
        """True when the operator withdrew that package of ``plugin_id`` (issue 29 item 2)."""
        if manifest_sha256 is None:
            return False
        return plugin_release_key(plugin_id, manifest_sha256) in self.withdrawn_plugins

    def has_files_grant(self, grantee: str) -> bool:
        """True when the operator granted file access to ``grantee`` (``builtin`` or
        :func:`plugin_grantee`)."""
        return grantee in self.files_grants


def require_writable(policy: Policy) -> None:
    """SAFE mode, the one check: refuse ``read-only-mode`` (403) while ``policy.read_only`` is on.

    Asked by the pipeline for every operation that declares ``writes``, by admission for every
    mutating tool call (seed 003, step 4 of its order) and by the broker for every write a
    plugin asks for — the same rule at each door.
    """
    if policy.read_only:
        raise Refused(Code.READ_ONLY_MODE)
