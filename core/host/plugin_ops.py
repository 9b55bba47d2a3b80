"""The operator's plugin controls: install, list, grant, withdraw, uninstall (issue 16; seed
003; docs/plugins.md). Calling a plugin operation is ``tool.call`` (:mod:`core.host.tools`).

- ``plugin.install`` — a person's gesture; the package is the message body: a ``.zip``, or a
  folder's files concatenated with ``folder`` naming each one's path and size
  (:class:`PackageArgs`; split by :func:`core.tools.plugin_manifest.folder_files`). It is
  read and pin-checked (:func:`core.tools.plugin_manifest.read_package`), then every operation
  is registered under origin ``plugin:<id>``, all or none (``registration-conflict`` when a
  name is held by another origin — a built-in or another plugin). Installing admits nothing.
  A different release of an installed id replaces it and drops the old admission and files
  grant: an upgrade needs its own admission.
- ``plugin.inspect`` — what installing a package would register (the dialog shown before the
  gesture), with the install's refusals, changing nothing;
- ``plugin.list`` — every installed plugin with its operations, effect, receipt rung,
  confirmation, each capability's reason, whether its release is admitted and files granted.
- ``plugin.grant`` — a person's gesture: admit (or un-admit) the installed release, give (or
  remove) the files grant of its origin. Stored in the operator's policy (``policy.json``).
- ``plugin.withdraw`` — a person's gesture: every operation of the plugin keeps its name and
  its calls are refused ``plugin-withdrawn`` (also a call admitted before and still running).
- ``plugin.uninstall`` — a person's gesture: operations, package, admission and grant removed.

Every one of them is audited (the pipeline), with the plugin's id and release.
"""

from __future__ import annotations

import json

from pydantic import Field

from core.host.operations import Call, Outcome
from core.host.settings_ops import POLICY_NAME
from core.host.tools import ToolBox
from core.model import Contract, NoArgs, canonical_json
from core.policy import Policy
from core.refusals import Code, Refused
from core.tools.plugin_manifest import (
    MAX_MODULE_BYTES,
    MAX_PACKAGE_FILES,
    PLUGIN_ID,
    PluginPackage,
    folder_files,
    read_package,
)

__all__ = ["PackageArgs", "PackageFile", "PluginGrantArgs", "PluginInfo", "PluginList", "PluginRef"]


class PackageFile(Contract):
    """One file of a package sent as a folder: its path relative to the picked folder's parent
    (``<folder>/<name>`` or ``<name>``) and its size in bytes. The path's rule is applied by
    :func:`core.tools.plugin_manifest.folder_files` (``archive-entry-*`` codes)."""

    path: str = Field(min_length=1, max_length=255)
    size: int = Field(ge=0, le=MAX_MODULE_BYTES)


class PackageArgs(Contract):
    """``plugin.inspect`` / ``plugin.install``: no ``folder`` — the body is a ``.zip``; with
    ``folder`` — the body is those files' bytes concatenated in that order (at most a manifest
    and eight modules; more is ``message-malformed``, as for any argument outside its model)."""

    folder: list[PackageFile] | None = Field(
        default=None, min_length=1, max_length=MAX_PACKAGE_FILES
    )


def _package(call: Call[PackageArgs]) -> PluginPackage:
    body = call.body or b""
    if call.args.folder is None:
        return read_package(body)
    return read_package(folder_files([(f.path, f.size) for f in call.args.folder], body))


class CapabilityInfo(Contract):
    """A capability an operation declares: what (``read``/``write``), through which argument,
    and the reason shown to the person."""

    kind: str
    arg: str
    reason: str


class OperationInfo(Contract):
    """One plugin operation as the install dialog and the Plugins surface show it."""

    model_config = Contract.model_config | {"serialize_by_alias": True}

    name: str
    summary: str
    effect: str
    receipt: str
    confirm: bool
    capabilities: list[CapabilityInfo]
    time_ms: int = Field(alias="timeMs")
    memory_bytes: int = Field(alias="memoryBytes")
    withdrawn: bool


class PluginInfo(Contract):
    """One installed plugin and the operator's decisions about it."""

    model_config = Contract.model_config | {"serialize_by_alias": True}

    id: str
    release: str
    title: str
    publisher: str
    summary: str
    origin: str
    manifest_sha256: str = Field(alias="manifestSha256")
    admitted: bool
    files_granted: bool = Field(alias="filesGranted")
    operations: list[OperationInfo]


class PluginList(Contract):
    """Every installed plugin, by id."""

    plugins: list[PluginInfo]


class PluginRef(Contract):
    """Names one installed plugin."""

    id: str = Field(pattern=PLUGIN_ID)


class PluginGrantArgs(PluginRef):
    """``plugin.grant``: admit the installed release (or not), grant files (or not)."""

    admit: bool
    files: bool


def _tools(call: Call[object]) -> ToolBox:
    tools = call.host.tools
    assert isinstance(tools, ToolBox)
    return tools


def _info(call: Call[object], package: PluginPackage, *, installed: bool = True) -> PluginInfo:
    manifest, policy = package.manifest, call.ctx.policy
    registry = _tools(call).registry
    operations = []
    for op in manifest.operations:
        held = registry.get(op.name) if installed else None
        caps = [CapabilityInfo(kind="read", arg=r.arg, reason=r.reason) for r in op.reads]
        caps += [CapabilityInfo(kind="write", arg=w.arg, reason=w.reason) for w in op.writes]
        operations.append(
            OperationInfo(
                name=op.name,
                summary=op.summary,
                effect=op.effect,
                receipt=op.receipt,
                confirm=op.confirm,
                capabilities=caps,
                timeMs=op.limits.time_ms,
                memoryBytes=op.limits.memory_bytes,
                withdrawn=installed and (held is None or held.withdrawn),
            )
        )
    return PluginInfo(
        id=manifest.id,
        release=manifest.release,
        title=manifest.title,
        publisher=manifest.publisher,
        summary=manifest.summary,
        origin=manifest.origin,
        manifestSha256=package.manifest_sha256,
        admitted=policy.release_admitted(manifest.id, manifest.release),
        filesGranted=policy.has_files_grant(manifest.origin),
        operations=operations,
    )


async def _set_policy(
    call: Call[object], plugin_id: str, *, admit: str | None, files: bool
) -> None:
    """Store the policy with ``plugin_id`` admitted at release ``admit`` (``None``: not
    admitted) and its origin's files grant as ``files``."""
    async with call.ctx.state_lock:
        current = call.ctx.policy.model_dump(mode="json")
        admitted = {k: v for k, v in current["admitted_plugins"].items() if k != plugin_id}
        if admit is not None:
            admitted[plugin_id] = admit
        origin = f"plugin:{plugin_id}"
        grants = [g for g in current["files_grants"] if g != origin]
        if files:
            grants.append(origin)
        merged = current | {"admitted_plugins": admitted, "files_grants": grants}
        new = Policy.model_validate_json(json.dumps(merged))
        if new != call.ctx.policy:
            await call.ctx.state.store(POLICY_NAME, canonical_json(new.model_dump(mode="json")))
            call.ctx.policy = new


def _installed(call: Call[object], plugin_id: str) -> PluginPackage:
    package = _tools(call).plugins.get(plugin_id)
    if package is None:
        raise Refused(Code.TOOL_UNKNOWN, "No plugin by that id is installed.", field="id")
    return package


async def plugin_install(call: Call[PackageArgs]) -> Outcome:
    """Refuses the package reader's codes (``plugin-pin-mismatch``, ``registration-invalid``,
    ``archive-*``, ``file-too-large``) and ``registration-conflict``; nothing is registered,
    stored or granted on a refusal. A folder and the zip of the same files install alike."""
    package = _package(call)
    shelf = _tools(call).plugins
    await shelf.load()
    old = await shelf.install(package)
    manifest = package.manifest
    if old is not None and old.manifest.release != manifest.release:
        await _set_policy(call, manifest.id, admit=None, files=False)
    return Outcome(
        _info(call, package),
        rule="plugin-installed",
        details={
            "plugin": manifest.id,
            "release": manifest.release,
            "manifestSha256": package.manifest_sha256,
            "operations": ",".join(op.name for op in manifest.operations),
            "replaced": None if old is None else old.manifest.release,
        },
    )


async def plugin_inspect(call: Call[PackageArgs]) -> Outcome:
    """What installing the package (the body) would register, for the install dialog: the
    same reading and refusals as ``plugin.install`` (including ``registration-conflict`` for a
    name another origin holds), nothing registered or stored."""
    package = _package(call)
    registry = _tools(call).registry
    await _tools(call).plugins.load()
    for op in package.manifest.operations:
        held = registry.get(op.name)
        if held is not None and held.origin != package.manifest.origin:
            raise Refused(
                Code.REGISTRATION_CONFLICT,
                f"'{op.name}' belongs to {held.origin}; {package.manifest.origin} cannot take it.",
            )
    return Outcome(_info(call, package, installed=False))


async def plugin_list(call: Call[NoArgs]) -> Outcome:
    """Never refuses."""
    shelf = _tools(call).plugins
    await shelf.load()
    return Outcome(PluginList(plugins=[_info(call, p) for p in shelf.all()]))


async def plugin_grant(call: Call[PluginGrantArgs]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed."""
    await _tools(call).plugins.load()
    package = _installed(call, call.args.id)
    release = package.manifest.release
    await _set_policy(
        call, call.args.id, admit=release if call.args.admit else None, files=call.args.files
    )
    return Outcome(
        _info(call, package),
        rule="plugin-granted",
        details={
            "plugin": call.args.id,
            "release": release,
            "admitted": call.args.admit,
            "files": call.args.files,
        },
    )


async def plugin_withdraw(call: Call[PluginRef]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed."""
    shelf = _tools(call).plugins
    await shelf.load()
    package = shelf.withdraw(call.args.id)
    return Outcome(
        _info(call, package),
        rule="plugin-withdrawn",
        details={"plugin": call.args.id, "release": package.manifest.release},
    )


async def plugin_uninstall(call: Call[PluginRef]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed."""
    shelf = _tools(call).plugins
    await shelf.load()
    package = await shelf.uninstall(call.args.id)
    await _set_policy(call, call.args.id, admit=None, files=False)
    return Outcome(
        PluginList(plugins=[_info(call, p) for p in shelf.all()]),
        rule="plugin-uninstalled",
        details={"plugin": call.args.id, "release": package.manifest.release},
    )
