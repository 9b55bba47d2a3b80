"""The operator's policy: the switches the host reads afresh for every request (seed 003).

A :class:`Policy` is a snapshot: admission takes the current one per call, so a change made
after a tool was described takes effect on the very next call (a cached description is not an
entitlement). Stored in HOST_DIR as ``policy.json``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field, ValidationError

from core.model import Contract
from core.ports import HostState
from core.refusals import Code, Refused
from core.vocabulary import SHA256_PATTERN

if TYPE_CHECKING:
    from core.audit import AuditLog

__all__ = [
    "DEFAULT_HELLO_BOUND_MS",
    "DEFAULT_PEER_DEADLINE_MS",
    "POLICY_DAMAGE_RULE",
    "POLICY_NAME",
    "LoadedPolicy",
    "Policy",
    "load_policy",
    "plugin_grantee",
    "plugin_release_key",
    "require_writable",
    "say_policy_damage",
]

POLICY_NAME = "policy.json"
"""The policy's document in HOST_DIR."""

log = logging.getLogger("voicebox.policy")

DEFAULT_HELLO_BOUND_MS = 5000
DEFAULT_PEER_DEADLINE_MS = 30_000
_SHA256 = re.compile(SHA256_PATTERN)


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

    The pipeline's gate (:meth:`core.host.pipeline.Host._gates`) asks it for every operation
    that declares ``writes`` — a page's write, a built-in tool's operation, a plugin call that
    may write (:meth:`core.host.tools.ToolBox.plugin_operation`) and each write a plugin asked
    for (through ``file.write``); admission asks it once more, early, on its snapshot, so a
    mutating tool call is refused before its arguments or a person's confirmation are asked
    for (SPEC §7, step 4 of :data:`core.tools.admission.ADMISSION_ORDER`). Nothing else
    decides SAFE mode: the broker leaves it to the write's gate (issue 35 item 2), and the
    environment server's own writes (fenced commands, a runner's merge and landing) call
    this too.
    """
    if policy.read_only:
        raise Refused(Code.READ_ONLY_MODE)


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    """What :func:`load_policy` found: the policy to use and, when ``policy.json`` could not be
    used, ``damage`` — one sentence saying why and that the host is in SAFE mode (no secret:
    the policy holds switches, names and bounds only, and the sentence names at most one of
    its field names). ``damage`` is ``None`` for a readable policy or an absent one."""

    policy: Policy
    damage: str | None = None


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = first.get("loc") or ()
    if first.get("type") in ("json_invalid", "json_type"):
        return "is not valid JSON"
    field = loc[0] if loc else None
    if first.get("type") == "extra_forbidden":
        return "holds a field the policy does not have"
    if isinstance(field, str) and field in Policy.model_fields:
        return f"has a value of {field} out of its bounds or of the wrong kind"
    return "is not a policy"


def _damaged(why: str) -> LoadedPolicy:
    sentence = (
        f"{POLICY_NAME} {why}, so this host is in SAFE mode (read-only): every write is "
        "refused until the policy is saved again (Settings in the page; voicebox-env policy "
        "--safe off on an environment server)."
    )
    return LoadedPolicy(Policy(read_only=True), sentence)


async def load_policy(state: HostState) -> LoadedPolicy:
    """The operator's policy from HOST_DIR ``policy.json`` — the one reader for every placement
    (browser host, environment worker, environment server, ``voicebox-env policy``; issue 29
    item 11, seed 003: a damaged policy fails closed).

    Absent: the defaults (:class:`Policy`). Readable and valid: that policy. Anything else — a
    document the storage cannot give back (a seal that does not open, an I/O error), empty
    bytes, text that is not JSON, a value out of its bounds, an unknown field — is SAFE mode:
    ``Policy(read_only=True)`` with :attr:`LoadedPolicy.damage` saying why. Never raises and
    never logs (a server reads the policy for every request); the caller shows ``damage`` in
    its UI (``host.info`` ``safe_reason``) and says it once in its log and audit
    (:func:`say_policy_damage`).
    """
    try:
        raw = await state.load(POLICY_NAME)
    except Exception:  # a storage failure of any kind: fail closed, never open
        return _damaged("could not be read from storage")
    if raw is None:
        return LoadedPolicy(Policy())
    try:
        return LoadedPolicy(Policy.model_validate_json(raw))
    except ValidationError as exc:
        return _damaged(_why(exc))
    except ValueError:
        return _damaged("is not a policy")


POLICY_DAMAGE_RULE = "policy-unreadable"
"""The audit rule of the record that says the host went to SAFE mode over a damaged policy."""


async def say_policy_damage(audit: AuditLog | None, loaded: LoadedPolicy) -> None:
    """Say :attr:`LoadedPolicy.damage` in the log (a warning on ``voicebox.policy``) and in
    ``audit`` (skipped when ``None``): actor
    ``host``, op ``policy.load``, decision ``recorded``, rule :data:`POLICY_DAMAGE_RULE`, the
    sentence in ``details.reason``. Nothing when the policy was readable. A failing audit does
    not stop the host (the warning is already logged)."""
    if loaded.damage is None:
        return
    log.warning("%s", loaded.damage)
    if audit is None:
        return
    try:
        await audit.append(
            actor="host",
            op="policy.load",
            decision="recorded",
            rule=POLICY_DAMAGE_RULE,
            details={"reason": loaded.damage},
        )
    except Exception:
        log.exception("could not audit the damaged policy")
