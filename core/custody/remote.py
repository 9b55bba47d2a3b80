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
- **Answers are bounded** (issue 29 item 6, :class:`AnswerBody`): the adapter streams an HTTP
  answer's body and hands it here chunk by chunk; past :data:`MAX_ANSWER_BYTES` (or a
  ``content-length`` over it) the answer is refused ``message-too-large`` and the adapter stops
  reading (it cancels the stream); an answer not finished within the call's deadline (the
  policy's ``peer_deadline_ms``, for the whole answer, not per read) is refused
  ``environment-unreachable`` saying so (:func:`answer_overdue`). A channel message is measured
  before it is converted (:data:`MAX_CHANNEL_TEXT_UNITS`, :data:`MAX_CHANNEL_BINARY_BYTES`);
  past them the channel is closed ``message-too-large``. A remote's bytes never hold the host.
- **Not sent** (:func:`blocked_by_site_policy`): a request the site's own Content-Security-Policy
  kept in the browser is ``network-egress-refused`` with how to serve the site — never
  "could not be reached".
- **Protocol** (:func:`check_protocol`): ``GET /api/identity`` answers the server's protocol
  version; the host checks it when it pairs and before every (re)connect, and refuses
  ``protocol-version-unsupported`` naming both versions.
- **Reconnect** (:data:`RECONNECT_DELAYS_MS`): after a remote's channel is lost the host tries
  again after each of these delays, then stops by itself and shows the remote unreachable; the
  next call tries once more. A call pending on a lost channel is answered
  ``environment-unreachable`` and never retried (:mod:`core.custody.peer_calls`).
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, ValidationError

from core.custody.bearer import is_bearer_shaped
from core.custody.environment import Environments
from core.custody.pair_code import env_fingerprint
from core.custody.wire import MAX_CHUNK_BYTES, MAX_FRAME_BYTES
from core.json_bound import parse_json
from core.model import Contract
from core.protocol import PROTOCOL_VERSION
from core.refusals import Code, Refused
from core.secret import Secret
from core.vocabulary import EnvKey, Sha256Hex

__all__ = [
    "FENCED_COMMANDS",
    "MAX_ANSWER_BYTES",
    "MAX_CHANNEL_BINARY_BYTES",
    "MAX_CHANNEL_TEXT_UNITS",
    "MAX_COMMAND_OUTPUT_CHARS",
    "RECONNECT_DELAYS_MS",
    "AnswerBody",
    "ClaimAnswer",
    "CommandAnswer",
    "CommandRun",
    "FencedCommand",
    "RemoteChanged",
    "RemoteState",
    "allowed_origins",
    "answer_overdue",
    "answer_too_large",
    "blocked_by_site_policy",
    "channel_message_over",
    "channel_message_too_large",
    "channel_url",
    "check_protocol",
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

MAX_ANSWER_BYTES = 1 << 20
"""The most bytes of one HTTP answer from a remote the host reads (issue 29 item 6): 1 MiB —
an identity, a claim, a fenced command's answer (its kept output is at most 1 MiB of base64
in practice; the server caps it at its own bound)."""
MAX_CHANNEL_TEXT_UNITS = MAX_FRAME_BYTES
"""A channel's text message longer than this many UTF-16 units is certainly over
:data:`~core.custody.wire.MAX_FRAME_BYTES` (each unit is at least one UTF-8 byte): measured
before it is converted, it closes the channel ``message-too-large``."""
MAX_CHANNEL_BINARY_BYTES = 1 + 64 + MAX_CHUNK_BYTES
"""The largest binary message a channel carries: the id's length byte, an id of at most 64
characters and one chunk (:func:`core.custody.wire.parse_chunk_message`)."""


class RemoteChanged(Contract):
    """What the host tells the page, unasked, when a remote's state changed (issue 29 item 15):
    its envKey and its state now (``removed``: forgotten here). The page lists the
    environments again; nothing secret is in it."""

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)

    type: Literal["env.changed"] = "env.changed"
    env_key: EnvKey = Field(alias="envKey")
    state: RemoteState | Literal["removed"]


def answer_too_large(origin: str, limit: int = MAX_ANSWER_BYTES) -> Refused:
    """``message-too-large``: the server at ``origin`` answered more than ``limit`` bytes and
    the host stopped reading (issue 29 item 6) — the server was reached."""
    return Refused(
        Code.MESSAGE_TOO_LARGE,
        f"The server at {origin} answered more than {limit} bytes; the host stopped reading "
        "its answer (a Voicebox server's answers are smaller: is this the right address?).",
    )


def answer_overdue(origin: str, deadline_ms: int) -> Refused:
    """``environment-unreachable``: the server at ``origin`` did not finish its answer within
    ``deadline_ms`` (a trickling or never-ending answer; issue 29 item 6)."""
    return Refused(
        Code.ENVIRONMENT_UNREACHABLE,
        f"The server at {origin} did not finish its answer within {deadline_ms} ms; the host "
        "stopped waiting for it.",
    )


def channel_message_too_large(size: int, binary: bool) -> Refused:
    """``message-too-large``: a channel message of ``size`` (bytes, or UTF-16 units of a
    text) over :data:`MAX_CHANNEL_BINARY_BYTES` / :data:`MAX_CHANNEL_TEXT_UNITS`."""
    bound = MAX_CHANNEL_BINARY_BYTES if binary else MAX_FRAME_BYTES
    return Refused(
        Code.MESSAGE_TOO_LARGE,
        f"The server sent a channel message of at least {size} bytes (at most {bound}); the "
        "host closed the channel.",
    )


def channel_message_over(size: int, binary: bool) -> bool:
    """True when a channel message of ``size`` (bytes of a binary one, UTF-16 units of a
    text) is over its bound and closes the channel (module docstring)."""
    return size > (MAX_CHANNEL_BINARY_BYTES if binary else MAX_CHANNEL_TEXT_UNITS)


def blocked_by_site_policy(origin: str) -> Refused:
    """``network-egress-refused``: this site's Content-Security-Policy (its worker scripts'
    ``connect-src``) does not list ``origin``, so the browser kept the request — it never left
    (issue 29 item 15). Says how to serve the site so that it may."""
    return Refused(
        Code.NETWORK_EGRESS_REFUSED,
        f"This site's Content-Security-Policy does not let the host reach {origin}: the request "
        "never left the browser. Serve the site with --peer-origin "
        f"{origin} (voicebox's own server, e.g. nox -s serve -- --peer-origin {origin}); on "
        f"another static host, add {origin} and {_ws(origin)} to connect-src in the "
        "Content-Security-Policy header of the worker scripts (worker/*.mjs) — "
        "docs/operations.md.",
        field="url",
    )


class AnswerBody:
    """One HTTP answer's body, taken chunk by chunk as the adapter streams it (issue 29 item 6).

    ``declared(length)`` is given the ``content-length`` header (text or ``None``) before any
    byte is read; ``admit(size)`` is asked before a chunk of ``size`` bytes is copied;
    ``take(chunk)`` keeps it; ``text()`` is the body decoded as UTF-8 (bad bytes replaced —
    the parsers refuse what is not theirs). Each refuses ``message-too-large``
    (:func:`answer_too_large`) once the body is certainly past ``limit`` bytes: the adapter then
    cancels the stream and reads no more.
    """

    def __init__(self, origin: str, limit: int = MAX_ANSWER_BYTES) -> None:
        self.origin = origin
        self.limit = limit
        self.size = 0
        self._parts: list[bytes] = []

    def declared(self, length: str | None) -> None:
        """Refuse at once when the answer declares more than ``limit`` bytes."""
        if length is not None and length.strip().isdigit() and int(length) > self.limit:
            raise answer_too_large(self.origin, self.limit)

    def admit(self, size: int) -> None:
        """Refuse when ``size`` more bytes would pass ``limit`` (before they are copied)."""
        if self.size + size > self.limit:
            raise answer_too_large(self.origin, self.limit)

    def take(self, chunk: bytes) -> None:
        """Keep ``chunk`` (refused as :meth:`admit` when it passes the bound)."""
        self.admit(len(chunk))
        self.size += len(chunk)
        self._parts.append(chunk)

    def text(self) -> str:
        """The body so far, decoded (UTF-8, bad bytes replaced)."""
        return b"".join(self._parts).decode("utf-8", "replace")


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

    model_config = ConfigDict(hide_input_in_errors=True, extra="ignore")

    env_key: EnvKey = Field(alias="envKey")
    bearer: Secret
    fingerprint: str = Field(max_length=64)


class Identity(Contract):
    """What ``GET /api/identity`` answers (public): name, envKey, fingerprint and the protocol
    version it speaks (:data:`core.protocol.PROTOCOL_VERSION`; servers before issue 29 sent
    none and spoke version 1)."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200)
    env_key: EnvKey = Field(alias="envKey")
    fingerprint: str = Field(max_length=64)
    protocol: int = 1


class _Versioned(Contract):
    """The one field read from an identity before its shape: another version's identity may
    have another shape, and its version is then the refusal."""

    model_config = ConfigDict(extra="ignore")

    protocol: int = 1


def check_protocol(text: str, origin: str) -> None:
    """Refuse ``protocol-version-unsupported`` when the identity ``text`` of the server at
    ``origin`` names another protocol version than :data:`core.protocol.PROTOCOL_VERSION`
    (issue 29 item 15); the sentence names both. An identity that does not parse passes here
    (:func:`parse_identity` refuses it ``peer-answer-invalid``)."""
    try:
        theirs = _Versioned.model_validate_json(text).protocol
    except (ValueError, RecursionError):  # ValidationError too: not an identity at all
        return
    if theirs != PROTOCOL_VERSION:
        raise Refused(
            Code.PROTOCOL_VERSION_UNSUPPORTED,
            f"The environment server at {origin} speaks protocol version {theirs}; this host "
            f"speaks version {PROTOCOL_VERSION}. Update the older of the two (the server: "
            "install the same Voicebox release; this page: reload it).",
        )


def _invalid(why: str) -> Refused:
    return Refused(
        Code.PEER_ANSWER_INVALID, f"The server's answer was not what a Voicebox server says: {why}."
    )


def parse_claim(text: str, env_key: str | None = None) -> ClaimAnswer:
    """The server's claim answer, checked: envKey (``env_key``, the one its identity named,
    when given), a bearer of a bearer's form, the fingerprint of that envKey. Refuses
    ``peer-answer-invalid`` (the answer's values never in the text)."""
    try:
        answer = ClaimAnswer.model_validate_json(text)
    except ValidationError:
        raise _invalid("the pairing answer has the wrong shape") from None
    if not is_bearer_shaped(answer.bearer):
        raise _invalid("it handed no pairing bearer")
    if answer.fingerprint != env_fingerprint(answer.env_key):
        raise _invalid("its fingerprint does not belong to its envKey")
    if env_key is not None and answer.env_key != env_key:
        raise _invalid("its identity names another envKey than its pairing")
    return answer


def parse_identity(text: str, env_key: str | None = None) -> Identity:
    """The server's identity, checked to name ``env_key`` (when given); refuses
    ``peer-answer-invalid``. Check its version first (:func:`check_protocol`)."""
    try:
        identity = Identity.model_validate_json(text)
    except ValidationError:
        raise _invalid("its identity has the wrong shape") from None
    if env_key is not None and identity.env_key != env_key:
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

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)

    exit_status: int = Field(alias="exitStatus")
    duration_ms: int = Field(alias="durationMs", ge=0)
    timed_out: bool = Field(alias="timedOut")
    truncated: bool
    output_bytes: int = Field(alias="outputBytes", ge=0)
    output_sha256: Sha256Hex = Field(alias="outputSha256")
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


_NO_REMOTE_SANDBOX = (
    "That environment runs commands only inside a process sandbox, and it has none: its "
    "operator installs bubblewrap there (or opts out with --exec-unsandboxed)."
)


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
    if code is Code.SANDBOX_UNAVAILABLE:  # a fenced command (issue 29 item 7)
        return Refused(code, _NO_REMOTE_SANDBOX)
    return Refused(code)
