"""Environment identity: the ``envKey`` and ``environments.json`` (seed 002 §1, SPEC §6).

An ``envKey`` is ``ek_`` + 32 lower-case hex digits: 128 bits, either drawn from the CSPRNG
(:func:`new_env_key`) or the first 128 bits of the sha256 of a public key
(:func:`env_key_from_public_key`). It is self-issued, stable, and not a secret.

``environments.json`` (HOST_DIR) lists every environment this host knows:

- ``kind: "local"`` — an environment this host serves (its own identity; a peer environment
  server lists its own here). Execute requests and pairing issue resolve only these.
- ``kind: "peer"`` — an environment served elsewhere that this host may call with a bearer.

Removing an environment, or re-keying it, makes its old key resolve to nothing, so every bearer
bound to the old key fails closed with ``unknown-environment`` before the bearer is even read
(:func:`core.custody.authorize.authorize_execute`).
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from core.model import Contract
from core.paths import check_name
from core.ports import HostState, Randomness
from core.refusals import Code, Refused
from core.vocabulary import ENV_KEY_PATTERN, EnvKey

__all__ = [
    "ENVIRONMENTS_DOC",
    "ENV_KEY_PATTERN",
    "EnvKind",
    "Environment",
    "Environments",
    "env_key_from_public_key",
    "env_key_said",
    "is_env_key",
    "load_environments",
    "new_env_key",
    "save_environments",
]

ENVIRONMENTS_DOC = "environments.json"
MAX_ENVIRONMENTS = 256
EnvKind = Literal["local", "peer"]

_ALIASED = Contract.model_config | {"serialize_by_alias": True}


def new_env_key(random: Randomness) -> str:
    """A fresh ``envKey``: ``ek_`` + 128 bits of output from ``random`` (a CSPRNG port)."""
    raw = random.token_bytes(16)
    if len(raw) != 16:
        raise ValueError("the random source returned the wrong number of bytes")
    return "ek_" + raw.hex()


def env_key_from_public_key(public_key: bytes) -> str:
    """The ``envKey`` of a key pair: ``ek_`` + the first 128 bits of sha256(public key)."""
    if not public_key:
        raise ValueError("a public key is needed")
    return "ek_" + hashlib.sha256(public_key).hexdigest()[:32]


def is_env_key(text: object) -> bool:
    """True when ``text`` has the form of an ``envKey``."""
    return isinstance(text, str) and re.fullmatch(ENV_KEY_PATTERN, text) is not None


def env_key_said(value: object) -> str:
    """What a log or an audit record may say of an ``envKey`` someone sent (issue 29 item 9):
    the text itself only when it has an envKey's own shape (:data:`ENV_KEY_PATTERN`, which
    no bearer, token or key has); anything else as its length and class only —
    ``<41 chars, not an envKey>``, ``<not text, not an envKey>`` — so a secret sent in its
    place (a bearer without its prefix, a host token) is never recorded."""
    if is_env_key(value):
        assert isinstance(value, str)
        return value
    if not isinstance(value, str):
        return "<not text, not an envKey>"
    return f"<{len(value)} chars, not an envKey>"


class Environment(Contract):
    """One environment: its key, a display name, whether this host serves it, when added (ms)."""

    model_config = _ALIASED

    key: EnvKey = Field(alias="envKey")
    name: str = Field(min_length=1, max_length=200)
    kind: EnvKind
    added_at: int = Field(alias="addedAt", ge=0, description="Milliseconds since the epoch.")
    origin: str | None = Field(default=None, max_length=300)
    """For a remote environment (a server on another machine, issue 15): its origin,
    ``http(s)://host[:port]`` (:func:`core.custody.remote.remote_origin`); ``None`` for a
    local one and for a peer served by a worker of this host."""


class Environments(Contract):
    """``environments.json``: every known environment, keys unique. Changes return new values."""

    model_config = _ALIASED

    schema_: Literal["voicebox-environments-v1"] = Field(
        default="voicebox-environments-v1", alias="schema"
    )
    environments: tuple[Environment, ...] = Field(default=(), max_length=MAX_ENVIRONMENTS)

    @model_validator(mode="after")
    def _keys_unique(self) -> Environments:
        keys = [e.key for e in self.environments]
        if len(keys) != len(set(keys)):
            raise ValueError("two environments share an envKey")
        return self

    def find(self, key: object) -> Environment | None:
        """The environment whose key is ``key``, or ``None``."""
        return next((e for e in self.environments if e.key == key), None)

    def resolve(self, key: object) -> Environment:
        """The environment ``key`` names; refuses ``unknown-environment`` (404)."""
        env = self.find(key)
        if env is None:
            raise Refused(Code.UNKNOWN_ENVIRONMENT, field="envKey")
        return env

    def resolve_served(self, key: object) -> Environment:
        """The environment ``key`` names *and this host serves*; else ``unknown-environment``.

        A peer environment this host merely knows is not one it answers for (seed 002 §1).
        """
        env = self.resolve(key)
        if env.kind != "local":
            raise Refused(Code.UNKNOWN_ENVIRONMENT, field="envKey")
        return env

    def own(self) -> Environment:
        """The environment this host answers for when no ``envKey`` is named (``GET
        /api/identity``): its first ``local`` one, as ``environments.json`` says *now*. Refuses
        ``unknown-environment`` (404) once the operator removed every one — the same answer
        :meth:`resolve_served` gives an ``envKey`` that is gone (issue 29 item 15f; seed 002
        §1: a removed environment fails closed, it is never answered from memory)."""
        env = next((e for e in self.environments if e.kind == "local"), None)
        if env is None:
            raise Refused(Code.UNKNOWN_ENVIRONMENT, "This server no longer serves an environment.")
        return env

    def added(
        self, key: str, name: str, kind: EnvKind, now_ms: int, origin: str | None = None
    ) -> Environments:
        """A copy with a new environment (``origin`` for a remote one); refuses
        ``already-exists``, ``name-invalid``."""
        check_name(name)
        if self.find(key) is not None:
            raise Refused(Code.ALREADY_EXISTS, "That envKey is already listed.", field="envKey")
        if len(self.environments) >= MAX_ENVIRONMENTS:
            raise Refused(Code.STORAGE_QUOTA_EXCEEDED, "Too many environments are listed.")
        env = Environment(envKey=key, name=name, kind=kind, addedAt=now_ms, origin=origin)
        return self.model_copy(update={"environments": (*self.environments, env)})

    def removed(self, key: object) -> Environments:
        """A copy without ``key``; refuses ``unknown-environment``."""
        env = self.resolve(key)
        rest = tuple(e for e in self.environments if e is not env)
        return self.model_copy(update={"environments": rest})

    def rekeyed(self, key: object, new_key: str) -> Environments:
        """A copy where the environment ``key`` is known as ``new_key`` from now on.

        The old key then resolves to nothing: every bearer bound to it fails closed
        (``unknown-environment``). Refuses ``unknown-environment`` and ``already-exists``.
        """
        env = self.resolve(key)
        if not is_env_key(new_key):
            raise ValueError("not an envKey")
        if self.find(new_key) is not None:
            raise Refused(Code.ALREADY_EXISTS, "That envKey is already listed.", field="envKey")
        moved = env.model_copy(update={"key": new_key})
        rest = tuple(moved if e is env else e for e in self.environments)
        return self.model_copy(update={"environments": rest})

    def to_json(self) -> bytes:
        """The document's bytes as stored in HOST_DIR."""
        return self.model_dump_json(by_alias=True).encode("utf-8")


async def load_environments(state: HostState) -> Environments:
    """Read ``environments.json`` from HOST_DIR (empty when absent).

    A document that does not parse refuses ``storage-failed``: the host does not guess who it is.
    """
    raw = await state.load(ENVIRONMENTS_DOC)
    if raw is None:
        return Environments()
    try:
        return Environments.model_validate_json(raw)
    except ValidationError:
        raise Refused(Code.STORAGE_FAILED, "environments.json does not parse.") from None


async def save_environments(state: HostState, environments: Environments) -> None:
    """Replace ``environments.json`` in HOST_DIR atomically."""
    await state.store(ENVIRONMENTS_DOC, environments.to_json())
