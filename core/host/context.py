"""What an operation may use: the host's ports, its optional services, and the state it keeps
between calls — each a typed field, nothing looked up by name (STYLE §1, §4; micropip's
``_compat``: capabilities are chosen once, when the host is composed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.audit import AuditLog
from core.custody.held_secrets import HeldSecrets, WatchedState
from core.host.unsaved_tabs import UnsavedTabs
from core.policy import Policy
from core.ports import (
    Clock,
    EnvironmentServers,
    FileRelay,
    FolderProjects,
    HostState,
    ModuleStore,
    PageEvents,
    ProjectRoots,
    PythonRuntime,
    Randomness,
    RemoteLink,
    RuntimeProbe,
    Sandbox,
    WatchesFolders,
)
from core.projects.catalog import OpenProject, ProjectCatalog
from core.projects.listing_cache import CachedRoots, ListingCache
from core.projects.search import SearchCancels

if TYPE_CHECKING:
    from core.missions.mailbox import Mailbox, MailboxCache

__all__ = ["HostContext", "HostServices"]


@dataclass
class HostServices:
    """The optional capabilities of one placement, chosen when the host is composed.

    ``folders``: projects in folders the person picked; ``servers``: the environment servers
    this host runs for its peers; ``modules``: the tool modules it may run, with their pins;
    ``connect_sandbox``: how a port handed by the page becomes the tool :class:`Sandbox`;
    ``runtime_probe``: the runtime's memory figures; ``remote``: how it reaches environment
    servers on other machines (issue 15); ``file_relay``: how an export moves the files' bytes
    (``None``: Python's ``core.archive.export.ChunkRelay``); ``folder_watcher``: how the
    projects' root folders are watched for changes made by anyone, which lets the host keep
    the listings it shows (:mod:`core.projects.listing_cache`; ``None``: every listing reads
    storage); ``events``: how the host tells the page, unasked, that a remote's state changed
    (issue 29 item 15; ``None``: the page learns it when it lists again). Otherwise ``None``
    means the
    placement has none, and the operations that need one refuse (``sandbox-unavailable``,
    ``operation-unknown``…).
    ``sandbox`` is the one slot that changes after composition: the sandbox connected now
    (``sandbox.connect`` replaces it; ``None`` until the page hands a port). ``python`` is
    the person's Python runtime connected now, made by ``connect_python`` from the port the
    page hands ``python.connect`` (issue 32; ``None`` until then); ``python_frame`` numbers
    it (one more at each connect, issue 33 item 2): the worker names the frame whose tab is
    gone by it, so a later connect is never dropped for an earlier frame's tab.
    """

    folders: FolderProjects | None = None
    servers: EnvironmentServers | None = None
    modules: ModuleStore | None = None
    connect_sandbox: Callable[[object], Sandbox] | None = None
    runtime_probe: RuntimeProbe | None = None
    remote: RemoteLink | None = None
    file_relay: FileRelay | None = None
    folder_watcher: WatchesFolders | None = None
    events: PageEvents | None = None
    sandbox: Sandbox | None = None
    connect_python: Callable[[object], PythonRuntime] | None = None
    python: PythonRuntime | None = None
    python_frame: int = 0


@dataclass
class HostContext:
    """The ports, services and kept state an operation is given; nothing else is reachable.

    Ports: ``roots`` (project storage), ``state`` (HOST_DIR), ``audit``, ``clock``, ``random``.
    ``policy`` is the operator's current policy (operations read it per call; ``policy.set``
    replaces it); ``policy_damage`` is the sentence saying why ``policy.json`` could not be used
    and SAFE mode was forced (:func:`core.policy.load_policy`; ``None`` when it was, and after
    ``policy.set`` stores a whole new policy); ``versions`` is shown by ``host.info``;
    ``env_key`` is the envKey of the environment this host serves (``"local"`` until the
    placement knows it); ``services`` are the optional capabilities (:class:`HostServices`).

    Kept between calls, built here once: :attr:`opened` (the OPFS projects the catalog
    opened, :class:`~core.projects.catalog.ProjectCatalog`), :attr:`listings` (the listings
    shown, kept when the placement watches folders: :mod:`core.projects.listing_cache`),
    :attr:`mailboxes` (open mailboxes,
    checked before every use), :attr:`state_lock` (read-modify-write of HOST_DIR documents —
    the policy, the tray's presentation state — never interleaves) and :attr:`secrets` (the
    secrets this host holds, :mod:`core.custody.held_secrets`: ``state`` is wrapped so that
    storing one of them is seen; nothing the page receives holds one, issue 29 item 8) and
    :attr:`searches` (the searches in files running now, so ``file.search_cancel`` can stop
    one: :class:`~core.projects.search.SearchCancels`, issue 33 item 1) and :attr:`unsaved`
    (the unsaved editor text each tab said it holds,
    :class:`~core.host.unsaved_tabs.UnsavedTabs`, issue 33).
    """

    roots: ProjectRoots
    state: HostState
    audit: AuditLog
    clock: Clock
    random: Randomness
    policy: Policy = field(default_factory=Policy)
    policy_damage: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    services: HostServices = field(default_factory=HostServices)
    env_key: str = "local"
    opened: dict[str, OpenProject] = field(init=False, default_factory=dict)
    state_lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    listings: ListingCache | None = field(init=False, default=None)
    secrets: HeldSecrets = field(init=False, default_factory=HeldSecrets)
    searches: SearchCancels = field(init=False, default_factory=SearchCancels)
    unsaved: UnsavedTabs = field(init=False, default_factory=UnsavedTabs)
    _mailboxes = None  # not a field: the MailboxCache, made by ``mailboxes`` on first use

    def __post_init__(self) -> None:
        self.state = WatchedState(self.state, self.secrets)  # a stored secret is seen at once
        watcher = self.services.folder_watcher
        if watcher is not None:
            self.listings = ListingCache(watcher)

    @property
    def mailboxes(self) -> MailboxCache:
        """The open mailboxes (:class:`~core.missions.mailbox.MailboxCache`), made on first
        use: the mission modules are imported after ready (issue 18, cold boot)."""
        cache: MailboxCache | None = self._mailboxes
        if cache is None:
            from core.missions.mailbox import MailboxCache

            cache = self._mailboxes = MailboxCache()
        return cache

    @property
    def catalog(self) -> ProjectCatalog:
        """The project catalog over :attr:`roots` and the picked folders; the OPFS projects it
        opened are remembered in :attr:`opened` between calls."""
        roots = self.roots if self.listings is None else CachedRoots(self.roots, self.listings)
        return ProjectCatalog(roots, self.clock, self.random, self.services.folders, self.opened)

    async def open_mailbox(self, project: str) -> tuple[OpenProject, Mailbox]:
        """Open ``project`` and its mailbox (from :attr:`mailboxes` when storage still matches
        it). Refuses ``project-not-found``, ``permission-required`` and storage codes."""
        opened = await self.catalog.open(project)
        return opened, await self.mailboxes.get(opened.manifest.id, opened.files)
