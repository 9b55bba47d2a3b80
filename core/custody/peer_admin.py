"""The local operator's acts on peer environments: create, pair, unpair, revoke (SPEC §6).

The page asks for these as the local operator and never sees a token. The host does the rest:

- **create** starts a new environment server (in E1: a dedicated worker with its own fenced
  OPFS root, HOST_DIR and audit), learns its ``envKey``, claims its host token once (trust on
  first use: only the creator can), keeps that token in its own HOST_DIR
  (``peer-tokens.json``, sealed at rest by the browser adapter) and records the environment as
  a ``peer`` in its ``environments.json``;
- **pair** asks the peer, presenting the peer's host token, to issue a bearer bound to the
  peer's ``envKey`` (seed 002: issue), then records it as this host's outbound bearer
  (complete — which needs this host's own token, read from its HOST_DIR);
- **revoke** asks the peer to revoke it: the peer moves its bearers to ``revokedBearers`` and
  closes every live channel authenticated with them (1008 ``pairing-revoked``). This host keeps
  presenting its now-revoked bearer, so the next call is answered ``pairing-revoked`` by the
  peer — never mistaken for ``bearer-refused`` or ``environment-not-paired``;
- **unpair** forgets the outbound bearer here; the next call is ``environment-not-paired``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import Field, ValidationError

from core.custody.environment import Environments, load_environments, save_environments
from core.custody.host_token import ensure_host_token
from core.custody.pairing import PAIRINGS_DOC, PairingStore, load_pairings
from core.custody.peer_answers import invalid_answer, relayed_refusal
from core.gestures import HUMAN_UI
from core.model import Contract
from core.ports import Clock, EnvironmentServers, HostState, Randomness
from core.refusals import Code, RefusalBody, Refused
from core.secret import REVEAL, Secret

__all__ = ["ENV_NAME_PATTERN", "ENV_NAME_RULE", "PeerAdmin", "PeerTokens"]

ENV_NAME_PATTERN = r"^[a-z][a-z0-9-]{0,31}$"
ENV_NAME_RULE = "1–32 lower-case letters, digits or '-'"
"""What :data:`ENV_NAME_PATTERN` allows, in words (the refusal's sentence, the page's hint)."""
PEER_TOKENS_DOC = "peer-tokens.json"


class PeerTokens(Contract):
    """``peer-tokens.json`` (HOST_DIR): the host token of each peer this host created."""

    tokens: dict[str, Secret] = Field(default_factory=dict, max_length=1000)


async def _load_tokens(state: HostState) -> PeerTokens:
    raw = await state.load(PEER_TOKENS_DOC)
    return PeerTokens() if raw is None else PeerTokens.model_validate_json(raw)


async def _store_tokens(state: HostState, tokens: PeerTokens) -> None:
    text = tokens.model_dump_json(context={REVEAL: True})
    await state.store(PEER_TOKENS_DOC, text.encode("utf-8"))


def _refused(answer: dict[str, Any], words: frozenset[str]) -> Refused:
    """The peer's admin refusal, relayed as any peer refusal is
    (:mod:`core.custody.peer_answers`)."""
    try:
        body = RefusalBody.model_validate(answer.get("refusal"))
    except ValidationError:
        return invalid_answer(mutating=True)
    return relayed_refusal(body, mutating=True, words=words)


class PeerAdmin:
    """Peer acts for the local operator (see module docstring).

    ``field_words`` are the field names this host's models declare: a peer's admin refusal is
    relayed as any peer refusal is, naming only those (:mod:`core.custody.peer_answers`).
    """

    def __init__(
        self,
        state: HostState,
        servers: EnvironmentServers,
        pairing: PairingStore,
        clock: Clock,
        random: Randomness,
        field_words: frozenset[str],
    ) -> None:
        self._words = field_words
        self._state = state
        self._servers = servers
        self._pairing = pairing
        self._clock = clock
        self._random = random

    async def _admin(self, name: str, **request: Any) -> dict[str, Any]:
        await self._servers.start(name)
        payload = {k: (v.reveal() if isinstance(v, Secret) else v) for k, v in request.items()}
        answer = json.loads(await self._servers.admin(name, json.dumps(payload)))
        if not answer.get("ok"):
            raise _refused(answer, self._words)
        return answer

    async def environments(self) -> Environments:
        """This host's ``environments.json``."""
        return await load_environments(self._state)

    async def peer(self, env_key: str) -> tuple[str, Secret]:
        """The peer's name and its host token; ``unknown-environment`` if not a peer of ours."""
        env = (await self.environments()).resolve(env_key)
        token = (await _load_tokens(self._state)).tokens.get(env.key)
        if env.kind != "peer" or token is None:
            raise Refused(
                Code.UNKNOWN_ENVIRONMENT,
                "That envKey is not a peer this host created.",
                field="envKey",
            )
        return env.name, token

    async def create(self, name: str) -> str:
        """Start a new environment server called ``name``; return its envKey.

        Refuses ``name-invalid`` (``[a-z][a-z0-9-]{0,31}``, unique) and whatever the server
        refuses.
        """
        envs = await self.environments()
        if name == "local":
            raise Refused(
                Code.NAME_INVALID,
                "'local' names this browser's own environment; choose another name.",
                field="name",
            )
        if not re.fullmatch(ENV_NAME_PATTERN, name):
            raise Refused(
                Code.NAME_INVALID,
                f"An environment name is {ENV_NAME_RULE}.",
                field="name",
            )
        if any(e.name == name for e in envs.environments):
            raise Refused(
                Code.ALREADY_EXISTS, "An environment with that name exists.", field="name"
            )
        claimed = await self._admin(name, op="claim")
        env_key = str(claimed["envKey"])
        tokens = await _load_tokens(self._state)
        tokens = PeerTokens(tokens={**tokens.tokens, env_key: Secret(str(claimed["hostToken"]))})
        await _store_tokens(self._state, tokens)
        await save_environments(
            self._state, envs.added(env_key, name, "peer", self._clock.now_ms())
        )
        return env_key

    async def pair(self, env_key: str) -> int | None:
        """Pair with the peer ``env_key``; return the audit number of the completion."""
        name, token = await self.peer(env_key)
        issued = await self._admin(name, op="pair.issue", hostToken=token, envKey=env_key)
        own = await ensure_host_token(self._state, self._random)
        done = await self._pairing.complete(
            own, env_key, Secret(str(issued["bearer"])), actor=HUMAN_UI
        )
        return done.logged

    async def revoke(self, env_key: str) -> dict[str, Any]:
        """Have the peer revoke this pairing now; return its answer (counts, no secret)."""
        name, token = await self.peer(env_key)
        answer = await self._admin(name, op="pair.revoke", hostToken=token, envKey=env_key)
        pairings = await load_pairings(self._state)
        marked = pairings.with_outbound_revoked(env_key, self._clock.now_ms())
        if marked != pairings:
            await self._state.store(PAIRINGS_DOC, marked.to_json())
        return {k: answer[k] for k in ("revoked", "channelsClosed", "logged") if k in answer}

    async def unpair(self, env_key: str) -> None:
        """Forget this host's outbound bearer for ``env_key`` (nothing is sent to the peer)."""
        await self.peer(env_key)
        pairings = await load_pairings(self._state)
        changed, _ = pairings.with_revoked(env_key, self._clock.now_ms())
        await self._state.store(PAIRINGS_DOC, changed.to_json())

    async def standing(self, env_key: str) -> Literal["unpaired", "paired", "revoked"]:
        """Whether this host holds a bearer for ``env_key`` and whether the peer revoked it
        (see :meth:`core.custody.pairing.Pairings.outbound_standing`)."""
        return (await load_pairings(self._state)).outbound_standing(env_key)
