"""The secrets one host holds, and the redactor over their exact values (issue 29 items 7–9;
seed 002 §2).

A host holds secrets of three kinds, each a named group of :class:`HeldSecrets`:

- **in HOST_DIR** (group ``host-dir``, read by :meth:`HeldSecrets.current`): its own host token
  (``host-token``), the outbound bearers other environments issued to it (``pairings.json``),
  the host tokens of the peers it created (``peer-tokens.json``) and the provider API keys a
  person set (``api-keys.json``, :mod:`core.custody.provider_keys`, issue 31).
  :class:`WatchedState` marks the group stale whenever one of :data:`SECRET_DOCS` is stored
  through it, so it is read again only after a change (the browser host's answers stay cheap);
- **given by the placement** (:meth:`HeldSecrets.set_group`): the environment server's audit
  key, and later a runner's secrets or a provider's API keys — any group, replaced whole;
- **seen in process** (:meth:`HeldSecrets.remember`): bearers this host issued or accepted.
  An environment server keeps only the sha256 of the bearers it issued, so these are the only
  issued bearers it can match: the ones issued by, or presented to, the running process. At
  most :data:`MAX_REMEMBERED` are kept, the oldest forgotten first.

:meth:`HeldSecrets.redactor` is the :class:`~core.redaction.Redactor` over all of them, rebuilt
only when the set changed.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterable

from pydantic import ValidationError

from core.custody.host_token import HOST_TOKEN_DOC
from core.custody.pairing import PAIRINGS_DOC, load_pairings
from core.custody.peer_admin import PEER_TOKENS_DOC, PeerTokens
from core.custody.provider_keys import KEYS_DOC, load_keys
from core.ports import HostState
from core.redaction import Redactor, SecretValue, secret_value
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = [
    "HELD_IN_BLOCK",
    "HELD_IN_COMMAND",
    "HELD_IN_LETTER",
    "HELD_IN_MESSAGE",
    "HELD_IN_PACKET",
    "HELD_IN_PROJECT_NAME",
    "HELD_IN_TOOL_ARGS",
    "HELD_IN_URL",
    "MAX_REMEMBERED",
    "SECRET_DOCS",
    "HeldSecrets",
    "WatchedState",
    "host_dir_secrets",
    "refuse_held_in_packet",
    "refuse_held_in_project_name",
    "refuse_held_in_text",
]

SECRET_DOCS = frozenset({HOST_TOKEN_DOC, PAIRINGS_DOC, PEER_TOKENS_DOC, KEYS_DOC})
"""The HOST_DIR documents that hold secrets in clear."""
MAX_REMEMBERED = 1024
"""The most secrets seen in process that are kept for redaction."""


def _values(items: Iterable[SecretValue | str | bytes | Secret]) -> tuple[SecretValue, ...]:
    out = []
    for item in items:
        try:
            out.append(secret_value(item))
        except ValueError:  # too short to redact without redacting ordinary text
            continue
    return tuple(out)


async def host_dir_secrets(state: HostState) -> tuple[SecretValue, ...]:
    """Every secret held in clear in HOST_DIR (:data:`SECRET_DOCS`), read by the documents' own
    readers; a document that does not parse gives none (those readers refuse it elsewhere)."""
    found: list[Secret] = []
    token = await state.load(HOST_TOKEN_DOC)
    if token:
        found.append(Secret(token.decode("utf-8", "replace").strip()))
    with contextlib.suppress(Refused):
        found.extend(o.bearer for o in (await load_pairings(state)).outbound)
    raw = await state.load(PEER_TOKENS_DOC)
    with contextlib.suppress(ValidationError):
        found.extend(PeerTokens.model_validate_json(raw or b"{}").tokens.values())
    with contextlib.suppress(Refused):
        found.extend(k.value for k in (await load_keys(state)).keys)
    return _values(found)


class HeldSecrets:
    """The secrets one host holds, by group (module docstring), and their redactor."""

    def __init__(self) -> None:
        self._groups: dict[str, tuple[SecretValue, ...]] = {}
        self._seen: OrderedDict[bytes, SecretValue] = OrderedDict()
        self._redactor: Redactor | None = None
        self.stale = True
        """True while the ``host-dir`` group must be read again (:class:`WatchedState`)."""

    def set_group(self, name: str, values: Iterable[SecretValue | str | bytes | Secret]) -> None:
        """Hold ``values`` as the group ``name``, replacing what it held (a value too short to
        redact safely, under 16 bytes, is left out)."""
        held = _values(values)
        if self._groups.get(name) != held:
            self._groups[name] = held
            self._redactor = None

    def forget_group(self, name: str) -> None:
        """Hold the group ``name`` no longer (a run's keys, when the run ended)."""
        if self._groups.pop(name, None) is not None:
            self._redactor = None

    def remember(self, value: str | bytes | Secret | None) -> None:
        """Hold ``value``, a secret seen in process (an issued or accepted bearer)."""
        if value is None:
            return
        held = _values([value])
        if not held or held[0].value in self._seen:
            return
        self._seen[held[0].value] = held[0]
        while len(self._seen) > MAX_REMEMBERED:
            self._seen.popitem(last=False)
        self._redactor = None

    def redactor(self) -> Redactor:
        """The redactor over every secret held now."""
        if self._redactor is None:
            values = [v for group in self._groups.values() for v in group]
            self._redactor = Redactor([*values, *self._seen.values()])
        return self._redactor

    async def current(self, state: HostState, *, reread: bool = False) -> Redactor:
        """:meth:`redactor`, after reading HOST_DIR again when it changed (or ``reread``)."""
        if self.stale or reread:
            self.stale = False
            self.set_group("host-dir", await host_dir_secrets(state))
        return self.redactor()


class WatchedState:
    """A :class:`~core.ports.HostState` that marks ``held`` stale when one of
    :data:`SECRET_DOCS` is stored through it; everything else is ``state``'s own."""

    def __init__(self, state: HostState, held: HeldSecrets) -> None:
        self._state = state
        self._held = held

    async def load(self, name: str) -> bytes | None:
        """See :meth:`core.ports.HostState.load`."""
        return await self._state.load(name)

    async def store(self, name: str, data: bytes) -> None:
        """See :meth:`core.ports.HostState.store`; marks the secrets stale after a secret
        document is stored (or when storing it failed halfway)."""
        try:
            await self._state.store(name, data)
        finally:
            if name in SECRET_DOCS:
                self._held.stale = True

    def __getattr__(self, name: str) -> object:
        return getattr(self._state, name)


HELD_IN_PACKET = (
    "What you ask the agent holds the value of a secret this host keeps (a provider key, a "
    "bearer or the host token). A packet is stored with the mission and read by the agent, so "
    "a held secret never goes in one: remove it from the text. A run gets a provider key only "
    "by its grant, in the agent's environment."
)


async def refuse_held_in_packet(held: HeldSecrets, state: HostState, packet: str) -> None:
    """Refuse ``sanitizer_refused`` (field ``note``) when ``packet`` — a mission packet this
    host drafted, the person's note in it — carries the exact value of any secret this host
    holds, in any form :mod:`core.redaction` knows (issue 31: a key pasted into the note
    would otherwise be written verbatim to the mailbox and the worktree's packet file on the
    environment's disk). Names no value and no variable."""
    await refuse_held_in_text(held, state, {"note": packet}, HELD_IN_PACKET)


HELD_IN_LETTER = (
    "This letter holds the value of a secret this host keeps (a provider key, a bearer or the "
    "host token). Letters are kept in the project's mailbox, read by agents and carried in "
    "its archive, so a held secret never goes in one: remove it from the text."
)


HELD_IN_MESSAGE = (
    "This message holds the value of a secret this host keeps (a provider key, a bearer or the "
    "host token). A message is kept in the agent's inbox, here or on the environment that "
    "receives it, and agents read it, so a held secret never goes in one: remove it from the "
    "text."
)

HELD_IN_COMMAND = (
    "This command holds the value of a secret this host keeps (a provider key, a bearer or the "
    "host token). The environment runs it in the project and writes it to its own audit (and "
    "git config writes a value into the project's .git/config), so a held secret never goes "
    "in one: remove it. A run gets a provider key only by its grant, in the agent's "
    "environment."
)


HELD_IN_BLOCK = (
    "This block's name or purpose holds the value of a secret this host keeps (a provider key, "
    "a bearer or the host token). A block is written into every mission packet drafted for it "
    "and carried in the project's archive, so a held secret never goes in one: remove it."
)


HELD_IN_PROJECT_NAME = (
    "The name holds the value of a secret this host keeps (a provider key, a bearer or the "
    "host token). A project's name is written into its export — the archive and its file "
    "name — and shown wherever the project is, so a held secret never goes in one: choose "
    "another name."
)


async def refuse_held_in_project_name(held: HeldSecrets, state: HostState, name: str) -> None:
    """Refuse ``sanitizer_refused`` (field ``name``) when a project's name a person typed
    holds the value of a secret this host keeps: the manifest keeps it, the export carries it
    in its archive and its download name, and every answer would show it ``[redacted]``
    unexplained (the tryout of stop 46)."""
    await refuse_held_in_text(held, state, {"name": name}, HELD_IN_PROJECT_NAME)


HELD_IN_URL = (
    "The server address holds the value of a secret this host keeps (a provider key, a bearer "
    "or the host token). An address is shown, stored with the environment and asked of the "
    "network, so a held secret never goes in one: give only the server's address, like "
    "http://host:port."
)


HELD_IN_TOOL_ARGS = (
    "The arguments of this call hold the value of a secret this host keeps (a provider key, a "
    "bearer or the host token). The environment keeps what its tools are given (a message in "
    "an agent's inbox, a file), so a held secret is never sent in one: remove it."
)


async def refuse_held_in_text(
    held: HeldSecrets, state: HostState, texts: dict[str, str | None], sentence: str
) -> None:
    """Refuse ``sanitizer_refused`` on the first field of ``texts`` (field name → the text a
    person typed, ``None`` skipped) that carries the exact value of a secret this host holds,
    in any form :mod:`core.redaction` knows; ``sentence`` says why in the caller's words. Used
    for every text the host stores where agents read it: a mission packet, a plain letter's
    subject and text (``mailbox.send``; SPEC §9, seed 004 §2), an inbox message
    (``inbox.deliver``, ``fleet.contact``), a block's name and purpose
    (``blocks.candidate_edit``, every seat), a project's typed name (``project.create``,
    ``project.rename``, ``project.add_folder``, ``project.import``), a server's address
    (``env.add``) — and for what it sends an
    environment to run and audit (``env.command``'s argv and git config value). Names no value
    and no variable."""
    redactor = await held.current(state)
    if not redactor:
        return
    for field, text in texts.items():
        if text and redactor.spans(text.encode("utf-8", "surrogatepass")):
            raise Refused(Code.SANITIZER_REFUSED, sentence, field=field)
