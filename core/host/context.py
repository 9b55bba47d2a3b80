"""What an operation may use: the ports and the host's shared services (STYLE §4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.audit import AuditLog
from core.policy import Policy
from core.ports import (
    Clock,
    EnvironmentServers,
    FolderProjects,
    HostState,
    ModuleStore,
    ProjectRoots,
    Randomness,
    Sandbox,
)
from core.projects.catalog import ProjectCatalog

__all__ = ["HostContext"]


@dataclass
class HostContext:
    """The ports and services a host operation is given; nothing else is reachable.

    ``versions`` is shown by ``host.info`` (e.g. Python, Pyodide, core). ``policy`` is the
    current operator policy snapshot holder; operations read it per call. ``folders`` holds
    picked folders, ``servers`` the environment servers this host runs for its peers (both
    optional); ``env_key`` is the envKey of the environment this host serves; ``dispatcher``
    is the :class:`~core.host.pipeline.Host` answering for this context (set by it), and
    ``cache`` keeps long-lived services (tool box, peer channels) built on first use.
    """

    roots: ProjectRoots
    state: HostState
    audit: AuditLog
    clock: Clock
    random: Randomness
    policy: Policy = field(default_factory=Policy)
    versions: dict[str, str] = field(default_factory=dict)
    folders: FolderProjects | None = None
    servers: EnvironmentServers | None = None
    sandbox: Sandbox | None = None
    modules: ModuleStore | None = None
    connect_sandbox: Callable[[object], Sandbox] | None = None
    env_key: str = "local"
    dispatcher: Any = None
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def catalog(self) -> ProjectCatalog:
        """The project catalog over :attr:`roots` and the picked :attr:`folders`; the OPFS
        projects it opened are remembered in :attr:`cache` between calls."""
        opened = self.cache.setdefault("opened-projects", {})
        return ProjectCatalog(self.roots, self.clock, self.random, self.folders, opened)
