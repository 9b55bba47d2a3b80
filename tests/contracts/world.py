"""A small world for the contract tests: one host's HOST_DIR over the in-memory ports.

It serves two environments (``alpha``, ``beta``), knows one peer (``peer``), has a host token,
and an audit log. Everything is pure Python; nothing waits on real I/O, so :func:`run` drives it.
"""

from __future__ import annotations

from core.audit import AuditLog
from core.custody.environment import (
    Environments,
    load_environments,
    new_env_key,
    save_environments,
)
from core.custody.host_token import ensure_host_token
from core.custody.pairing import Pairings, PairingStore, load_pairings
from core.memory.adapters import (
    FixedClock,
    MemoryAuditKey,
    MemoryAuditSink,
    MemoryHostState,
    SeededRandomness,
)
from core.ports import Randomness
from core.secret import Secret
from tests.support import run


class World:
    """HOST_DIR, clock, audit and pairing store of one host (see module docstring)."""

    def __init__(self, random: Randomness | None = None) -> None:
        self.clock = FixedClock()
        self.state = MemoryHostState()
        self.random = random or SeededRandomness(11)
        self.sink = MemoryAuditSink()
        self.audit_key = MemoryAuditKey()
        self.audit = AuditLog(self.sink, self.clock, key=self.audit_key, state=self.state)
        self.store = PairingStore(self.state, self.clock, self.random, self.audit)
        self.token: Secret = run(ensure_host_token(self.state, self.random))
        self.alpha = new_env_key(self.random)
        self.beta = new_env_key(self.random)
        self.peer = new_env_key(self.random)
        now = self.clock.now_ms()
        envs = (
            Environments()
            .added(self.alpha, "alpha", "local", now)
            .added(self.beta, "beta", "local", now)
            .added(self.peer, "peer", "peer", now)
        )
        run(save_environments(self.state, envs))

    def envs(self) -> Environments:
        """``environments.json`` as stored now."""
        return run(load_environments(self.state))

    def pairings(self) -> Pairings:
        """``pairings.json`` as stored now."""
        return run(load_pairings(self.state))

    def set_envs(self, envs: Environments) -> None:
        """Replace ``environments.json``."""
        run(save_environments(self.state, envs))

    def issue(self, env_key: str) -> Secret:
        """Issue a bearer for ``env_key`` with the right host token."""
        return run(self.store.issue(self.token, env_key)).bearer

    def revoke(self, env_key: str) -> None:
        """Revoke ``env_key`` with the right host token."""
        run(self.store.revoke(self.token, env_key))
