"""Settings → Provider keys: set, replace, remove, list, grant and revoke a grant (issue 31
"Keys"; seed 002 §2). The rules are :mod:`core.custody.provider_keys`; these are the handlers.

Every change is a person's gesture (the registry's gesture gate), audited with
the provider, the variable and the value's fingerprint — never the value. ``keys.set`` is the
one message that carries a value; no answer, refusal or audit record holds it, and every held
value joins the host's :class:`~core.custody.held_secrets.HeldSecrets` the moment it is stored
(``api-keys.json`` is one of its documents), so the page-answer redaction covers it too.

``keys.set`` and ``keys.grant`` are writes (SAFE mode refuses them); ``keys.remove`` and
``keys.revoke-grant`` are not: taking a key or a grant away is always allowed.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from core.custody.pairing import load_pairings
from core.custody.provider_keys import (
    MAX_KEYS,
    PROVIDER_PATTERN,
    PROVIDERS,
    VARIABLE_PATTERN,
    KeyInfo,
    ProviderKey,
    fingerprint,
    key_value_refusal,
    load_keys,
    save_keys,
    variable_refusal,
)
from core.host.operations import Call, Outcome
from core.model import Contract, NoArgs
from core.refusals import Code, Refused
from core.secret import Secret
from core.vocabulary import EnvKey

__all__ = [
    "KeyGrantArgs",
    "KeyList",
    "KeyRef",
    "KeySetArgs",
    "ProviderChoice",
    "keys_grant",
    "keys_list",
    "keys_remove",
    "keys_revoke_grant",
    "keys_set",
]


class ProviderChoice(Contract):
    """One provider of the closed list: its id, the name shown, the usual variable."""

    id: str
    name: str
    variable: str


class KeyList(Contract):
    """Every key (never a value), the providers offered, and the paired environments a key
    may be granted to (envKeys, this host holding a bearer for each that is not revoked)."""

    keys: list[KeyInfo]
    providers: list[ProviderChoice]
    paired: list[str]


class KeySetArgs(Contract):
    """``keys.set``: ``provider`` (an id of the closed list or a custom name), ``variable`` (the
    environment variable it is given as), ``value`` (the key; write-only), ``replace`` (true
    to replace the value of a key already set as ``variable``)."""

    provider: str = Field(pattern=PROVIDER_PATTERN)
    variable: str = Field(max_length=200, title="Variable")
    value: Secret = Field(title="Key")  # the label the person sees
    replace: bool = False


class KeyRef(Contract):
    """A key, named by its variable."""

    variable: str = Field(pattern=VARIABLE_PATTERN)


class KeyGrantArgs(Contract):
    """A key (by its variable) and a paired environment (its envKey)."""

    variable: str = Field(pattern=VARIABLE_PATTERN)
    env_key: EnvKey = Field(alias="envKey")

    model_config = ConfigDict(populate_by_name=True)


async def _paired(call: Call[Contract]) -> list[str]:
    pairings = await load_pairings(call.ctx.state)
    return sorted({o.env_key for o in pairings.outbound if o.revoked_at is None})


async def _list(call: Call[Contract]) -> KeyList:
    held = await load_keys(call.ctx.state)
    return KeyList(
        keys=[KeyInfo.of(k) for k in held.keys],
        providers=[ProviderChoice(id=i, name=n, variable=v) for i, (n, v) in PROVIDERS.items()],
        paired=await _paired(call),
    )


def _details(key: ProviderKey, **more: str | bool) -> dict[str, str | int | bool | None]:
    return {
        "provider": key.provider,
        "variable": key.variable,
        "fingerprint": fingerprint(key.value),
        **more,
    }


async def keys_list(call: Call[NoArgs]) -> Outcome:
    """Refuses ``storage-failed`` when ``api-keys.json`` is damaged."""
    return Outcome(await _list(call))


async def keys_set(call: Call[KeySetArgs]) -> Outcome:
    """Set or replace a key. Refuses ``args-invalid`` (``variable``: the pattern or the
    deny-list with its reason; ``value``: 16–512 printable characters, no whitespace; the key
    count at its bound), ``already-exists`` (``variable`` already has a key and ``replace`` is
    false). Audited ``key-set`` or ``key-replaced`` with the fingerprint; grants are kept on
    replace."""
    a = call.args
    refusal = variable_refusal(a.variable) or key_value_refusal(a.value)
    if refusal is not None:
        raise refusal
    ctx = call.ctx
    async with ctx.state_lock:
        held = await load_keys(ctx.state)
        before = held.find(a.variable)
        if before is not None and not a.replace:
            raise Refused(
                Code.ALREADY_EXISTS,
                f"A key is already set as {a.variable}; replace it or remove it first.",
                field="variable",
            )
        if before is None and len(held.keys) >= MAX_KEYS:
            raise Refused(Code.ARGS_INVALID, f"At most {MAX_KEYS} keys are held.", field="variable")
        now = ctx.clock.now_ms()
        key = ProviderKey(
            provider=a.provider,
            variable=a.variable,
            value=a.value,
            set_at=now if before is None else before.set_at,
            replaced_at=None if before is None else now,
            granted=() if before is None else before.granted,
        )
        await save_keys(ctx.state, held.put(key))
    rule = "key-set" if before is None else "key-replaced"
    return Outcome(await _list(call), rule=rule, details=_details(key))


async def keys_remove(call: Call[KeyRef]) -> Outcome:
    """Remove a key and its grants. Refuses ``file-not-found`` (no key set as that variable).
    Audited ``key-removed`` with the fingerprint."""
    ctx = call.ctx
    async with ctx.state_lock:
        held = await load_keys(ctx.state)
        key = _must(held.find(call.args.variable), call.args.variable)
        await save_keys(ctx.state, held.without(key.variable))
    return Outcome(await _list(call), rule="key-removed", details=_details(key))


def _must(key: ProviderKey | None, variable: str) -> ProviderKey:
    if key is None:
        raise Refused(Code.FILE_NOT_FOUND, f"No key is set as {variable}.", field="variable")
    return key


async def keys_grant(call: Call[KeyGrantArgs]) -> Outcome:
    """Let the paired environment ``envKey`` use a key. Refuses ``file-not-found`` (no such
    key), ``environment-not-paired`` (this host holds no live bearer for ``envKey``). Audited
    ``key-granted`` with the fingerprint and the envKey."""
    a = call.args
    ctx = call.ctx
    async with ctx.state_lock:
        held = await load_keys(ctx.state)
        key = _must(held.find(a.variable), a.variable)
        if a.env_key not in await _paired(call):
            raise Refused(
                Code.ENVIRONMENT_NOT_PAIRED,
                "A key is granted only to a paired environment; pair it first.",
                field="envKey",
            )
        granted = tuple(sorted({*key.granted, a.env_key}))
        await save_keys(ctx.state, held.put(key.model_copy(update={"granted": granted})))
    return Outcome(await _list(call), rule="key-granted", details=_details(key, envKey=a.env_key))


async def keys_revoke_grant(call: Call[KeyGrantArgs]) -> Outcome:
    """Take a grant back (a grant not held is already taken back). Refuses ``file-not-found``
    (no such key). Audited ``key-grant-revoked`` with the fingerprint and the envKey."""
    a = call.args
    ctx = call.ctx
    async with ctx.state_lock:
        held = await load_keys(ctx.state)
        key = _must(held.find(a.variable), a.variable)
        granted = tuple(e for e in key.granted if e != a.env_key)
        if granted != key.granted:
            await save_keys(ctx.state, held.put(key.model_copy(update={"granted": granted})))
    return Outcome(
        await _list(call), rule="key-grant-revoked", details=_details(key, envKey=a.env_key)
    )
