"""Remote environments: environment servers on other machines, paired by a one-time code
(issue 15; seed 002 §1, §3-§4; SPEC §6). The rules; the adapter (the host worker's
:class:`~core.ports.RemoteLink`) only carries them out.

- **Where** (:func:`remote_origin`): a person types the server's URL; only its origin is kept —
  ``http`` or ``https``, a host, an optional port, no user, no path beyond ``/``, no query.
  The execute channel is ``ws(s)://<origin>/channel?envKey=…`` (:func:`channel_url`).
- **Egress** (:func:`allowed_origins`): the host reaches exactly the origins of the remote
  environments the operator added (their ``http(s)`` and ``ws(s)`` forms), plus — only while a
  claim is under way — the origin being claimed. Every other origin is refused by the adapter.
- **Claim** (:func:`parse_claim`, :func:`parse_identity`): what the server answers is untrusted
  text. A claim must name an envKey, a bearer of a bearer's form and the fingerprint of that
  envKey; the identity must name the same envKey. Anything else is ``peer-answer-invalid``.
- **Reconnect** (:data:`RECONNECT_DELAYS_MS`): after a remote's channel is lost the host tries
  again after each of these delays, then stops by itself and shows the remote unreachable; the
  next call tries once more. A call pending on a lost channel is answered
  ``environment-unreachable`` and never retried (:mod:`core.custody.peer_calls`).
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError

from core.custody.bearer import is_bearer_shaped
from core.custody.environment import ENV_KEY_PATTERN, Environments
from core.custody.pair_code import env_fingerprint
from core.json_bound import parse_json
from core.model import Contract
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = [
    "FENCED_COMMANDS",
    "MAX_COMMAND_OUTPUT_CHARS",
    "RECONNECT_DELAYS_MS",
    "ClaimAnswer",
    "CommandAnswer",
    "CommandRun",
    "FencedCommand",
    "RemoteState",
    "allowed_origins",
    "channel_url",
    "command_url",
    "local_name",
    "parse_claim",
    "parse_command_answer",
    "parse_identity",
    "refusal_from_answer",
    "remote_origin",
]

RECONNECT_DELAYS_MS = (500, 1_000, 2_000, 4_000, 8_000, 15_000)
"""The waits before each reconnect attempt after a lost channel (ms; about 30 s in all)."""

RemoteState = Literal["idle", "connected", "reconnecting", "unreachable", "revoked"]
"""How a remote stands now: ``idle`` paired, no channel yet (it opens on the next call)."""

MAX_URL_CHARS = 300
_LABEL = re.compile(r"[a-z0-9-]{1,63}")


def _is_host_name(host: str) -> bool:
    labels = host.split(".")
    return len(labels) <= 127 and all(
        _LABEL.fullmatch(label) and label[0] != "-" and label[-1] != "-" for label in labels
    )


def _url_refused(why: str) -> Refused:
    return Refused(Code.ARGS_INVALID, f"That is not a server address: {why}.", field="url")


def remote_origin(url: str) -> str:
    """The origin of the server at ``url`` (``http://127.0.0.1:8765``), lower-cased, default
    ports dropped. Refuses ``args-invalid`` (field ``url``) with a sentence for anything else:
    another scheme, no host, a user name or password, a path, a query or a fragment."""
    text = url.strip()
    if not text or len(text) > MAX_URL_CHARS:
        raise _url_refused(f"write it like http://host:port (at most {MAX_URL_CHARS} characters)")
    if "://" not in text:
        raise _url_refused("it must start with http:// or https://")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise _url_refused("its port must be a number from 1 to 65535") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _url_refused("it must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise _url_refused("it must not carry a user name or password")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise _url_refused("give only the server's address, with no path or query")
    host = (parts.hostname or "").lower()
    bracketed = host if ":" not in host else f"[{host}]"
    if not host or (":" not in host and not _is_host_name(host)):
        raise _url_refused("it names no host")
    default = 80 if scheme == "http" else 443
    suffix = "" if port in (None, default) else f":{port}"
    return f"{scheme}://{bracketed}{suffix}"


def _ws(origin: str) -> str:
    return ("wss" if origin.startswith("https:") else "ws") + origin[origin.index(":") :]


def channel_url(origin: str, env_key: str) -> str:
    """The execute channel of ``env_key`` at ``origin``: ``ws(s)://…/channel?envKey=…``."""
    return f"{_ws(origin)}/channel?envKey={env_key}"


def allowed_origins(environments: Environments, claiming: str | None = None) -> frozenset[str]:
    """Every origin this host may reach: each remote environment's, in its ``http(s)`` and
    ``ws(s)`` forms, and ``claiming`` (an origin being claimed now) when given."""
    origins = {e.origin for e in environments.environments if e.origin is not None}
    if claiming is not None:
        origins.add(claiming)
    return frozenset(o for origin in origins for o in (origin, _ws(origin)))


class ClaimAnswer(Contract):
    """What ``POST /api/pair/claim`` answers: the envKey, its bearer and its fingerprint."""

    model_config = Contract.model_config | {"hide_input_in_errors": True, "extra": "ignore"}

    env_key: str = Field(alias="envKey", pattern=ENV_KEY_PATTERN)
    bearer: Secret
    fingerprint: str = Field(max_length=64)


class Identity(Contract):
    """What ``GET /api/identity`` answers (public): name, envKey, fingerprint."""

    model_config = Contract.model_config | {"extra": "ignore"}

    name: str = Field(min_length=1, max_length=200)
    env_key: str = Field(alias="envKey", pattern=ENV_KEY_PATTERN)
    fingerprint: str = Field(max_length=64)


def _invalid(why: str) -> Refused:
    return Refused(
        Code.PEER_ANSWER_INVALID, f"The server's answer was not what a Voicebox server says: {why}."
    )


def parse_claim(text: str) -> ClaimAnswer:
    """The server's claim answer, checked: envKey, a bearer of a bearer's form, the fingerprint
    of that envKey. Refuses ``peer-answer-invalid`` (the answer's values never in the text)."""
    try:
        answer = ClaimAnswer.model_validate_json(text)
    except ValidationError:
        raise _invalid("the pairing answer has the wrong shape") from None
    if not is_bearer_shaped(answer.bearer):
        raise _invalid("it handed no pairing bearer")
    if answer.fingerprint != env_fingerprint(answer.env_key):
        raise _invalid("its fingerprint does not belong to its envKey")
    return answer


def parse_identity(text: str, env_key: str) -> Identity:
    """The server's identity, checked to name ``env_key``; refuses ``peer-answer-invalid``."""
    try:
        identity = Identity.model_validate_json(text)
    except ValidationError:
        raise _invalid("its identity has the wrong shape") from None
    if identity.env_key != env_key:
        raise _invalid("its identity names another envKey than its pairing")
    return identity


def local_name(server_name: str, environments: Environments) -> str:
    """A name for the remote in this host's list: the server's own, folded to
    ``[a-z][a-z0-9-]{0,31}`` and made unique with ``-2``, ``-3``…"""
    folded = re.sub(r"[^a-z0-9-]{1,200}", "-", server_name.lower()[:200]).strip("-")
    if not folded or not folded[0].isalpha():
        folded = f"remote-{folded}".rstrip("-")
    folded = folded[:28].rstrip("-")
    taken = {e.name for e in environments.environments} | {"local"}
    name, n = folded, 2
    while name in taken:
        name, n = f"{folded}-{n}", n + 1
    return name


MAX_COMMAND_OUTPUT_CHARS = 1_000_000
"""The most of a fenced command's kept output the host hands the page, in characters."""

FENCED_COMMANDS = ("exec", "git/init", "git/config")
"""The fenced environment commands of seed 002 §4, by their route's last part."""

FencedCommand = Literal["exec", "git/init", "git/config"]


def command_url(origin: str, env_key: str, command: FencedCommand) -> str:
    """``POST`` route of a fenced ``command`` at the server ``origin`` for ``env_key``
    (``/api/environments/:key/exec``, ``…/git/init``, ``…/git/config``)."""
    return f"{origin}/api/environments/{env_key}/{command}"


class CommandRun(Contract):
    """What one fenced command did (seed 002 §4; docs/remote.md): ``exit_status`` is the exit
    code, or ``-N`` when signal ``N`` ended it; ``duration_ms`` in ms; ``timed_out`` when the
    time limit killed its process group; ``truncated`` when the output cap cut it;
    ``output_bytes`` and ``output_sha256`` of the whole output; ``output_b64`` what was kept,
    base64. The server answers this plus its audit number ``logged``."""

    model_config = Contract.model_config | {"serialize_by_alias": True, "populate_by_name": True}

    exit_status: int = Field(alias="exitStatus")
    duration_ms: int = Field(alias="durationMs", ge=0)
    timed_out: bool = Field(alias="timedOut")
    truncated: bool
    output_bytes: int = Field(alias="outputBytes", ge=0)
    output_sha256: str = Field(alias="outputSha256", pattern=r"^[0-9a-f]{64}$")
    output_b64: str = Field(alias="outputB64", max_length=16 * 1024 * 1024)


class CommandAnswer(CommandRun):
    """A fenced command's answer as the server sends it: :class:`CommandRun` and ``logged``
    (its audit number, ``None`` without an audit root)."""

    logged: int | None = None


def parse_command_answer(text: str) -> CommandAnswer:
    """The server's answer to a fenced command; refuses ``peer-answer-invalid``."""
    try:
        return CommandAnswer.model_validate_json(text)
    except ValidationError:
        raise _invalid("its command answer has the wrong shape") from None


def refusal_from_answer(status: int, text: str) -> Refused | None:
    """The refusal a server's error answer names (by its code, this host's sentence), or
    ``None`` for a 2xx answer. An error answer without a known code is
    ``environment-unreachable`` (a proxy's page, a server that is not ours)."""
    if 200 <= status < 300:
        return None
    try:
        code = Code(parse_json(text)["refusal"]["code"])
    except (Refused, ValueError, KeyError, TypeError):
        return Refused(Code.ENVIRONMENT_UNREACHABLE, f"The server answered HTTP {status}.")
    return Refused(code)
