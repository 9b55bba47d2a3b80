"""Provider API keys held by the host: written once, listed by fingerprint, granted per
environment, given to one run (issue 31 "Keys"; seed 002 §2, the seed's ``.api-keys.json``).

A key is a provider's API key (Anthropic, OpenAI, …, or a custom name) and the environment
variable an agent process is given it as. The host keeps them in HOST_DIR as :data:`KEYS_DOC`,
sealed at rest like the bearers (``browser_host/sealed_state.py``) and held by
:class:`~core.custody.held_secrets.HeldSecrets`, so every answer to the page is redacted of
every value (issue 29 item 8). The rules, each in one place here:

- **the variable** matches :data:`VARIABLE_PATTERN` and is not one a process's behaviour hangs
  on (:func:`variable_refusal`: :data:`DENIED_NAMES` and :data:`DENIED_PREFIXES`, each with
  its reason) — a key set as ``LD_PRELOAD`` or ``PATH`` would be code execution, not a key;
- **the value** is 16–512 characters of printable text without whitespace
  (:data:`MIN_KEY_CHARS`: a shorter value could not be redacted without redacting ordinary
  text); it is never returned: :class:`KeyInfo` carries its :func:`fingerprint` (first 8 hex of
  its sha256) only;
- **a grant** names a paired environment's envKey; :func:`keys_for_run` gives a run only the
  variables granted to its environment and refuses ``key-not-granted`` naming the first that
  is not.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from pydantic import Field, ValidationError

from core.custody.environment import ENV_KEY_PATTERN
from core.model import Contract
from core.ports import HostState
from core.refusals import Code, Refused
from core.secret import REVEAL, Secret

__all__ = [
    "DENIED_NAMES",
    "DENIED_PREFIXES",
    "KEYS_DOC",
    "KEY_VALUE_REFUSED",
    "MAX_KEYS",
    "MAX_KEY_CHARS",
    "MIN_KEY_CHARS",
    "PROVIDERS",
    "PROVIDER_PATTERN",
    "VARIABLE_PATTERN",
    "VARIABLE_REFUSED",
    "KeyInfo",
    "ProviderKey",
    "ProviderKeys",
    "fingerprint",
    "key_value_refusal",
    "keys_for_run",
    "load_keys",
    "save_keys",
    "variable_refusal",
]

KEYS_DOC: Final = "api-keys.json"
"""The HOST_DIR document holding the keys (values in clear inside the seal)."""
MAX_KEYS: Final = 64
"""The most keys a host holds."""
MIN_KEY_CHARS: Final = 16
"""The shortest value accepted: the redactor's shortest (``core.redaction.MIN_SECRET_BYTES``)."""
MAX_KEY_CHARS: Final = 512
"""The longest value accepted (``core.secret.MAX_SECRET_CHARS``)."""
VARIABLE_PATTERN: Final = r"^[A-Z][A-Z0-9_]{1,63}$"
"""An environment variable a key is given as: upper-case letters, digits and ``_``."""
_LENGTH_SAID = (
    f"The key must be {MIN_KEY_CHARS}–{MAX_KEY_CHARS} characters: a shorter one could not be "
    "kept out of logs without hiding ordinary text."
)
_SPACE_SAID = "The key holds a space, a line break or a control character; paste the key alone."
KEY_VALUE_REFUSED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[\s\S]{1,15}$"), _LENGTH_SAID),  # 15: MIN_KEY_CHARS - 1, a literal to scan
    (re.compile(r"[\s\x00-\x1f\x7f-\x9f]"), _SPACE_SAID),
)
"""What the page checks of a key as it is typed (``core.host.page_contract.REFUSED_BY_CORE``),
in :func:`key_value_refusal`'s order: ``(pattern, sentence)`` — a value the pattern finds
(``search``) is refused with the sentence (too short; a space, line break or control
character). The schema's ``maxLength`` says the longest. The host refuses a little more than
these find (any character Python does not print, such as a zero-width space) and decides."""

PROVIDER_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""A provider: one of :data:`PROVIDERS` or a custom name of that shape."""

PROVIDERS: Final = {
    "anthropic": ("Anthropic", "ANTHROPIC_API_KEY"),
    "openai": ("OpenAI", "OPENAI_API_KEY"),
    "google": ("Google", "GEMINI_API_KEY"),
    "mistral": ("Mistral", "MISTRAL_API_KEY"),
    "openrouter": ("OpenRouter", "OPENROUTER_API_KEY"),
    "groq": ("Groq", "GROQ_API_KEY"),
    "deepseek": ("DeepSeek", "DEEPSEEK_API_KEY"),
    "xai": ("xAI", "XAI_API_KEY"),
}
"""The closed list of known providers: id → (name shown, the variable usually used)."""

DENIED_NAMES: Final = {
    "PATH": "chooses which programs run",
    "HOME": "chooses where a program reads its configuration",
    "SHELL": "chooses the shell programs start",
    "ENV": "names a file a shell runs at start",
    "BASH_ENV": "names a file bash runs at start",
    "IFS": "changes how a shell splits words",
    "CDPATH": "changes where a shell's cd goes",
    "PROMPT_COMMAND": "runs a command at every prompt",
    "PS4": "is run by a shell that traces",
    "USER": "names the account programs act for",
    "LOGNAME": "names the account programs act for",
    "PWD": "names the working directory",
    "TMPDIR": "chooses where programs write temporary files",
    "TEMP": "chooses where programs write temporary files",
    "TMP": "chooses where programs write temporary files",
    "TERM": "changes how a terminal is driven",
    "LANG": "changes how programs read text",
    "NODE_OPTIONS": "adds options, and code, to every Node process",
    "NODE_PATH": "chooses where Node loads modules from",
    "PERL5LIB": "chooses where Perl loads modules from",
    "PERL5OPT": "adds options, and code, to every Perl process",
    "RUBYOPT": "adds options, and code, to every Ruby process",
    "RUBYLIB": "chooses where Ruby loads libraries from",
    "JAVA_TOOL_OPTIONS": "adds options, and agents, to every Java process",
    "CLASSPATH": "chooses where Java loads classes from",
    "HTTP_PROXY": "sends a program's web traffic through another machine",
    "HTTPS_PROXY": "sends a program's web traffic through another machine",
    "ALL_PROXY": "sends a program's traffic through another machine",
    "NO_PROXY": "changes which traffic goes through a proxy",
    "SSL_CERT_FILE": "chooses which certificate authorities are trusted",
    "SSL_CERT_DIR": "chooses which certificate authorities are trusted",
    "REQUESTS_CA_BUNDLE": "chooses which certificate authorities are trusted",
    "CURL_CA_BUNDLE": "chooses which certificate authorities are trusted",
    "NODE_EXTRA_CA_CERTS": "chooses which certificate authorities are trusted",
    "EDITOR": "chooses a program that is run",
    "VISUAL": "chooses a program that is run",
    "PAGER": "chooses a program that is run",
}
"""Variables a key may never be given as, each with why (issue 31: a closed deny-list)."""

DENIED_PREFIXES: Final = {
    "LD_": "changes which libraries the loader puts into every program",
    "DYLD_": "changes which libraries the loader puts into every program",
    "PYTHON": "changes how every Python process starts and what it imports",
    "GIT_": "changes what git runs, where and as whom",
    "SSH_": "changes how ssh authenticates and what it runs",
    "BASH_FUNC_": "defines shell functions every bash inherits",
    "NPM_CONFIG_": "changes what npm runs and where it fetches from",
    "XDG_": "chooses where programs read their configuration",
    "LC_": "changes how programs read text",
    "VOICEBOX_": "belongs to the environment server and its runner",
}
"""Prefixes a key's variable may never start with, each with why."""


def _denied_said(said: str, reason: str) -> str:
    """The sentence a denied variable is refused with (``said``: the name, or the prefix said)."""
    return f"A key may not be given as {said}: that variable {reason}."


_VARIABLE_SAID = "variable must be 2–64 upper-case letters, digits or '_', starting with a letter."
VARIABLE_REFUSED: tuple[tuple[str, str], ...] = (
    (f"^(?!{VARIABLE_PATTERN.removeprefix('^')})", _VARIABLE_SAID),  # breaks the pattern
    *((f"^{name}$", _denied_said(name, why)) for name, why in DENIED_NAMES.items()),
    *(
        (f"^{prefix}", _denied_said(f"a variable starting with {prefix}", why))
        for prefix, why in DENIED_PREFIXES.items()
    ),
)
"""What the page checks of a key's variable as it is typed
(``core.host.page_contract.REFUSED_BY_CORE``), in :func:`variable_refusal`'s order (not
:data:`VARIABLE_PATTERN`, then the denied names, then the prefixes): ``(pattern text,
sentence)`` — the page's ``RegExp`` of a variable that matches is refused with the sentence.
Pattern text, not compiled here: the host decides by :data:`VARIABLE_PATTERN`,
:data:`DENIED_NAMES` and :data:`DENIED_PREFIXES` themselves (past the first, each pattern is an
anchored literal of upper-case letters and ``_``)."""


def variable_refusal(variable: str) -> Refused | None:
    """The refusal a key's ``variable`` earns, or ``None`` when it may be used: ``args-invalid``
    (``field: "variable"``) when it breaks :data:`VARIABLE_PATTERN` or is denied (the sentence
    says why). The name is the caller's, never a secret, so the sentence may say it."""
    if re.fullmatch(VARIABLE_PATTERN, variable) is None:
        return Refused(Code.ARGS_INVALID, _VARIABLE_SAID, field="variable")
    reason = DENIED_NAMES.get(variable)
    said = variable
    if reason is None:
        prefix = next((p for p in DENIED_PREFIXES if variable.startswith(p)), None)
        if prefix is None:
            return None
        reason, said = DENIED_PREFIXES[prefix], f"a variable starting with {prefix}"
    return Refused(Code.ARGS_INVALID, _denied_said(said, reason), field="variable")


def key_value_refusal(value: Secret) -> Refused | None:
    """``args-invalid`` (``field: "value"``) when the value is shorter than
    :data:`MIN_KEY_CHARS`, longer than :data:`MAX_KEY_CHARS`, or holds whitespace or a control
    character (a pasted line break) — :data:`KEY_VALUE_REFUSED`'s sentences, which the page says
    as the key is typed; ``None`` when it is acceptable. Never says the value."""
    text = value.reveal()
    if not MIN_KEY_CHARS <= len(text) <= MAX_KEY_CHARS:
        return Refused(Code.ARGS_INVALID, _LENGTH_SAID, field="value")
    if any(c.isspace() or not c.isprintable() for c in text):
        return Refused(Code.ARGS_INVALID, _SPACE_SAID, field="value")
    return None


def fingerprint(value: Secret) -> str:
    """The first 8 lower-case hex digits of the value's sha256: what lists and audits say."""
    return hashlib.sha256(value.reveal().encode("utf-8")).hexdigest()[:8]


class ProviderKey(Contract):
    """One key as :data:`KEYS_DOC` holds it. ``set_at``/``replaced_at``: ms since the epoch;
    ``granted``: the envKeys that may use it, sorted."""

    provider: str = Field(pattern=PROVIDER_PATTERN)
    variable: str = Field(pattern=VARIABLE_PATTERN)
    value: Secret
    set_at: int = Field(ge=0)
    replaced_at: int | None = Field(default=None, ge=0)
    granted: tuple[str, ...] = Field(default=(), max_length=256)


class ProviderKeys(Contract):
    """:data:`KEYS_DOC`: the keys, one per variable. ``repr`` and plain dumps redact values."""

    v: int = Field(default=1, ge=1, le=1)
    keys: tuple[ProviderKey, ...] = Field(default=(), max_length=MAX_KEYS)

    def find(self, variable: str) -> ProviderKey | None:
        """The key given as ``variable``, or ``None``."""
        return next((k for k in self.keys if k.variable == variable), None)

    def put(self, key: ProviderKey) -> ProviderKeys:
        """A copy with ``key`` in place of the one with its variable (or added, in order)."""
        kept = tuple(k for k in self.keys if k.variable != key.variable)
        return self.model_copy(update={"keys": tuple(sorted((*kept, key), key=_order))})

    def without(self, variable: str) -> ProviderKeys:
        """A copy without the key given as ``variable``."""
        return self.model_copy(
            update={"keys": tuple(k for k in self.keys if k.variable != variable)}
        )

    def to_json(self) -> bytes:
        """The document's bytes for HOST_DIR only: the values are written in clear."""
        return self.model_dump_json(context={REVEAL: True}).encode("utf-8")


def _order(key: ProviderKey) -> str:
    return key.variable


class KeyInfo(Contract):
    """One key as the page sees it: never its value."""

    provider: str
    variable: str
    fingerprint: str = Field(description="First 8 hex digits of the value's sha256.")
    set_at: int = Field(description="When the key was first set (ms since the epoch).")
    replaced_at: int | None = Field(default=None, description="When last replaced (ms).")
    granted: list[str] = Field(description="The envKeys that may use the key.")

    @classmethod
    def of(cls, key: ProviderKey) -> KeyInfo:
        """What may be shown of ``key``."""
        return cls(
            provider=key.provider,
            variable=key.variable,
            fingerprint=fingerprint(key.value),
            set_at=key.set_at,
            replaced_at=key.replaced_at,
            granted=list(key.granted),
        )


async def load_keys(state: HostState) -> ProviderKeys:
    """:data:`KEYS_DOC` read now (empty when absent). Refuses ``storage-failed`` when it does
    not parse — never with the document's text, which holds the values."""
    raw = await state.load(KEYS_DOC)
    if not raw:
        return ProviderKeys()
    try:
        return ProviderKeys.model_validate_json(raw)
    except ValidationError:
        raise Refused(
            Code.STORAGE_FAILED, f"{KEYS_DOC} in HOST_DIR is damaged; set the keys again."
        ) from None


async def save_keys(state: HostState, keys: ProviderKeys) -> None:
    """Store :data:`KEYS_DOC` whole (the port's store is atomic)."""
    await state.store(KEYS_DOC, keys.to_json())


async def keys_for_run(
    state: HostState, env_key: str, variables: list[str] | tuple[str, ...]
) -> dict[str, Secret]:
    """The values a run on ``env_key`` is given: variable → :class:`Secret`, exactly
    ``variables`` (issue 31 "Granted per environment"). Refuses ``key-not-granted`` naming the
    first variable that has no key or whose key is not granted to ``env_key`` (``field`` is the
    variable); ``args-invalid`` when ``env_key`` is not an envKey; ``storage-failed`` as
    :func:`load_keys`. The caller sends the values for that run only and audits their
    fingerprints (:func:`fingerprint`), never the values."""
    if re.fullmatch(ENV_KEY_PATTERN, env_key) is None:
        raise Refused(Code.ARGS_INVALID, "envKey is not an environment key.", field="envKey")
    held = await load_keys(state)
    out: dict[str, Secret] = {}
    for variable in variables:
        key = held.find(variable)
        if key is None or env_key not in key.granted:
            said = "is not set" if key is None else "is not granted to that environment"
            raise Refused(
                Code.KEY_NOT_GRANTED,
                f"The key {variable} {said}; a person grants it in Settings → Provider keys.",
                field=variable,
            )
        out[variable] = key.value
    return out
