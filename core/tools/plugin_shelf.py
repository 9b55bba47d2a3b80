"""The installed plugins of one host, kept in HOST_DIR and registered with their origin
(issue 16; seed 003 "plugin operations keep their origin").

Each installed package is stored whole, as read and pin-checked (``plugin-<id>.zip`` or the
folder's files re-packed), with an index ``plugins.json`` (``{id: release}``). Installing
registers every operation of the manifest under origin ``plugin:<id>``, all or none: a name
another origin holds, or a name of the host (its operations, built-in tools and namespaces:
:class:`core.tools.registry.ReservedNames`, issue 29 item 3), refuses the whole install
(``registration-conflict``) and nothing is registered or stored. Installing is not admitting:
the package runs only once the operator admits its manifest's sha256
(:class:`core.policy.Policy` ``admitted_plugins``); any other package — a new release, or other
bytes under the same release label — needs its own admission (issue 29 item 1). A package the
operator withdrew (``withdrawn_plugins``, bound to the same sha256) registers withdrawn,
whenever it is registered: at load, before any call can reach it, and when the same bytes are
installed again (issue 29 item 2). Nothing here runs a module.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable

from core.json_bound import parse_json
from core.policy import Policy
from core.ports import HostState
from core.refusals import Code, Refused
from core.tools.plugin_manifest import MANIFEST_NAME, PluginPackage, operation_entries, read_package
from core.tools.registry import OperationRegistry

__all__ = ["INDEX_NAME", "PluginShelf"]

INDEX_NAME = "plugins.json"
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def _stored_name(plugin_id: str) -> str:
    return f"plugin-{plugin_id}.zip"


def _pack(package: PluginPackage) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        files = {MANIFEST_NAME: package.manifest_bytes, **package.modules}
        for name, body in files.items():
            archive.writestr(zipfile.ZipInfo(name, _FIXED_TIME), body)
    return buffer.getvalue()


class PluginShelf:
    """The installed packages by plugin id, over ``state``, registered in ``registry``;
    ``policy`` gives the operator's current policy (which packages are withdrawn)."""

    def __init__(
        self, state: HostState, registry: OperationRegistry, policy: Callable[[], Policy] = Policy
    ) -> None:
        self._state = state
        self._registry = registry
        self._policy = policy
        self._packages: dict[str, PluginPackage] = {}
        self._loaded = False

    async def load(self) -> None:
        """Read and register every stored package, once (later calls do nothing). A stored
        package that no longer reads or registers is skipped, not half-registered."""
        if self._loaded:
            return
        self._loaded = True
        raw = await self._state.load(INDEX_NAME)
        index = parse_json(raw, what="plugins.json") if raw else {}
        for plugin_id in sorted(index):
            data = await self._state.load(_stored_name(plugin_id))
            if data is None:
                continue
            try:
                self._register(read_package(data))
            except Refused:
                continue

    def get(self, plugin_id: str) -> PluginPackage | None:
        """The installed package of ``plugin_id``, or ``None``."""
        return self._packages.get(plugin_id)

    def all(self) -> list[PluginPackage]:
        """Every installed package, by id."""
        return [self._packages[k] for k in sorted(self._packages)]

    def check(self, package: PluginPackage) -> None:
        """Refuse what registering ``package`` would refuse (``registration-conflict``,
        ``registration-invalid``), changing nothing: the install dialog asks this first."""
        for entry in operation_entries(package.manifest, package.manifest_sha256):
            self._registry.check(entry)

    def _register(self, package: PluginPackage) -> None:
        manifest = package.manifest
        entries = operation_entries(manifest, package.manifest_sha256)
        old = self._packages.get(manifest.id)
        old_names = {op.name for op in old.manifest.operations} if old else set()
        for entry in entries:
            self._registry.check(entry)
        for name in old_names - {e.name for e in entries}:
            self._registry.remove(name, manifest.origin)
        withdrawn = self._policy().plugin_withdrawn(manifest.id, package.manifest_sha256)
        for entry in entries:
            self._registry.add(entry)
            if withdrawn:
                self._registry.withdraw(entry.name, entry.origin)
        self._packages[manifest.id] = package

    async def install(self, package: PluginPackage) -> PluginPackage | None:
        """Register and store ``package`` (replacing its own id's earlier release, whose
        operations it no longer has are removed); the package it replaced, or ``None``.
        Refuses ``registration-conflict`` before anything changes."""
        await self.load()
        old = self._packages.get(package.manifest.id)
        self._register(package)
        await self._state.store(_stored_name(package.manifest.id), _pack(package))
        await self._store_index()
        return old

    async def uninstall(self, plugin_id: str) -> PluginPackage:
        """Remove ``plugin_id``'s operations and package; refuses ``tool-unknown``."""
        await self.load()
        package = self._packages.get(plugin_id)
        if package is None:
            raise Refused(Code.TOOL_UNKNOWN, "No plugin by that id is installed.", field="id")
        for op in package.manifest.operations:
            if self._registry.get(op.name) is not None:
                self._registry.remove(op.name, package.manifest.origin)
        del self._packages[plugin_id]
        await self._store_index()
        await self._state.store(_stored_name(plugin_id), b"")
        return package

    def withdraw(self, plugin_id: str) -> PluginPackage:
        """Withdraw every operation of ``plugin_id`` (they keep their names; calls get
        ``plugin-withdrawn``); refuses ``tool-unknown``. In memory only: the operator's
        withdrawal lasts because ``plugin.withdraw`` stores it in the policy
        (``withdrawn_plugins``), which :meth:`load` and :meth:`install` read."""
        package = self._packages.get(plugin_id)
        if package is None:
            raise Refused(Code.TOOL_UNKNOWN, "No plugin by that id is installed.", field="id")
        for op in package.manifest.operations:
            self._registry.withdraw(op.name, package.manifest.origin)
        return package

    async def _store_index(self) -> None:
        index = {k: p.manifest.release for k, p in sorted(self._packages.items())}
        await self._state.store(INDEX_NAME, json.dumps(index, sort_keys=True).encode())
