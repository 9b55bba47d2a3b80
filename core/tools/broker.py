"""The broker: the host decides every capability request an admitted operation makes
(seed 003 "the host decides each capability request", SPEC §7).

An operation running for the host (a plugin, or a sandboxed tool) asks for a service with a
small request object: ``{"kind": "files", "action": "write", "path": "notes/a.md"}``, ``{"kind":
"storage", ...}`` or ``{"kind": "network", ...}``. :func:`decide` answers it on a policy snapshot
taken for that request, in this order:

1. the request carries its own grant object (``grant``/``grants``) .. ``grant-field-refused``
2. the request has the closed shape below .......................... ``message-malformed``
3. the operation declared that capability ........................... ``capability-undeclared``
4. the action stays within the operation's effect class ............. ``effect-class-exceeded``
5. network: no egress in the E1 placement ........................... ``network-egress-refused``
6. files: the operator granted file access to the operation's origin
   (a plugin's: to its package, by manifest sha256 — issue 29 item 1) . ``files-grant-missing``
7. files: the path is inside the project root (:func:`core.paths.parse_path`; ``.voicebox/``
   only for the operation that owns it) ............. ``path-outside-root``/``path-reserved``/…

The answer is an access value (:class:`FilesAccess`, :class:`StorageAccess`) that the host
then performs itself; the broker does no I/O. Nothing a plugin says in a result widens a grant:
grants come only from :class:`~core.policy.Policy`.

SAFE mode is not the broker's question (issue 35 item 2): a write it allows is performed by an
operation that ``writes`` (a plugin's, through ``file.write``), and the pipeline's gate refuses
that in SAFE mode (:func:`core.policy.require_writable`, the one check), as it refuses every
other write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from core.model import Contract
from core.paths import ProjectPath, parse_path
from core.policy import Policy
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.tools.registry import OperationEntry

__all__ = [
    "BROKER_ORDER",
    "Broker",
    "FilesAccess",
    "FilesRequest",
    "NetworkRequest",
    "StorageAccess",
    "StorageRequest",
    "decide",
]

BROKER_ORDER: tuple[Code, ...] = (
    Code.GRANT_FIELD_REFUSED,
    Code.MESSAGE_MALFORMED,
    Code.CAPABILITY_UNDECLARED,
    Code.EFFECT_CLASS_EXCEEDED,
    Code.NETWORK_EGRESS_REFUSED,
    Code.FILES_GRANT_MISSING,
    Code.PATH_OUTSIDE_ROOT,
)
"""The broker's refusal codes in the order they are checked (path codes come last)."""

_GRANT_KEYS = frozenset({"grant", "grants"})
_WRITES = frozenset({"write", "delete", "put"})
MAX_REQUEST_BYTES = 64 << 10


class FilesRequest(Contract):
    """Read, list, write or delete at a project-relative ``path`` (bytes travel beside it)."""

    kind: Literal["files"]
    action: Literal["read", "list", "write", "delete"]
    path: str = Field(max_length=5000)


class StorageRequest(Contract):
    """Get, put or delete ``key`` in the operation's own private storage (not the project)."""

    kind: Literal["storage"]
    action: Literal["get", "put", "delete"]
    key: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,128}$")]


class NetworkRequest(Contract):
    """Fetch ``url`` with ``method``. Always refused in E1 (``network-egress-refused``)."""

    kind: Literal["network"]
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
    url: str = Field(max_length=2048)


_REQUEST = TypeAdapter(
    Annotated[FilesRequest | StorageRequest | NetworkRequest, Field(discriminator="kind")],
    config=ConfigDict(defer_build=True),  # built on first use (issue 34, cold boot)
)
_NAMES = known_names(FilesRequest, StorageRequest, NetworkRequest)


@dataclass(frozen=True, slots=True)
class FilesAccess:
    """Permission to perform ``action`` at ``path`` in the call's project, once."""

    action: Literal["read", "list", "write", "delete"]
    path: ProjectPath

    @property
    def writes(self) -> bool:
        """True for ``write`` and ``delete``."""
        return self.action in _WRITES


@dataclass(frozen=True, slots=True)
class StorageAccess:
    """Permission to perform ``action`` on ``key`` in the storage of ``namespace`` (an origin)."""

    action: Literal["get", "put", "delete"]
    namespace: str
    key: str

    @property
    def writes(self) -> bool:
        """True for ``put`` and ``delete``."""
        return self.action in _WRITES


def _parse(raw: object) -> FilesRequest | StorageRequest | NetworkRequest:
    if isinstance(raw, dict) and any(
        isinstance(k, str) and k.casefold() in _GRANT_KEYS for k in raw
    ):
        raise Refused(Code.GRANT_FIELD_REFUSED, field="grant")
    try:
        text = json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise Refused(Code.MESSAGE_MALFORMED, "The request is not JSON data.") from None
    if len(text) > MAX_REQUEST_BYTES:
        raise Refused(Code.MESSAGE_TOO_LARGE)
    try:
        return _REQUEST.validate_json(text)
    except ValidationError as exc:
        raise invalid_input(exc, _NAMES, code=Code.MESSAGE_MALFORMED) from None


def decide(entry: OperationEntry, policy: Policy, raw: object) -> FilesAccess | StorageAccess:
    """Decide one capability request of the operation ``entry`` under ``policy``.

    ``raw`` is the request as the operation sent it (a JSON value). Returns the access to
    perform, or raises the first refusal of :data:`BROKER_ORDER` (see module docstring).
    """
    request = _parse(raw)
    if request.kind not in entry.capabilities:
        raise Refused(
            Code.CAPABILITY_UNDECLARED, f"The operation did not declare '{request.kind}'."
        )
    writes = isinstance(request, FilesRequest | StorageRequest) and request.action in _WRITES
    if (writes and entry.effect == "read") or (
        isinstance(request, NetworkRequest) and entry.effect != "network"
    ):
        raise Refused(Code.EFFECT_CLASS_EXCEEDED)
    if isinstance(request, NetworkRequest):
        raise Refused(Code.NETWORK_EGRESS_REFUSED)
    if isinstance(request, StorageRequest):
        return StorageAccess(request.action, entry.origin, request.key)
    if not policy.has_files_grant(entry.grantee):
        raise Refused(Code.FILES_GRANT_MISSING)
    return FilesAccess(request.action, parse_path(request.path, allow_meta=entry.owns_meta))


class Broker:
    """Decides requests for admitted operations, on a fresh policy snapshot per request.

    ``policy`` is called once per :meth:`decide`.
    """

    def __init__(self, policy: Callable[[], Policy]) -> None:
        self._policy = policy

    def decide(self, entry: OperationEntry, raw: object) -> FilesAccess | StorageAccess:
        """See :func:`decide`."""
        return decide(entry, self._policy(), raw)
