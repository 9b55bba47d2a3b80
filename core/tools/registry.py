"""The operation registry: built-in tools and plugin operations in one place, each keeping its
origin; and discovery, which describes operations but never admits them (seed 003 "discovery is
not admission", SPEC §7).

- Every entry has an ``origin``: ``builtin`` or ``plugin:<id>``. A name held by one origin can
  never be registered by another (``registration-conflict``); the holder may re-register it
  (a new release), withdraw it (calls then get ``plugin-withdrawn``) or remove it.
- A plugin can never take a name of the host (:class:`ReservedNames`, issue 29 item 3): every
  operation of the host protocol and every built-in tool, and every namespace they use
  (``audit.``, ``host.``, ``plugin.``, ``policy.``, ``tool.`` …), derived from those names —
  ``registration-conflict`` before anything is registered.
- Each entry has a ``descriptorId`` derived from its origin and name. A caller names the
  descriptor it was shown; if the name now belongs to another origin, admission refuses
  ``dispatch-owner-changed`` (:mod:`core.tools.admission`).
- Discovery (:meth:`OperationRegistry.describe`) gives, per operation: JSON Schema of its
  arguments, effect class, receipt rule, whether it needs confirmation, capabilities.
- :meth:`OperationRegistry.offer` picks at most :data:`MAX_OFFERED_SEATS` operations for the
  model-facing surface. That is a limit on context size only: being offered admits nothing, and
  an operation that is not offered is still admitted when called and allowed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field

from core.model import Contract, canonical_json
from core.policy import Policy, plugin_grantee
from core.refusals import Code, Refused
from core.tools.receipts import Rung
from core.vocabulary import SHA256_PATTERN

__all__ = [
    "MAX_OFFERED_SEATS",
    "ORIGIN_PATTERN",
    "Capability",
    "Descriptor",
    "EffectClass",
    "OperationEntry",
    "OperationRegistry",
    "ReservedNames",
    "descriptor_id",
]

MAX_OFFERED_SEATS = 8
ORIGIN_PATTERN = r"^(builtin|plugin:[a-z0-9][a-z0-9_.-]{0,63})$"
NAME_PATTERN = r"^[a-z][a-z0-9_.-]{0,63}$"

EffectClass = Literal["read", "write", "network"]
"""What an operation may do: only read, also write (files or storage), or reach the network."""

Capability = Literal["files", "storage", "network"]
"""A service an operation may ask the broker for (:mod:`core.tools.broker`)."""

_RUNGS_FOR_EFFECT: dict[str, frozenset[str]] = {
    "read": frozenset({"internal-read", "external-read", "trusted-native"}),
    "write": frozenset({"local-write", "external-write", "trusted-native"}),
    "network": frozenset({"external-read", "external-write"}),
}


def descriptor_id(origin: str, name: str) -> str:
    """``d_`` + 24 hex of sha256 over ``{origin, name}``: changes exactly when the owner does."""
    digest = hashlib.sha256(canonical_json({"name": name, "origin": origin})).hexdigest()
    return "d_" + digest[:24]


@dataclass(frozen=True, slots=True)
class OperationEntry:
    """One registered operation.

    ``args_model`` is the strict model its arguments must satisfy (its JSON Schema is what
    discovery shows). ``effect`` is its effect class; ``receipt_rule`` the rung of evidence its
    results carry (:data:`core.tools.receipts.RUNGS`). ``capabilities`` are the services it may ask
    the broker for. ``release`` is required for a plugin and absent for a built-in.
    ``manifest_sha256`` (hex) names a plugin's package by its bytes: admission, the files grant
    and a withdrawal follow it, never the release label (issue 29 item 1).
    ``owns_meta`` marks the one kind of operation that may name paths in ``.voicebox/``.
    ``withdrawn`` is set by :meth:`OperationRegistry.withdraw`.
    """

    name: str
    origin: str
    summary: str
    args_model: type[Contract]
    effect: EffectClass
    receipt_rule: Rung
    needs_confirmation: bool = False
    capabilities: frozenset[Capability] = frozenset()
    release: str | None = None
    manifest_sha256: str | None = None
    owns_meta: bool = False
    withdrawn: bool = False

    @property
    def descriptor_id(self) -> str:
        """See :func:`descriptor_id`."""
        return descriptor_id(self.origin, self.name)

    @property
    def plugin_id(self) -> str | None:
        """The plugin's id for a ``plugin:<id>`` origin, else ``None``."""
        return self.origin.removeprefix("plugin:") if self.origin != "builtin" else None

    @property
    def grantee(self) -> str:
        """Who a files grant must name for this operation: ``builtin``, or the plugin's package
        by its bytes (:func:`core.policy.plugin_grantee`)."""
        if self.plugin_id is None or self.manifest_sha256 is None:
            return self.origin
        return plugin_grantee(self.plugin_id, self.manifest_sha256)

    @property
    def mutating(self) -> bool:
        """True unless the operation only reads: such a call is never blindly retried."""
        return self.effect != "read"

    def describe(self) -> Descriptor:
        """The discovery metadata of this operation. A plugin's summary starts with its origin
        (``[plugin:<id>] …``): whoever reads only names and summaries — the model — still sees
        whose operation it is (issue 29 item 3)."""
        shown = self.summary if self.plugin_id is None else f"[{self.origin}] {self.summary}"
        return Descriptor(
            name=self.name,
            origin=self.origin,
            descriptorId=self.descriptor_id,
            summary=shown,
            argsSchema=self.args_model.model_json_schema(),
            effect=self.effect,
            receiptRule=self.receipt_rule,
            needsConfirmation=self.needs_confirmation,
            capabilities=tuple(sorted(self.capabilities)),
            withdrawn=self.withdrawn,
        )


class Descriptor(Contract):
    """What discovery shows about one operation (a description, never an entitlement)."""

    model_config = ConfigDict(serialize_by_alias=True)

    name: str
    origin: str
    descriptor_id: str = Field(alias="descriptorId")
    summary: str
    args_schema: dict[str, Any] = Field(alias="argsSchema")
    effect: EffectClass
    receipt_rule: Rung = Field(alias="receiptRule")
    needs_confirmation: bool = Field(alias="needsConfirmation")
    capabilities: tuple[Capability, ...]
    withdrawn: bool


def _invalid(reason: str) -> Refused:
    return Refused(Code.REGISTRATION_INVALID, reason)


def _check_entry(entry: OperationEntry) -> None:
    if not re.fullmatch(NAME_PATTERN, entry.name):
        raise _invalid("An operation name is lower-case letters, digits, '.', '_' or '-'.")
    if not re.fullmatch(ORIGIN_PATTERN, entry.origin):
        raise _invalid("An origin is 'builtin' or 'plugin:<id>'.")
    if (entry.origin == "builtin") != (entry.release is None):
        raise _invalid("A plugin operation names its release; a built-in one does not.")
    if (entry.origin == "builtin") != (entry.manifest_sha256 is None) or (
        entry.manifest_sha256 is not None
        and not re.fullmatch(SHA256_PATTERN, entry.manifest_sha256)
    ):
        raise _invalid("A plugin operation names its manifest's sha256; a built-in one does not.")
    if entry.effect not in get_args(EffectClass):
        raise _invalid("Unknown effect class.")
    if entry.receipt_rule not in _RUNGS_FOR_EFFECT[entry.effect]:
        raise _invalid(f"A '{entry.effect}' operation cannot carry '{entry.receipt_rule}'.")
    if not set(entry.capabilities) <= set(get_args(Capability)):
        raise _invalid("Unknown capability.")
    if ("network" in entry.capabilities) != (entry.effect == "network"):
        raise _invalid("Only a 'network' operation declares the network capability.")
    if not isinstance(entry.args_model, type) or not issubclass(entry.args_model, Contract):
        raise _invalid("The argument model must be a strict contract.")


def _spellings(name: str) -> str:
    """``name`` with ``_`` and ``-`` read as ``.`` (``audit_verify`` reads as ``audit.verify``)."""
    return name.replace("_", ".").replace("-", ".")


class ReservedNames:
    """The names no plugin may take (issue 29 item 3), derived from the host's own ``names`` —
    its protocol's operations and its built-in tools, never a hand-kept list.

    Reserved: each of those names, and each namespace — what comes before the first ``.`` of a
    dotted name (``audit.verify`` reserves ``audit``: ``audit.anything``). A name is compared
    with ``_`` and ``-`` read as ``.``, so ``audit_verify`` or ``create.asset`` are taken too.
    """

    def __init__(self, names: Iterable[str]) -> None:
        spelled = {_spellings(n) for n in names}
        self._names = frozenset(spelled)
        self._spaces = frozenset(n.split(".", 1)[0] for n in spelled if "." in n)

    @property
    def namespaces(self) -> frozenset[str]:
        """The reserved namespaces (``audit``, ``host``, ``plugin``, ``policy``, ``tool`` …)."""
        return self._spaces

    def reason(self, name: str) -> str | None:
        """Why ``name`` is the host's (a sentence), or ``None`` when a plugin may take it."""
        spelled = _spellings(name)
        if spelled in self._names:
            return f"'{name}' is an operation of the host itself; a plugin cannot take it."
        space = spelled.split(".", 1)[0]
        if space in self._spaces:
            return f"'{space}.' is the host's own namespace; a plugin's operation cannot use it."
        return None


class OperationRegistry:
    """Built-in and plugin operations by name (see module docstring). Mutable, host-held.

    ``reserved``: the host's names (:class:`ReservedNames`) no plugin operation may take."""

    def __init__(self, reserved: ReservedNames | None = None) -> None:
        self._entries: dict[str, OperationEntry] = {}
        self._reserved = reserved or ReservedNames(())

    def check(self, entry: OperationEntry) -> None:
        """What :meth:`register` would refuse for ``entry``, changing nothing:
        ``registration-invalid`` (422) for an entry that contradicts itself,
        ``registration-conflict`` (409) when another origin holds the name, or when a plugin
        names an operation or namespace of the host (:class:`ReservedNames`)."""
        _check_entry(entry)
        if entry.origin != "builtin":
            reason = self._reserved.reason(entry.name)
            if reason is not None:
                raise Refused(Code.REGISTRATION_CONFLICT, reason)
        held = self._entries.get(entry.name)
        if held is not None and held.origin != entry.origin:
            raise Refused(
                Code.REGISTRATION_CONFLICT,
                f"'{entry.name}' belongs to {held.origin}; {entry.origin} cannot take it.",
            )

    def add(self, entry: OperationEntry) -> None:
        """Register ``entry`` (or replace it, when the same origin holds the name); refuses as
        :meth:`check`. Describes nothing: its arguments' JSON Schema is made when discovery
        asks (issue 34, cold boot: the host registers its tools before ``ready``)."""
        self.check(entry)
        self._entries[entry.name] = replace(entry, withdrawn=False)

    def register(self, entry: OperationEntry) -> Descriptor:
        """:meth:`add`, then ``entry``'s :class:`Descriptor`."""
        self.add(entry)
        return self._entries[entry.name].describe()

    def _held_by(self, name: str, origin: str) -> OperationEntry:
        held = self._entries.get(name)
        if held is None:
            raise Refused(Code.TOOL_UNKNOWN)
        if held.origin != origin:
            raise Refused(Code.REGISTRATION_CONFLICT, f"'{name}' belongs to {held.origin}.")
        return held

    def withdraw(self, name: str, origin: str) -> None:
        """Mark ``name`` withdrawn by its holder; it keeps the name, calls get
        ``plugin-withdrawn``. Refuses ``tool-unknown`` or ``registration-conflict``."""
        held = self._held_by(name, origin)
        self._entries[name] = replace(held, withdrawn=True)

    def remove(self, name: str, origin: str) -> None:
        """Drop ``name`` entirely (its holder only), freeing it for any origin."""
        self._held_by(name, origin)
        del self._entries[name]

    def get(self, name: str) -> OperationEntry | None:
        """The entry registered as ``name`` now, or ``None``."""
        return self._entries.get(name)

    def describe(self) -> tuple[Descriptor, ...]:
        """Discovery: every operation's metadata, by name."""
        return tuple(self._entries[n].describe() for n in sorted(self._entries))

    def offer(
        self, policy: Policy, *, prefer: tuple[str, ...] = (), limit: int = MAX_OFFERED_SEATS
    ) -> tuple[Descriptor, ...]:
        """At most ``limit`` (≤ 8) operations for the model-facing surface.

        Operations the current ``policy`` would refuse outright (switched off, withdrawn, a
        plugin release not admitted) are left out. Names in ``prefer`` come first, in that
        order; then built-ins, then plugin operations, each by name. A context limit only.
        """
        limit = max(0, min(limit, MAX_OFFERED_SEATS))

        def _live(e: OperationEntry) -> bool:
            if e.withdrawn or not policy.tool_enabled(e.name):
                return False
            if e.plugin_id is None:
                return True
            sha = e.manifest_sha256
            return policy.plugin_admitted(e.plugin_id, sha) and not policy.plugin_withdrawn(
                e.plugin_id, sha
            )

        rank = {name: i for i, name in enumerate(prefer)}
        chosen = sorted(
            (e for e in self._entries.values() if _live(e)),
            key=lambda e: (rank.get(e.name, len(rank)), e.origin != "builtin", e.name),
        )
        return tuple(e.describe() for e in chosen[:limit])
