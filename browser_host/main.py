"""Wiring for the E1 host: OPFS and IndexedDB adapters into a core ``Host``.

The worker's JavaScript calls :func:`start` once (after Pyodide and the wheels are loaded and
the storage lock is held), ``bridge.after_ready(settled)`` once it has posted ``ready`` (the
late modules' import and the mailboxes' warm-up start then), and ``bridge.handle_now(text,
body)`` for each page message
(``bridge.handle`` run as an eager task: answered at once when it never waits) — or,
for a message over ``bridge.bounds()``, ``bridge.refuse(part, size)``, so that its bytes are
never copied into the Wasm heap (issue 13). OPFS layout (SPEC §3): ``host/`` is HOST_DIR,
``projects/<id>/`` holds projects.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from typing import Any

import js
import pyodide
from pyodide.ffi import to_js

import core
from browser_host.audit_key import WebCryptoAuditKey
from browser_host.byte_path import OpfsRelay, WorkerSink
from browser_host.diagnostics import note_frozen, runtime_figures
from browser_host.folders import IdbFolderProjects
from browser_host.idb_audit import IdbAuditSink
from browser_host.jsutil import js_options
from browser_host.opfs import HandleHostState, HandleProjectRoots, subfolder
from browser_host.python_runtime import PortPythonRuntime
from browser_host.remote import WorkerRemoteLink
from browser_host.sandbox import PortSandbox, SiteModules
from browser_host.sealed_state import SealedHostState
from browser_host.servers import WorkerEnvironmentServers
from browser_host.watch import ObserverWatcher
from core.audit import AuditLog
from core.custody.env_server import ensure_identity
from core.host.context import HostContext, HostServices
from core.host.pipeline import Host
from core.model import Contract
from core.policy import load_policy, say_policy_damage
from core.projects.temporaries import load_temporaries
from core.protocol import INBOUND_BOUNDS
from core.runtime import SystemClock, SystemRandomness

__all__ = ["HostBridge", "WorkerPageEvents", "start"]

HOST_DIR = "host"
PROJECTS_DIR = "projects"


class HostBridge:
    """What the worker's JavaScript holds: ``handle`` (or ``handle_now``, the same call run
    eagerly), ``bounds``, ``refuse`` and ``after_ready``."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.warming: asyncio.Future[Any] | None = None  # the background warm-up (after_ready)

    async def handle(
        self, text: str, body: Any = None, attachment: Any = None, emit: Any = None
    ) -> Any:
        """Answer one page message. ``body`` is a JS ``Uint8Array`` or undefined;
        ``attachment`` a structured-cloned object (a folder handle) or undefined; ``emit`` a
        JS function that posts one chunk of a streaming answer to the page.

        Returns a JS array ``[answerJsonText, Uint8Array | undefined, attachment |
        undefined]``. Never raises.
        """
        data = body.to_bytes() if hasattr(body, "to_bytes") else None
        sink = WorkerSink(emit) if emit is not None else None
        answer, out, handed = await self.host.handle_full(str(text), data, attachment, sink)
        return to_js([answer, out, handed])

    def handle_now(
        self, text: str, body: Any = None, attachment: Any = None, emit: Any = None
    ) -> Any:
        """:meth:`handle`, its first step run at once (issue 18): an eager task
        (``asyncio.Task(..., eager_start=True)``), so a call that never has to wait — a
        cached read — is answered before this returns, with no turn of the event loop between
        the message and its answer. Returns :meth:`handle`'s JS array when the call is done,
        else the task, which the worker awaits (the rest runs on the loop as any task does).
        Pyodide marks its loop running only inside a loop callback; this is called from the
        worker's message handler, so the loop is marked running for the eager step."""
        loop = asyncio.get_event_loop()
        previous = asyncio._get_running_loop()
        asyncio._set_running_loop(loop)
        try:
            task = asyncio.Task(  # type: ignore[call-arg]  # eager_start: Pyodide's Python has it (3.12+), mypy checks as 3.11
                self.handle(text, body, attachment, emit), loop=loop, eager_start=True
            )
        finally:
            asyncio._set_running_loop(previous)
        return task.result() if task.done() else task

    def bounds(self) -> Any:
        """:data:`core.protocol.INBOUND_BOUNDS` as a JS object (``message_units``,
        ``body_bytes``): what the worker compares before it converts a message."""
        return js_options(**INBOUND_BOUNDS.model_dump())

    async def refuse(self, part: str, size: int, text: Any = None) -> Any:
        """Answer a message the worker did not convert because its ``part`` (``"message"``
        or ``"body"``) is ``size`` long, over :meth:`bounds`: ``message-too-large``,
        audited (:meth:`core.host.pipeline.Host.refuse_oversized`). ``text`` is the JSON
        text when only the body was over. Returns the JS array of :meth:`handle`."""
        answer = await self.host.refuse_oversized(
            "body" if part == "body" else "message",
            int(size),
            text if isinstance(text, str) else None,
        )
        return to_js([answer, None, None])

    def after_ready(self, settled: Any = None) -> None:
        """Start the host's work that waits for ``ready`` (the worker calls this right after it
        posts ``ready``, before it relays the calls queued during the boot):
        :meth:`core.host.pipeline.Host.after_ready` — the late modules' import and the
        mailboxes' warm-up, then the post path rehearsed on a throwaway in-memory host
        (:func:`core.memory.rehearsal.rehearse_posts`: a fresh worker's first posts ran the post's
        code for the first time). Returns at once. ``settled``, a JS function, is called with no
        argument when all are done (the worker then posts ``settled``: docs/architecture.md, "Late
        operations"). Before ``settled`` is called, what the boot left alive is collected once and
        frozen (:func:`keep_boot_objects`)."""

        def done() -> None:
            keep_boot_objects()
            if settled is not None:
                settled()

        from core.memory.rehearsal import rehearse_posts  # the post path, rehearsed (issue 34)

        self.warming = self.host.after_ready(done, rehearse=rehearse_posts)

    def frame_gone(self, frame: int) -> bool:
        """The tab holding Python runtime frame number ``frame`` is gone (the worker learned
        it by that tab's Web Lock): :func:`core.host.python_ops.release_frame`."""
        from core.host.python_ops import release_frame

        return release_frame(self.host.ctx.services, int(frame))

    def page_gone(self, page: str) -> bool:
        """The tab whose page id is ``page`` is gone (the worker learned it by that page's
        life lock): forget the unsaved text it said it held (issue 33,
        :class:`core.host.unsaved_tabs.UnsavedTabs`). True when it had said any."""
        return self.host.ctx.unsaved.forget(str(page))

    def versions(self) -> str:
        """The versions shown on ready, as JSON text."""
        return json.dumps(self.host.ctx.versions)


def _storage_io() -> Any:
    """The worker's ``voicebox_io`` (``worker/opfs-io.mjs``), registered before :func:`start`."""
    import voicebox_io  # type: ignore[import-not-found]  # a JS module the worker registers

    return voicebox_io


class WorkerPageEvents:
    """:class:`core.ports.PageEvents` in the host worker: ``post`` gives the event's JSON to
    ``send`` (the worker's ``{kind: "event", text}`` to the page, ``worker/host.mjs``)."""

    def __init__(self, send: Any) -> None:
        self._send = send

    def post(self, event: Contract) -> None:
        """See :meth:`core.ports.PageEvents.post` (never raises)."""
        try:
            self._send(event.model_dump_json())
        except Exception:  # a page that is gone: it lists again when it comes back
            return


async def start(
    idb: Any,
    sealer: Any,
    audit_key: Any,
    peer_script: str,
    guard: Any = None,
    event: Any = None,
) -> HostBridge:
    """Open OPFS and IndexedDB and return the bridge.

    ``idb`` is the worker's ``Database`` (``worker/idb.mjs``), ``sealer`` its ``Sealer``
    (``worker/sealed.mjs``: HOST_DIR sealed at rest), ``audit_key`` its ``AuditKey`` (the
    audit's HMAC key; the anchor goes to HOST_DIR), ``peer_script`` the URL of
    ``worker/peer.mjs`` (environment servers), ``guard`` the worker's egress guard
    (``worker/egress-guard.mjs``; remote environments are reachable only with it), ``event``
    the worker's function that posts an event's JSON text to the page (:class:`WorkerPageEvents`).
    """
    opfs = await js.navigator.storage.getDirectory()
    state = SealedHostState(HandleHostState(await subfolder(opfs, HOST_DIR, create=True)), sealer)
    random = SystemRandomness()
    temporaries = await load_temporaries(state, random)  # one for every adapter of this host
    roots = HandleProjectRoots(await subfolder(opfs, PROJECTS_DIR, create=True), temporaries)
    clock = SystemClock()
    audit = AuditLog(
        IdbAuditSink(idb),
        clock,
        key=WebCryptoAuditKey(audit_key),
        state=state,
        background_anchor=True,  # the worker runs an event loop: anchor beside the appends
    )
    loaded = await load_policy(state)  # core's one reader: a damaged policy is SAFE mode
    versions = {
        "python": sys.version.split()[0],
        "pyodide": pyodide.__version__,
        "core": core.__version__,
    }
    ctx = HostContext(
        roots=roots,
        state=state,
        audit=audit,
        clock=clock,
        random=random,
        policy=loaded.policy,
        policy_damage=loaded.damage,
        versions=versions,
        services=HostServices(
            folders=IdbFolderProjects(idb, temporaries),
            servers=WorkerEnvironmentServers(peer_script),
            modules=SiteModules(js.URL.new("../tools/", js.location.href).href),
            connect_sandbox=PortSandbox,
            connect_python=PortPythonRuntime,
            runtime_probe=runtime_figures,
            remote=WorkerRemoteLink(guard) if guard is not None else None,
            file_relay=OpfsRelay(),
            folder_watcher=ObserverWatcher(_storage_io()),
            events=WorkerPageEvents(event) if event is not None else None,
        ),
    )
    host = Host(ctx)
    await host.tools.plugins.load()  # the installed plugins, registered with their origin
    await ctx.catalog.sweep_unfinished()  # we hold the storage lock: nothing is mid-write
    envs = await ensure_identity(ctx, "local")
    ctx.env_key = next(e.key for e in envs.environments if e.kind == "local")
    audit.env = ctx.env_key
    await say_policy_damage(audit, loaded)  # the console and the audit; the page: host.info
    if host.peers is not None:
        await host.peers.admin.allow_remotes()  # the paired remotes' origins, from HOST_DIR
    await ctx.secrets.current(ctx.state)  # held before the first answer: none waits on it
    await audit.head_seq()
    # The late modules (core/host/registry.py) and the mailboxes' warm-up wait for ready: the
    # worker starts them when it has posted it (HostBridge.after_ready).
    return HostBridge(host)


def keep_boot_objects() -> None:
    """Collect the boot's garbage once and move every object still alive (the host's modules,
    its ~150 built contract models, the warmed mailboxes) out of the cycle collector's sight
    (:func:`gc.freeze`), once the host is settled (issue 34, a fresh host's first post): those
    objects live as long as the worker, and without this the first calls after ``settled``
    paid a collection over all of them (a full collection of a settled host's heap is ~57 ms in
    CPython on this machine). Later collections scan only what calls make; frozen objects are
    still freed by reference counting. Runs on the event loop between two calls, once."""
    gc.collect()
    gc.freeze()
    note_frozen()
