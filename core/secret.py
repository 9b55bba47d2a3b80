"""Custody of secret text: a wrapper that never shows its value, and error text that never
echoes input (seed 002 §2 and §5; SPEC §6 last line, §4).

A bearer, a host token or a key travels inside ``core`` only as a :class:`Secret`. Its
``repr``, ``str`` and ``format`` are the fixed text :data:`REDACTED`; a pydantic model that
holds one dumps :data:`REDACTED` in its place, unless the caller dumps with the context
``{REVEAL: True}`` — which only the HOST_DIR persistence code does. Two secrets compare in
constant time over their sha256 digests (equal length, so not even the length leaks).

:func:`quiet_error_text` turns a pydantic ``ValidationError`` into a short sentence built only
from our own field names and fixed phrases: never an input value, never an unexpected key, never
an unexpected discriminator tag (pydantic's own messages echo those).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import typing
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from core.vocabulary import RULES

__all__ = [
    "MAX_SECRET_CHARS",
    "REDACTED",
    "REVEAL",
    "SECRET_SHAPE",
    "KnownNames",
    "Secret",
    "capitalised",
    "in_words",
    "known_location",
    "known_names",
    "quiet_error_text",
    "quiet_first_error",
    "scrub_secrets",
    "secret_shaped",
    "sha256_hex",
]

REDACTED = "[redacted]"
"""What a :class:`Secret` shows wherever it is printed, logged or dumped."""

REVEAL = "reveal_secrets"
"""Serialisation-context key: ``model_dump_json(context={REVEAL: True})`` writes the values."""

MAX_SECRET_CHARS = 512

SECRET_SHAPE = re.compile(r"vb[xh]_[A-Za-z0-9_-]{20,512}")
"""The shape of a bearer (``vbx_…``) or a host token (``vbh_…``): the prefix and at least 20
URL-safe base64 characters (a real one has 43). Linear: a literal prefix, one bounded class."""


def secret_shaped(text: str) -> bool:
    """True when ``text`` holds something shaped like a bearer or a host token."""
    return SECRET_SHAPE.search(text) is not None


_NOT_URL_CHAR = re.compile(r"([^A-Za-z0-9_.~+%-])")
"""One character that cannot be part of a percent-encoded word (a URL's query, a path)."""


def scrub_secrets(text: str, exact: Callable[[str], str] | None = None) -> str:
    """``text`` with everything shaped like a bearer or a host token replaced by
    :data:`REDACTED` — the last guard of every refusal, audit detail, log line and peer answer
    (a rule that echoed one would still not leak it).

    A percent-encoded word (``vbx%5F…``, ``%76%62%78…``, encoded twice or thrice) is decoded
    before it is judged, and replaced whole when it hides one (issue 29 item 9). ``exact``,
    when given, is the exact-value redaction of the secrets the caller holds
    (:meth:`core.redaction.Redactor.redact`): it runs on the text and on each decoded word."""
    if "%" in text:
        text = "".join(_scrub_word(word, exact) for word in _NOT_URL_CHAR.split(text))
    if exact is not None:
        text = exact(text)
    if "vb" not in text:  # the shape begins with a literal "vb": nothing to scrub (issue 18)
        return text
    return SECRET_SHAPE.sub(REDACTED, text)


def _scrub_word(word: str, exact: Callable[[str], str] | None) -> str:
    """``word``, or :data:`REDACTED` when its percent-decoding hides a secret."""
    if "%" not in word:
        return word
    decoded = word
    for _ in range(3):  # an encoding of an encoding, up to three deep
        again = urllib.parse.unquote(decoded)
        if again == decoded:
            break
        decoded = again
    if decoded == word:
        return word
    hidden = SECRET_SHAPE.search(decoded) is not None or (
        exact is not None and exact(decoded) != decoded
    )
    return REDACTED if hidden else word


def sha256_hex(text: str) -> str:
    """Lower-case hex sha256 of ``text`` encoded as UTF-8 (64 characters)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Secret:
    """A secret string (bearer, host token, key) that does not reveal itself.

    ``reveal()`` returns the value; it is called only where the value must leave as itself
    (presenting a bearer to its peer, persisting HOST_DIR). ``digest()`` is its sha256 hex.
    Equality is constant-time; ``bool(secret)`` is false for the empty string.
    """

    __slots__ = ("__value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("a secret is text")
        self.__value = value

    def reveal(self) -> str:
        """The secret value itself. Never put it in a message, log line or audit record."""
        return self.__value

    def digest(self) -> str:
        """sha256 hex of the value (what HOST_DIR stores for issued bearers, seed 002 §3)."""
        return sha256_hex(self.__value)

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __bool__(self) -> bool:
        return self.__value != ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(
            hashlib.sha256(self.__value.encode("utf-8", "surrogatepass")).digest(),
            hashlib.sha256(other.__value.encode("utf-8", "surrogatepass")).digest(),
        )

    def __hash__(self) -> int:
        return hash(self.digest())

    def __reduce__(self) -> typing.NoReturn:
        raise TypeError("a Secret is not pickled")

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from_text = core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(max_length=MAX_SECRET_CHARS, strict=True)
        )
        return core_schema.json_or_python_schema(
            json_schema=from_text,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_text]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _serialize, info_arg=True
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "maxLength": MAX_SECRET_CHARS, "writeOnly": True}


def _serialize(value: Secret, info: core_schema.SerializationInfo) -> str:
    context = info.context
    if isinstance(context, dict) and context.get(REVEAL) is True:
        return value.reveal()
    return REDACTED


_PHRASES = {
    "missing": "is required",
    "extra_forbidden": "is not a field this takes",
    "literal_error": "is not one of the allowed values",
    "enum": "is not one of the allowed values",
    "string_pattern_mismatch": "does not have the required form",
    "string_too_long": "is too long",
    "string_too_short": "is too short",
    "too_long": "has too many items",
    "too_short": "has too few items",
    "greater_than_equal": "is too small",
    "greater_than": "is too small",
    "less_than_equal": "is too large",
    "less_than": "is too large",
    "multiple_of": "is not a multiple of the step it must follow",
    "union_tag_invalid": "names no known kind",
    "union_tag_not_found": "lacks its 'type'",
    "json_invalid": "is not valid JSON",
    "json_type": "is not JSON text",
    "string_type": "must be text",
    "string_sub_type": "must be text",
    "string_unicode": "must be text",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_parsing_size": "is too large",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "set_type": "must be a list",
    "dict_type": "must be a set of named values",
    "model_type": "must be a set of named values",
    "model_attributes_type": "must be a set of named values",
    "dataclass_type": "must be a set of named values",
    "none_required": "must be empty (null)",
    "bytes_type": "must be text",
    "value_error": "is not acceptable",
    "assertion_error": "is not acceptable",
}
"""Each pydantic error type → what we say of the field, in words (issue 17 item 5): never the
validator's own text, which names types, regexes and sometimes the input."""

_MAX_LISTED = 8
"""At most this many allowed values are listed in a sentence; more are said as a count."""


PATTERN_RULES = {
    **RULES,  # the named field types' own sentences (core.vocabulary)
    r"\.[pP][nN][gG]$": "must end in '.png'",
    r"^#[0-9a-fA-F]{6}$": "must be a colour written '#' and 6 hex digits, like #1a2b3c",
    r"^[a-z][a-z0-9_.-]*$": "must start with a lower-case letter, then lower-case letters, "
    "digits, '_', '.' or '-'",
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$": "must be 1–64 letters, digits, '.', '_' or '-', "
    "starting with a letter or digit",
    r"^(sb|sk)_[A-Za-z0-9_-]{1,64}$": "must be a block id ('sb_…') or a skeleton id ('sk_…')",
    r"^sb_[A-Za-z0-9_-]{1,64}$": "must be a block id: 'sb_' and 1–64 letters, digits, '_' or '-'",
    r"^[0-9a-f]{12}$": "must be 12 lower-case hex digits (a letter's short id)",
    r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$": "must be 1–64 letters, digits, '.', '_', ':', '@' "
    "or '-', starting with a letter or digit",
    r"^[a-z0-9][a-z0-9._-]{0,63}$": "must be 1–64 lower-case letters, digits, '.', '_' or '-', "
    "starting with a letter or digit",
    r"^[a-z][a-z0-9-]{0,31}$": "must be 1–32 lower-case letters, digits or '-', starting with a "
    "letter",
    r"^[A-Z][A-Z0-9_]{1,63}$": "must be 2–64 upper-case letters, digits or '_', starting with a "
    "letter",
    r"^[A-Za-z0-9_-]{1,32}$": "must be 1–32 letters, digits, '_' or '-'",
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$": "must be a tab's page id "
    "(a lower-case UUID)",
}
"""Each pattern an argument model declares → the rule in words (issue 17: a person reads the
rule, never the regex). A pattern not listed is said as ``does not have the required form``;
``tests/core/test_refusal_sentences.py`` fails when an operation's argument lacks its rule."""


class KnownNames(frozenset[str]):
    """:func:`known_names`' answer: the names, and ``labels`` — a field's name (and alias) →
    the ``title`` its model gives it, the label a person saw beside the input (issue 34)."""

    labels: dict[str, str]

    def __new__(cls, names: Iterable[str], labels: dict[str, str] | None = None) -> KnownNames:
        made = super().__new__(cls, names)
        made.labels = dict(labels or {})
        return made


@functools.cache
def known_names(*models: type[BaseModel]) -> KnownNames:
    """Every field name, alias and ``Literal`` value reachable from ``models``, with the
    ``title`` of each field that has one (:attr:`KnownNames.labels`).

    These are the only words :func:`quiet_error_text` will repeat from an error location; a
    field with a title is said by its title (``Agent id must be …``, never ``to must be …``).
    """
    names: set[str] = set()
    labels: dict[str, str] = {}
    seen: set[type[BaseModel]] = set()
    stack: list[Any] = list(models)
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item in seen:
                continue
            seen.add(item)
            for name, info in item.model_fields.items():
                names.add(name)
                if info.alias:
                    names.add(info.alias)
                if info.title:
                    labels.setdefault(name, info.title)
                    if info.alias:
                        labels.setdefault(info.alias, info.title)
                stack.append(info.annotation)
            continue
        if get_origin(item) is Literal:
            names.update(str(v) for v in get_args(item))
            continue
        stack.extend(get_args(item))
    return KnownNames(names, labels)


_BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "more than"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "less than"),
    "string_too_long": ("max_length", "at most {} characters"),
    "string_too_short": ("min_length", "at least {} characters"),
    "too_long": ("max_length", "at most {} items"),
    "too_short": ("min_length", "at least {} items"),
}
"""Error types whose context holds one of OUR bounds (never input), and how to say it."""


def _allowed(err: Any) -> str | None:
    """The values a literal, enum or tagged union allows, from the error's context — our own
    ``Literal`` values, never the input — said as ``'a', 'b' or 'c'`` (None when too many)."""
    ctx = err.get("ctx") or {}
    if "expected_tags" in ctx:
        tags = [t.strip() for t in str(ctx["expected_tags"]).split(",")]
        said = ", ".join(tags[:-1]) + " or " + tags[-1] if len(tags) > 1 else tags[0]
        return said if len(tags) <= _MAX_LISTED else None
    expected = ctx.get("expected")
    if not isinstance(expected, str):
        return None
    count = expected.count(",") + (2 if " or " in expected else 1)
    return expected if count <= _MAX_LISTED and len(expected) <= 300 else None


def _phrase(err: Any) -> str:
    """What is wrong with the field, in words: a fixed phrase, our own pattern's rule, our own
    bound or our own allowed values (never the input)."""
    err_type = str(err.get("type", ""))
    if err_type.endswith("_type") and err_type not in _PHRASES:
        return "has the wrong kind of value"
    phrase = _PHRASES.get(err_type, "is not acceptable")
    if err_type == "string_pattern_mismatch":
        phrase = PATTERN_RULES.get(str((err.get("ctx") or {}).get("pattern")), phrase)
    if err_type in ("literal_error", "enum", "union_tag_invalid"):
        allowed = _allowed(err)
        if allowed is not None:
            phrase = (
                f"must be {allowed}"
                if err_type != "union_tag_invalid"
                else (f"must name one of the kinds {allowed}")
            )
    bound = _BOUNDS.get(err_type)
    value = (err.get("ctx") or {}).get(bound[0]) if bound else None
    if bound and isinstance(value, int | float) and not isinstance(value, bool):
        said = bound[1].format(value) if "{}" in bound[1] else f"{bound[1]} {value}"
        phrase = f"{phrase} ({said})"
    return phrase


def _own_parts(loc: Iterable[int | str]) -> list[int | str]:
    """A location without pydantic's schema labels (``function-after[...]``), which are not
    input and mean nothing to a person."""
    return [p for p in loc if not (isinstance(p, str) and "[" in p)]


def in_words(parts: Iterable[int | str], labels: dict[str, str] | None = None) -> str:
    """A location our models declare, said in words: ``("changes", 0, "name")`` is
    ``name of item 1 of changes`` — never a dotted validator location like ``args.to``. A
    field in ``labels`` (its model's ``title``, :func:`known_names`) is said by that label,
    the words the person saw beside the input (``("to",)`` is ``Agent id``; issue 34)."""
    said = ""
    for part in parts:
        if isinstance(part, int):
            said = f"item {part + 1} of {said}" if said else f"item {part + 1}"
        else:
            word = (labels or {}).get(part, part)
            said = f"{word} of {said}" if said else word
    return said


def _labels(names: frozenset[str]) -> dict[str, str]:
    return names.labels if isinstance(names, KnownNames) else {}


def _sentence(err: Any, names: frozenset[str], under: str = "") -> str:
    """One error as a clause: where (in words, our names only) and what is wrong."""
    loc = _own_parts(err.get("loc", ()))
    where = known_location(loc, names)
    known = [p for p in ([under] if under else []) + _split(where) if p != ""]
    said = in_words(known, _labels(names))
    phrase = _phrase(err)
    whole = len(_split(where)) == len(loc) and (bool(where) or not loc)
    if whole:
        return f"{said} {phrase}" if said else f"the message {phrase}"
    if err.get("type") == "extra_forbidden":
        hint = _closest(loc[len(_split(where))], names)
        if not said:
            return f"one of the fields sent is not one this takes{hint}"
        return f"{said} holds a field it does not take{hint}"
    return f"an entry of {said} {phrase}" if said else f"an entry {phrase}"


def _split(where: str) -> list[int | str]:
    return [int(p) if p.isdigit() else p for p in where.split(".")] if where else []


def _closest(unknown: int | str, names: frozenset[str]) -> str:
    """`` (did you mean 'project'?)`` when an unknown key is a near miss of one of OUR names —
    it names only our field, never the key that was sent."""
    if not isinstance(unknown, str) or len(unknown) > 64:
        return ""
    import difflib  # on a refusal only: not on the path to ready (issue 34, cold boot)

    close = difflib.get_close_matches(unknown, sorted(names), n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def known_location(loc: Iterable[int | str], names: frozenset[str]) -> str:
    """The part of an error location made of ``names`` (and item numbers) only: it stops at
    the first key the models do not declare, so ``("changes", "vbx_…")`` gives ``"changes"``.
    Empty when even the first part is unknown. What a refusal's ``field`` may say."""
    parts = []
    for part in _own_parts(loc):
        if isinstance(part, int):
            parts.append(str(part))
        elif part in names:
            parts.append(part)
        else:
            break
    return ".".join(parts)


def quiet_first_error(
    exc: ValidationError, names: frozenset[str], *, under: str = ""
) -> tuple[str, str]:
    """``(field, sentence)`` of the first error: ``field`` is :func:`known_location` of its
    location (for the refusal's ``field``, a program's key), ``sentence`` says it in words
    without a full stop (:func:`in_words`, our fixed phrase, our own bound or rule), with the
    location put under ``under`` when given. Never input: an error under a key the models do
    not declare is said of the known part (``changes holds a field it does not take``)."""
    err = exc.errors(include_input=False, include_url=False)[0]
    where = known_location(err.get("loc", ()), names)
    return where, _sentence(err, names, under)


def quiet_error_text(
    exc: ValidationError, names: frozenset[str], *, under: str = "", limit: int = 3
) -> str:
    """One sentence naming what was wrong, built from ``names`` and fixed phrases only.

    Input values, unknown keys and unknown tags are never repeated (they may be secrets, seed
    002 §2); a bound, a pattern's rule or the allowed values the model declares are
    (``path is too long (at most 5000 characters).``). ``under`` names the part of a larger
    message the model is (``letter``), said in words. Capitalised, ends with a full stop.
    """
    out: list[str] = []
    errors = exc.errors(include_input=False, include_url=False)
    # what was sent and is wrong comes before what is missing: it is what a person typed
    errors = sorted(errors, key=lambda e: e.get("type") == "missing")
    said_at = [tuple(_own_parts(e.get("loc", ()))) for e in errors]
    for err, at in zip(errors, said_at, strict=True):
        if err.get("type") == "is_instance_of" and said_at.count(at) > 1:
            continue  # a union's python-only branch; its other branch says what is wanted
        line = _sentence(err, names, under)
        if line not in out:
            out.append(line)
    more = len(out) - limit
    out = out[:limit]
    tail = f" (and {more} more)" if more > 0 else ""
    return capitalised("; ".join(out)[:1500] + tail + ".")


def capitalised(sentence: str) -> str:
    """``sentence`` with its first letter upper-case, unless it starts with a field name (a
    name is shown as our models spell it)."""
    if sentence.startswith(("the ", "an ", "one ")):
        return sentence[:1].upper() + sentence[1:]
    return sentence


def field_sentence(
    field: str,
    err_type: str,
    ctx: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> str:
    """The sentence a refusal says when ``field`` breaks the rule ``err_type`` (a pydantic
    error type) with our own ``ctx`` (the bound, pattern or allowed values) — what the page
    shows as a person types, so the form and the host say the same words (issue 17 item 5).
    ``labels``: :attr:`KnownNames.labels` of the field's model (the field said by its title)."""
    said = in_words([field], labels)
    return capitalised(f"{said} {_phrase({'type': err_type, 'ctx': ctx or {}})}.")
