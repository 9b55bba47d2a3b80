"""An environment's root on disk and the host composed over it (SPEC §6; seed 002 §2).

``voicebox-env init --root DIR`` lays out::

    DIR/
      host/            HOST_DIR, 0700 — every file 0600:
        .host-token        the host token, plain text, for the operator (curl, the CLI)
        environments.json  this environment (kind "local"), its envKey
        pairings.json      issued bearers as sha256 only, revokedBearers
        pair-codes.json    live one-time codes, hashed; recent claims (rate limit)
        policy.json        core's operator policy (SAFE mode: read_only)
        commands.json      the fenced-commands switches (exec off until enabled)
        audit.sqlite3      the audit (WAL, synchronous=FULL), + its -wal/-shm
        audit-key          the audit's HMAC key (32 bytes)
        audit-anchor.json  the audit's MAC'd head
        write-marker.json  this host's temporaries marker
        admin.sock         while serving: the operator's local admin socket
      projects/<id>/   one folder per project (its .voicebox/ manifest inside)
      exec-home/       the empty HOME fenced commands get

:func:`compose` wires core's dispatcher (:class:`~core.host.pipeline.Host`) over these
adapters; the server (:mod:`server_host.service`) calls it. The audit root is ``audit.sqlite3``:
``serve --no-audit`` declares none (nothing is recorded; a revocation answers
``logged: null, logRefused: "root-not-declared"``, seed 002 §3).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from core.audit import AuditLog
from core.custody.environment import Environment, load_environments, new_env_key, save_environments
from core.custody.host_token import ensure_host_token
from core.host.context import HostContext
from core.host.pipeline import Host
from core.policy import Policy, load_policy, say_policy_damage
from core.ports import StoredAuditRecord
from core.projects.temporaries import load_temporaries
from core.refusals import Code, Refused
from core.runtime import SystemClock, SystemRandomness
from server_host.audit_store import AUDIT_DB, FileAuditKey, SqliteAuditSink
from server_host.disk import DiskHostState, DiskProjectRoots, ensure_private_dir

__all__ = ["Composed", "Home", "compose", "init_home"]


@dataclass(frozen=True, slots=True)
class Home:
    """The folders of an environment root ``DIR`` (see the module docstring)."""

    root: Path

    @property
    def host_dir(self) -> Path:
        """HOST_DIR."""
        return self.root / "host"

    @property
    def projects(self) -> Path:
        """The projects' folder."""
        return self.root / "projects"

    @property
    def exec_home(self) -> Path:
        """The empty ``HOME`` of fenced commands."""
        return self.root / "exec-home"

    @property
    def admin_socket(self) -> Path:
        """The operator's admin socket while the server runs."""
        return self.host_dir / "admin.sock"


class _NoAuditSink:
    """The sink of an environment that declares no audit root: it stores nothing and says so
    (``storage-failed``), so no call is ever answered with a ``logged`` number."""

    async def append(self, seq: int, record: dict[str, object]) -> None:
        raise Refused(Code.STORAGE_FAILED, "This environment declares no audit root.")

    async def last(self) -> StoredAuditRecord | None:
        return None

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        return []


class _QuietNoAudit(logging.Filter):
    """Drops the dispatcher's "audit append failed" lines when no audit root is declared
    (every call would log one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "audit append failed"


@dataclass
class Composed:
    """A composed environment host: its folders, HOST_DIR, dispatcher and identity."""

    home: Home
    state: DiskHostState
    host: Host
    roots: DiskProjectRoots
    environment: Environment
    audited: bool
    sink: SqliteAuditSink | None

    @property
    def ctx(self) -> HostContext:
        """The dispatcher's context (ports and services)."""
        return self.host.ctx

    async def reload_policy(self, *, say: bool = True) -> Policy:
        """Read ``policy.json`` again (a fresh snapshot per call, seed 003) through core's one
        reader (:func:`core.policy.load_policy`): one that cannot be used is SAFE mode (fails
        closed), its reason kept for ``host.info``. ``say``: a damage new since the last
        reload is said once in the log and the audit (:func:`core.policy.say_policy_damage`;
        ``voicebox-env audit verify`` composes with ``say=False`` and appends nothing)."""
        loaded = await load_policy(self.state)
        self.ctx.policy = loaded.policy
        if say and loaded.damage != self.ctx.policy_damage:
            await say_policy_damage(self.ctx.audit if self.audited else None, loaded)
        if say or loaded.damage is None:
            self.ctx.policy_damage = loaded.damage
        return loaded.policy


async def init_home(root: Path, name: str) -> Environment:
    """Create an environment called ``name`` under ``root``: folders, HOST_DIR, its envKey
    (128 bits of CSPRNG output), host token, audit key and database. Refuses
    ``already-exists`` when ``root`` already holds an environment, ``name-invalid``."""
    home = Home(root)
    home.root.mkdir(parents=True, exist_ok=True)
    state = DiskHostState(home.host_dir)
    envs = await load_environments(state)
    if any(e.kind == "local" for e in envs.environments):
        raise Refused(Code.ALREADY_EXISTS, "That root already holds an environment.")
    random = SystemRandomness()
    envs = envs.added(new_env_key(random), name, "local", SystemClock().now_ms())
    home.projects.mkdir(exist_ok=True)
    ensure_private_dir(home.exec_home)
    await ensure_host_token(state, random)
    await load_temporaries(state, random)
    FileAuditKey(home.host_dir)
    SqliteAuditSink(home.host_dir / AUDIT_DB).close()
    await save_environments(state, envs)
    return next(e for e in envs.environments if e.kind == "local")


async def compose(root: Path, *, audit: bool = True) -> Composed:
    """The host of the environment under ``root`` (made by :func:`init_home`); refuses
    ``unknown-environment`` when there is none."""
    home = Home(root)
    if not home.host_dir.is_dir():
        raise Refused(Code.UNKNOWN_ENVIRONMENT, f"No environment under {root}: run init.")
    state = DiskHostState(home.host_dir)
    envs = await load_environments(state)
    local = next((e for e in envs.environments if e.kind == "local"), None)
    if local is None:
        raise Refused(Code.UNKNOWN_ENVIRONMENT, f"No environment under {root}: run init.")
    random = SystemRandomness()
    clock = SystemClock()
    temporaries = await load_temporaries(state, random)
    roots = DiskProjectRoots(home.projects, temporaries)
    sink = SqliteAuditSink(home.host_dir / AUDIT_DB) if audit else None
    log = AuditLog(
        sink if sink is not None else _NoAuditSink(),
        clock,
        key=FileAuditKey(home.host_dir),
        state=state,
        env=local.key,
        background_anchor=True,
    )
    if not audit:
        logging.getLogger("voicebox.host").addFilter(_QuietNoAudit())
    ctx = HostContext(roots=roots, state=state, audit=log, clock=clock, random=random)
    ctx.env_key = local.key
    composed = Composed(home, state, Host(ctx), roots, local, audit, sink)
    await composed.reload_policy(say=False)  # the server's first request says a damage
    await ctx.catalog.sweep_unfinished()
    return composed
