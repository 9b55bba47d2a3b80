"""The operator's plugin controls: install, list, grant, withdraw, uninstall (issue 16; seed
003; docs/plugins.md). Calling a plugin operation is ``tool.call`` (:mod:`core.host.tools`).

- ``plugin.install`` — a person's gesture; the package is the message body: a ``.zip``, or a
  folder's files concatenated with ``folder`` naming each one's path and size
  (:class:`PackageArgs`; split by :func:`core.tools.plugin_manifest.folder_files`). It is
  read and pin-checked (:func:`core.tools.plugin_manifest.read_package`), then every operation
  is registered under origin ``plugin:<id>``, all or none (``registration-conflict`` when a
  name is held by another origin — a built-in or another plugin — or is a name of the host:
  :class:`core.tools.registry.ReservedNames`). Installing admits nothing. Any other package of
  an installed id — a new release, or other bytes under the same release label — replaces it
  and drops the old admission and files grant: admission and grant follow the manifest's
  sha256 (which pins every module), never the label (issue 29 item 1). The same bytes again
  keep their admission, grant and withdrawal.
- ``plugin.inspect`` — what installing a package would register (the dialog shown before the
  gesture), with the install's refusals, changing nothing; ``replaces`` names the installed
  package of the same id it would replace, and whether that one is admitted, granted files or
  withdrawn (so the dialog can say an admission is being replaced);
- ``plugin.list`` — every installed plugin with its operations, effect, receipt rung,
  confirmation, each capability's reason, whether its release is admitted and files granted.
- ``plugin.grant`` — a person's gesture: admit (or un-admit) the installed package, give (or
  remove) its files grant — both bound to its manifest's sha256. Stored in the operator's
  policy (``policy.json``).
- ``plugin.withdraw`` — a person's gesture: every operation of the plugin keeps its name and
  its calls are refused ``plugin-withdrawn`` (also a call admitted before and still running).
  Stored in the policy with the admission it cancels (``withdrawn_plugins``,
  ``<id>@<manifest sha256>``), so it lasts across a restart or a reload (issue 29 item 2).
- ``plugin.uninstall`` — a person's gesture: operations, package, admission, grant and
  withdrawal removed (installing it again starts from nothing: not admitted, no grant).

Every one of them is audited (the pipeline), with the plugin's id and release.
"""

from __future__ import annotations

import json

from pydantic import ConfigDict, Field

from core.host.operations import Call, Outcome
from core.host.settings_ops import POLICY_NAME
from core.host.tools import ToolBox
from core.model import Contract, NoArgs, canonical_json
from core.policy import Policy, plugin_grantee, plugin_release_key
from core.refusals import Code, Refused
from core.tools.plugin_manifest import (
    MAX_MODULE_BYTES,
    MAX_PACKAGE_FILES,
    PLUGIN_ID,
    PluginPackage,
    folder_files,
    read_package,
)
from core.tools.plugin_paths import file_arg, path_args

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
    """One plugin operation as the install dialog and the Plugins surface show it.
    ``pathArgs``: the arguments that take a project path (the page offers its file picker for
    them); ``fileArg``: the one "Run with…" on the Files surface fills with the file, ``None``
    when the operation reads no file (:mod:`core.tools.plugin_paths`; issue 33 item 5)."""

    model_config = ConfigDict(serialize_by_alias=True)

    name: str
    summary: str
    effect: str
    receipt: str
    confirm: bool
    capabilities: list[CapabilityInfo]
    time_ms: int = Field(alias="timeMs")
    memory_bytes: int = Field(alias="memoryBytes")
    withdrawn: bool
    path_args: list[str] = Field(default_factory=list, alias="pathArgs")
    file_arg: str | None = Field(default=None, alias="fileArg")


class ReplacedInfo(Contract):
    """The installed package of the same id that installing another would replace, and what
    the operator had decided about it: none of it carries over to other bytes (issue 29
    item 1)."""

    model_config = ConfigDict(serialize_by_alias=True)

    release: str
    manifest_sha256: str = Field(alias="manifestSha256")
    same_bytes: bool = Field(alias="sameBytes")
    admitted: bool
    files_granted: bool = Field(alias="filesGranted")
    withdrawn: bool


class PluginInfo(Contract):
    """One installed plugin (or, from ``plugin.inspect``, a package about to be) and the
    operator's decisions about it, all bound to its manifest's sha256. ``readmit``: the policy
    still lists it by release label only (a host before issue 29), which admits nothing;
    ``withdrawn``: the operator withdrew this package; ``replaces``: the installed package of
    the same id this one would replace (``plugin.inspect`` only)."""

    model_config = ConfigDict(serialize_by_alias=True)

    id: str
    release: str
    title: str
    publisher: str
    summary: str
    origin: str
    manifest_sha256: str = Field(alias="manifestSha256")
    admitted: bool
    readmit: bool = False
    files_granted: bool = Field(alias="filesGranted")
    withdrawn: bool = False
    operations: list[OperationInfo]
    replaces: ReplacedInfo | None = None


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


def _tools(call: Call[Contract]) -> ToolBox:
    tools = call.host.tools
    assert isinstance(tools, ToolBox)
    return tools


def _info(call: Call[Contract], package: PluginPackage, *, installed: bool = True) -> PluginInfo:
    manifest, policy, sha = package.manifest, call.ctx.policy, package.manifest_sha256
    withdrawn = policy.plugin_withdrawn(manifest.id, sha)
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
                withdrawn=withdrawn or (installed and (held is None or held.withdrawn)),
                pathArgs=list(path_args(op)),
                fileArg=file_arg(op),
            )
        )
    return PluginInfo(
        id=manifest.id,
        release=manifest.release,
        title=manifest.title,
        publisher=manifest.publisher,
        summary=manifest.summary,
        origin=manifest.origin,
        manifestSha256=sha,
        admitted=policy.plugin_admitted(manifest.id, sha),
        readmit=policy.admitted_by_label_only(manifest.id, manifest.release),
        filesGranted=policy.has_files_grant(plugin_grantee(manifest.id, sha)),
        withdrawn=withdrawn,
        operations=operations,
    )


def _replaced(call: Call[Contract], package: PluginPackage) -> ReplacedInfo | None:
    old = _tools(call).plugins.get(package.manifest.id)
    if old is None:
        return None
    info = _info(call, old)
    return ReplacedInfo(
        release=info.release,
        manifestSha256=info.manifest_sha256,
        sameBytes=info.manifest_sha256 == package.manifest_sha256,
        admitted=info.admitted,
        filesGranted=info.files_granted,
        withdrawn=info.withdrawn,
    )


async def _set_policy(
    call: Call[Contract],
    plugin_id: str,
    sha: str | None,
    *,
    admit: bool = False,
    files: bool = False,
    withdraw: bool = False,
    forget_withdrawals: bool = False,
) -> None:
    """Store the policy with ``plugin_id``'s admission and files grant bound to the package
    whose manifest sha256 is ``sha``: admitted when ``admit``, granted files when ``files``.
    Every other admission or grant of ``plugin_id`` is dropped (neither carries over to other
    bytes). ``withdraw``: record that package as withdrawn; ``forget_withdrawals``: drop every
    withdrawal of ``plugin_id`` (uninstall). ``sha`` ``None``: nothing admitted or granted."""
    async with call.ctx.state_lock:
        current = call.ctx.policy.model_dump(mode="json")
        admitted = {k: v for k, v in current["admitted_plugins"].items() if k != plugin_id}
        if admit and sha is not None:
            admitted[plugin_id] = sha
        origin = f"plugin:{plugin_id}"
        grants = [
            g for g in current["files_grants"] if g != origin and not g.startswith(origin + "@")
        ]
        if files and sha is not None:
            grants.append(plugin_grantee(plugin_id, sha))
        withdrawn = list(current["withdrawn_plugins"])
        if forget_withdrawals:
            withdrawn = [w for w in withdrawn if not w.startswith(plugin_id + "@")]
        if withdraw and sha is not None and plugin_release_key(plugin_id, sha) not in withdrawn:
            withdrawn.append(plugin_release_key(plugin_id, sha))
        merged = current | {
            "admitted_plugins": admitted,
            "files_grants": grants,
            "withdrawn_plugins": withdrawn,
        }
        new = Policy.model_validate_json(json.dumps(merged))
        if new != call.ctx.policy:
            await call.ctx.state.store(POLICY_NAME, canonical_json(new.model_dump(mode="json")))
            call.ctx.policy = new


def _installed(call: Call[Contract], plugin_id: str) -> PluginPackage:
    package = _tools(call).plugins.get(plugin_id)
    if package is None:
        raise Refused(Code.TOOL_UNKNOWN, "No plugin by that id is installed.", field="id")
    return package


async def plugin_install(call: Call[PackageArgs]) -> Outcome:
    """Refuses the package reader's codes (``plugin-pin-mismatch``, ``registration-invalid``,
    ``archive-*``, ``file-too-large``) and ``registration-conflict``; nothing is registered,
    stored or granted on a refusal. A folder and the zip of the same files install alike.
    Other bytes than the installed package's drop its admission and files grant (issue 29
    item 1); the same bytes keep them, and a withdrawn package stays withdrawn."""
    package = _package(call)
    shelf = _tools(call).plugins
    await shelf.load()
    replaces = _replaced(call, package)
    old = await shelf.install(package)
    manifest = package.manifest
    if old is not None and old.manifest_sha256 != package.manifest_sha256:
        await _set_policy(call, manifest.id, None)
    return Outcome(
        _info(call, package).model_copy(update={"replaces": replaces}),
        rule="plugin-installed",
        details={
            "plugin": manifest.id,
            "release": manifest.release,
            "manifestSha256": package.manifest_sha256,
            "operations": ",".join(op.name for op in manifest.operations),
            "replaced": None if old is None else old.manifest.release,
            "replacedSha256": None if old is None else old.manifest_sha256,
        },
    )


async def plugin_inspect(call: Call[PackageArgs]) -> Outcome:
    """What installing the package (the body) would register, for the install dialog: the
    same reading and refusals as ``plugin.install`` (including ``registration-conflict`` for a
    name another origin or the host holds), nothing registered or stored; ``replaces`` says
    which installed package of the same id it would replace and what was decided about it."""
    package = _package(call)
    shelf = _tools(call).plugins
    await shelf.load()
    shelf.check(package)
    info = _info(call, package, installed=False)
    return Outcome(info.model_copy(update={"replaces": _replaced(call, package)}))


async def plugin_list(call: Call[NoArgs]) -> Outcome:
    """Never refuses."""
    shelf = _tools(call).plugins
    await shelf.load()
    return Outcome(PluginList(plugins=[_info(call, p) for p in shelf.all()]))


async def plugin_grant(call: Call[PluginGrantArgs]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed. Admission and grant name the installed
    package's manifest sha256."""
    await _tools(call).plugins.load()
    package = _installed(call, call.args.id)
    sha = package.manifest_sha256
    await _set_policy(call, call.args.id, sha, admit=call.args.admit, files=call.args.files)
    return Outcome(
        _info(call, package),
        rule="plugin-granted",
        details={
            "plugin": call.args.id,
            "release": package.manifest.release,
            "manifestSha256": sha,
            "admitted": call.args.admit,
            "files": call.args.files,
        },
    )


async def plugin_withdraw(call: Call[PluginRef]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed. Withdraws in memory first (the calls
    are refused at once), then stores the withdrawal in the policy beside the admission it
    cancels, bound to the same manifest sha256 (issue 29 item 2)."""
    shelf = _tools(call).plugins
    await shelf.load()
    package = shelf.withdraw(call.args.id)
    sha, policy = package.manifest_sha256, call.ctx.policy
    await _set_policy(
        call,
        call.args.id,
        sha,
        admit=policy.plugin_admitted(call.args.id, sha),
        files=policy.has_files_grant(plugin_grantee(call.args.id, sha)),
        withdraw=True,
    )
    return Outcome(
        _info(call, package),
        rule="plugin-withdrawn",
        details={
            "plugin": call.args.id,
            "release": package.manifest.release,
            "manifestSha256": sha,
        },
    )


async def plugin_uninstall(call: Call[PluginRef]) -> Outcome:
    """Refuses ``tool-unknown`` for an id not installed. Its admission, grant and withdrawals
    go with it."""
    shelf = _tools(call).plugins
    await shelf.load()
    package = await shelf.uninstall(call.args.id)
    await _set_policy(call, call.args.id, None, forget_withdrawals=True)
    return Outcome(
        PluginList(plugins=[_info(call, p) for p in shelf.all()]),
        rule="plugin-uninstalled",
        details={"plugin": call.args.id, "release": package.manifest.release},
    )
