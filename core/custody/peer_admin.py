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
- **unpair** forgets the outbound bearer here; the next call is ``environment-not-paired``;
- **add a remote** (issue 15, :mod:`core.custody.remote`): the person gives a server's URL and
  the one-time code its operator minted; this host claims the code at the server
  (``POST /api/pair/claim``) and receives the bearer itself, checks the answer, records the
  environment (kind ``peer``, with its ``origin``) and the bearer as ``pair/complete`` would
  (HOST_DIR, sealed at rest). The page gets the envKey, name, origin and fingerprint — never the
  bearer. **Revoking a remote** presents that bearer to ``POST /api/pair/revoke`` (the holder
  gives up its own pairing); the server closes its channels 1008 ``pairing-revoked``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Set
from typing import Any, Literal

from pydantic import Field, ValidationError

from core.custody.environment import Environments, load_environments, save_environments
from core.custody.host_token import ensure_host_token
from core.custody.pair_code import env_fingerprint
from core.custody.pairing import PAIRINGS_DOC, PairingStore, load_pairings
from core.custody.peer_answers import invalid_answer, relayed_refusal
from core.custody.remote import (
    CommandAnswer,
    FencedCommand,
    allowed_origins,
    check_protocol,
    command_url,
    local_name,
    parse_claim,
    parse_command_answer,
    parse_identity,
    refusal_from_answer,
    remote_origin,
)
from core.gestures import HUMAN_UI
from core.json_bound import parse_json
from core.model import Contract
from core.policy import Policy
from core.ports import Clock, EnvironmentServers, HostState, Randomness, RemoteLink
from core.refusals import Code, RefusalBody, Refused
from core.secret import REVEAL, Secret

__all__ = ["ENV_NAME_PATTERN", "ENV_NAME_RULE", "MissionRoute", "PeerAdmin", "PeerTokens"]

MissionRoute = Literal["board", "spawn", "cancel", "log", "evidence", "diff", "merge", "land"]
"""The mission routes of an environment server the browser host calls (issue 30)."""

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


def _refused(answer: dict[str, Any], words: Set[str]) -> Refused:
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
    ``link`` reaches remote environments (``None``: this placement has none, and adding one
    refuses ``operation-unknown``); ``policy`` returns the current policy, whose
    ``peer_deadline_ms`` bounds each whole request to a remote (issue 29 item 6).
    """

    def __init__(
        self,
        state: HostState,
        servers: EnvironmentServers,
        pairing: PairingStore,
        clock: Clock,
        random: Randomness,
        field_words: Set[str],
        link: RemoteLink | None = None,
        *,
        policy: Callable[[], Policy] = Policy,
    ) -> None:
        self._policy = policy
        self._words = field_words
        self._link = link
        self._state = state
        self._servers = servers
        self._pairing = pairing
        self._clock = clock
        self._random = random

    async def _admin(self, name: str, **request: Any) -> dict[str, Any]:
        await self._servers.start(name)
        payload = {k: (v.reveal() if isinstance(v, Secret) else v) for k, v in request.items()}
        try:
            answer = parse_json(await self._servers.admin(name, json.dumps(payload)))
        except Refused:
            raise invalid_answer(mutating=True) from None
        if not isinstance(answer, dict):
            raise invalid_answer(mutating=True)
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

    def _remote_link(self) -> RemoteLink:
        if self._link is None:
            raise Refused(Code.OPERATION_UNKNOWN, "This host cannot reach remote environments.")
        return self._link

    async def _request(
        self, method: str, url: str, body: str | None = None, *, authorization: str | None = None
    ) -> tuple[int, str]:
        """One request to a remote, bounded by the policy's ``peer_deadline_ms``."""
        return await self._remote_link().request(
            method,
            url,
            body,
            authorization=authorization,
            deadline_ms=self._policy().peer_deadline_ms,
        )

    async def allow_remotes(self, claiming: str | None = None) -> None:
        """Hand the adapter the egress allow-list: the origins of the remotes in
        ``environments.json`` (and ``claiming`` while a claim is under way)."""
        if self._link is not None:
            self._link.allow(allowed_origins(await self.environments(), claiming))

    async def add_remote(self, url: str, code: Secret) -> str:
        """Claim the one-time ``code`` at the server ``url``; record the remote and its
        bearer; return its envKey (see module docstring).

        The server's identity is read first (``GET /api/identity``): a server speaking another
        protocol version is refused ``protocol-version-unsupported`` before the code is spent
        (issue 29 item 15).

        Refuses ``args-invalid`` (``url``), ``environment-unreachable`` (no answer, or not
        within the deadline), ``network-egress-refused`` (this site's policy kept the request
        in the browser), ``message-too-large`` (an answer past its bound),
        ``protocol-version-unsupported``, ``pairing-code-refused`` / ``rate-limited`` (the
        server's), ``peer-answer-invalid`` (an answer outside the contract),
        ``already-exists`` (that envKey is listed here).
        """
        self._remote_link()
        origin = remote_origin(url)
        await self.allow_remotes(claiming=origin)
        try:
            status, text = await self._request("GET", f"{origin}/api/identity")
            refused = refusal_from_answer(status, text)
            if refused is not None:
                raise refused
            check_protocol(text, origin)
            identity = parse_identity(text)
            status, text = await self._request(
                "POST", f"{origin}/api/pair/claim", json.dumps({"code": code.reveal()})
            )
            refused = refusal_from_answer(status, text)
            if refused is not None:
                raise refused
            claim = parse_claim(text, identity.env_key)
            envs = await self.environments()
            if envs.find(claim.env_key) is not None:
                raise Refused(
                    Code.ALREADY_EXISTS,
                    "That server is already listed here; revoke or remove it first.",
                    field="url",
                )
            name = local_name(identity.name, envs)
            await save_environments(
                self._state,
                envs.added(claim.env_key, name, "peer", self._clock.now_ms(), origin=origin),
            )
            own = await ensure_host_token(self._state, self._random)
            await self._pairing.complete(own, claim.env_key, claim.bearer, actor=HUMAN_UI)
            return claim.env_key
        finally:
            await self.allow_remotes()

    async def remote(self, env_key: str) -> tuple[str, Secret | None]:
        """The origin of the remote ``env_key`` and the bearer this host holds for it;
        ``unknown-environment`` when it is not a remote."""
        env = (await self.environments()).resolve(env_key)
        if env.origin is None:
            raise Refused(Code.UNKNOWN_ENVIRONMENT, "That envKey is not a remote.", field="envKey")
        return env.origin, (await load_pairings(self._state)).outbound_for(env.key)

    async def is_remote(self, env_key: str) -> bool:
        """True when ``env_key`` names a remote environment of this host."""
        env = (await self.environments()).find(env_key)
        return env is not None and env.origin is not None

    async def _revoke_remote(self, env_key: str) -> dict[str, Any]:
        origin, bearer = await self.remote(env_key)
        if bearer is None:
            raise Refused(Code.ENVIRONMENT_NOT_PAIRED, field="envKey")
        status, text = await self._request(
            "POST",
            f"{origin}/api/pair/revoke",
            json.dumps({"envKey": env_key}),
            authorization=f"Bearer {bearer.reveal()}",
        )
        refused = refusal_from_answer(status, text)
        if refused is not None and refused.code != Code.PAIRING_REVOKED:
            raise refused
        try:
            answer = {} if refused is not None else parse_json(text)
        except Refused:
            raise invalid_answer(mutating=True) from None
        if not isinstance(answer, dict):
            raise invalid_answer(mutating=True)
        await self._mark_revoked(env_key)
        return {
            k: answer[k]
            for k in ("revoked", "channelsClosed", "logged")
            if isinstance(answer.get(k), int)
        }

    async def fenced(
        self, env_key: str, command: FencedCommand, body: dict[str, Any]
    ) -> CommandAnswer:
        """Run one fenced ``command`` (``exec``, ``git/init``, ``git/config``) in the remote
        ``env_key`` with the bearer this host holds (seed 002 §4): the server admits it, runs it
        and audits it. ``body`` is the route's JSON body (``{project, argv, timeLimitMs}``…).

        Refuses ``unknown-environment`` (not a remote), ``environment-not-paired`` (no bearer
        here), ``environment-unreachable``, ``peer-answer-invalid``, and whatever the server
        refuses by code (``tool-disabled``, ``read-only-mode``, ``pairing-revoked`` — which also
        marks the bearer revoked here —, ``args-invalid``…).
        """
        origin, bearer = await self.remote(env_key)
        if bearer is None:
            raise Refused(Code.ENVIRONMENT_NOT_PAIRED, field="envKey")
        status, text = await self._request(
            "POST",
            command_url(origin, env_key, command),
            json.dumps(body),
            authorization=f"Bearer {bearer.reveal()}",
        )
        refused = refusal_from_answer(status, text)
        if refused is not None:
            if refused.code == Code.PAIRING_REVOKED:
                await self._mark_revoked(env_key)
            raise refused
        return parse_command_answer(text)

    async def mission_route(
        self,
        env_key: str,
        op: MissionRoute,
        body: dict[str, Any],
        refine: Callable[[Refused, str], Refused] | None = None,
    ) -> Any:
        """Ask the remote ``env_key`` one of its mission routes (issue 30, the browser side:
        ``POST /api/environments/:key/missions/<op>`` — ``board``, ``spawn``, ``cancel``,
        ``log``, ``evidence``) with the bearer this host holds; the server checks every rule
        again. Returns the answer's JSON data, read through the one bounded parser (the
        caller checks its shape). Refuses as :meth:`fenced` does (``environment-not-paired``,
        ``environment-unreachable``, ``pairing-revoked``, whatever the server refuses by
        code). ``refine`` rewrites a refusal from its answer text (a merge's conflict lists its
        files: :func:`core.missions.remote_runs.merge_refusal`)."""
        origin, bearer = await self.remote(env_key)
        if bearer is None:
            raise Refused(Code.ENVIRONMENT_NOT_PAIRED, field="envKey")
        status, text = await self._request(
            "POST",
            f"{origin}/api/environments/{env_key}/missions/{op}",
            json.dumps(body),
            authorization=f"Bearer {bearer.reveal()}",
        )
        refused = refusal_from_answer(status, text)
        if refused is not None:
            if refused.code == Code.PAIRING_REVOKED:
                await self._mark_revoked(env_key)
            raise refused if refine is None else refine(refused, text)
        try:
            return parse_json(text)
        except Refused:
            raise invalid_answer(mutating=op in ("spawn", "cancel", "merge", "land")) from None

    async def identity_text(self, env_key: str) -> str:
        """The public identity (``GET /api/identity``) of the remote ``env_key`` as text: its
        ``runners`` say which pinned runners are live (issue 30). Refuses
        ``unknown-environment``, ``environment-unreachable``."""
        origin, _ = await self.remote(env_key)
        status, text = await self._request("GET", f"{origin}/api/identity")
        refused = refusal_from_answer(status, text)
        if refused is not None:
            raise refused
        return text

    async def _mark_revoked(self, env_key: str) -> None:
        pairings = await load_pairings(self._state)
        marked = pairings.with_outbound_revoked(env_key, self._clock.now_ms())
        if marked != pairings:
            await self._state.store(PAIRINGS_DOC, marked.to_json())

    async def revoked_by_peer(self, env_key: str) -> None:
        """The peer closed a channel 1008 ``pairing-revoked``: mark the bearer this host holds
        for ``env_key`` revoked (kept, so the next call is still answered ``pairing-revoked``)."""
        await self._mark_revoked(env_key)

    async def pair(self, env_key: str) -> int | None:
        """Pair with the peer ``env_key``; return the audit number of the completion."""
        if await self.is_remote(env_key):
            raise Refused(
                Code.ENVIRONMENT_NOT_PAIRED,
                "A remote environment pairs by a new one-time code from its operator "
                "(voicebox-env pair-code): remove it and add it again with the code.",
            )
        name, token = await self.peer(env_key)
        issued = await self._admin(name, op="pair.issue", hostToken=token, envKey=env_key)
        own = await ensure_host_token(self._state, self._random)
        done = await self._pairing.complete(
            own, env_key, Secret(str(issued["bearer"])), actor=HUMAN_UI
        )
        return done.logged

    async def revoke(self, env_key: str) -> dict[str, Any]:
        """Have the peer revoke this pairing now; return its answer (counts, no secret)."""
        if await self.is_remote(env_key):
            return await self._revoke_remote(env_key)
        name, token = await self.peer(env_key)
        answer = await self._admin(name, op="pair.revoke", hostToken=token, envKey=env_key)
        await self._mark_revoked(env_key)
        return {k: answer[k] for k in ("revoked", "channelsClosed", "logged") if k in answer}

    async def unpair(self, env_key: str) -> None:
        """Forget this host's outbound bearer for ``env_key`` (nothing is sent to the peer)."""
        if not await self.is_remote(env_key):
            await self.peer(env_key)
        pairings = await load_pairings(self._state)
        changed, _ = pairings.with_revoked(env_key, self._clock.now_ms())
        await self._state.store(PAIRINGS_DOC, changed.to_json())

    async def standing(self, env_key: str) -> Literal["unpaired", "paired", "revoked"]:
        """Whether this host holds a bearer for ``env_key`` and whether the peer revoked it
        (see :meth:`core.custody.pairing.Pairings.outbound_standing`)."""
        return (await load_pairings(self._state)).outbound_standing(env_key)

    async def remove_remote(self, env_key: str) -> None:
        """Forget the remote ``env_key``: its bearer and its entry (and so its origin leaves
        the egress allow-list). Nothing is sent to the server; revoke first to end the pairing
        there too."""
        await self.remote(env_key)
        pairings = await load_pairings(self._state)
        changed, _ = pairings.with_revoked(env_key, self._clock.now_ms())
        await self._state.store(PAIRINGS_DOC, changed.to_json())
        await save_environments(self._state, (await self.environments()).removed(env_key))
        await self.allow_remotes()

    def fingerprint(self, env_key: str) -> str:
        """The fingerprint a person compares with the server operator's."""
        return env_fingerprint(env_key)
