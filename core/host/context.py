"""What an operation may use: the ports and the host's shared services (STYLE §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.audit import AuditLog
from core.catalog import ProjectCatalog
from core.policy import Policy
from core.ports import Clock, FolderProjects, HostState, ProjectRoots, Randomness

__all__ = ["HostContext"]


@dataclass
class HostContext:
    """The ports and services a host operation is given; nothing else is reachable.

    ``versions`` is shown by ``host.info`` (e.g. Python, Pyodide, core). ``policy`` is the
    current operator policy snapshot holder; operations read it per call.
    """

    roots: ProjectRoots
    state: HostState
    audit: AuditLog
    clock: Clock
    random: Randomness
    policy: Policy = field(default_factory=Policy)
    versions: dict[str, str] = field(default_factory=dict)
    folders: FolderProjects | None = None

    @property
    def catalog(self) -> ProjectCatalog:
        """The project catalog over :attr:`roots` and the picked :attr:`folders`."""
        return ProjectCatalog(self.roots, self.clock, self.random, self.folders)
