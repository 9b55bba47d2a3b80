"""Exact-value redaction: every occurrence of a secret a side holds, in its common encodings,
becomes :data:`~core.secret.REDACTED` (issue 29 items 7, 8, 9; seed 002 §2: no secret in
anything a caller, a page, a log or an audit receives).

:func:`core.secret.scrub_secrets` catches what is *shaped* like a bearer or a host token
(``vbx_…``/``vbh_…``). That misses a secret written another way: the body without its prefix,
lower-cased, base64, hex, percent-encoded. This module matches the **values** themselves —
the side knows them — in these forms:

- **raw**: the value's bytes, exactly;
- **the prefix-less body, case-insensitively**, for a value with a non-secret prefix
  (a bearer ``vbx_``, a host token ``vbh_``; :attr:`SecretValue.prefix_len`); its raw form is
  then covered too. The body's lower- and upper-case copies are a variant of the value for every
  encoding below;
- **hex**, upper or lower case (each byte two hex digits);
- **percent-encoding**, every byte ``%xx`` (upper or lower hex) and :func:`urllib.parse.quote`
  with nothing safe (which leaves letters and digits as they are);
- **JSON-escaped** (``\\u00xx`` for what JSON escapes, and every character ``\\uXXXX``);
- **base64**, standard or URL-safe, at each of the three alignments a value can have inside a
  longer base64 stream: the characters made only of the value's bits, and with them the
  character at either end that holds some of its bits, and ``=`` padding.

A value shorter than :data:`MIN_SECRET_BYTES` (a body shorter than :data:`MIN_BODY_BYTES`) is
refused with ``ValueError``: redacting a short value would redact ordinary text.

How: every form is a *needle*; case-insensitive ones are searched in an ASCII-lower-cased copy
of the text, the others in a copy where the URL-safe base64 letters ``-_`` read as ``+/`` (so
one needle serves both alphabets). Each needle is found with ``bytes.find`` (CPython's
two-way/Horspool search, sub-linear for needles this long); the spans found are merged and
replaced in one pass. Every copy has the text's length, so positions agree. Work is linear in
the text's length times the number of needles — measured in docs/security.md ("Exact-value
redaction").

:class:`StreamRedactor` does the same over a stream of chunks: a value split across two
chunks is still found, because the last ``longest needle - 1`` bytes of a chunk are held back
until the next chunk (or :meth:`StreamRedactor.flush`) shows whether they begin a match.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from core.secret import REDACTED, Secret

__all__ = [
    "MIN_BODY_BYTES",
    "MIN_SECRET_BYTES",
    "TOKEN_PREFIXES",
    "Redactor",
    "SecretValue",
    "StreamRedactor",
    "secret_value",
]

MIN_SECRET_BYTES = 16
"""The shortest value redacted (bytes)."""
MIN_BODY_BYTES = 16
"""The shortest prefix-less body matched case-insensitively (bytes)."""
TOKEN_PREFIXES = ("vbx_", "vbh_")
"""Prefixes :func:`secret_value` recognises as non-secret: a bearer's, a host token's."""

_MARK = REDACTED.encode("ascii")
_URLSAFE = bytes.maketrans(b"-_", b"+/")


@dataclass(frozen=True, slots=True)
class SecretValue:
    """One secret's bytes and the length of its non-secret prefix (``0``: none).

    With a prefix, the body (``value[prefix_len:]``) is matched case-insensitively, and its
    lower- and upper-case copies are encoded as the value is (issue 29 item 8).
    """

    value: bytes
    prefix_len: int = 0

    def __post_init__(self) -> None:
        if len(self.value) < MIN_SECRET_BYTES:
            raise ValueError(f"a redacted value has at least {MIN_SECRET_BYTES} bytes")
        if self.prefix_len and len(self.value) - self.prefix_len < MIN_BODY_BYTES:
            raise ValueError(f"a redacted body has at least {MIN_BODY_BYTES} bytes")

    def __repr__(self) -> str:
        return f"SecretValue({REDACTED!r}, prefix_len={self.prefix_len})"


def secret_value(
    value: SecretValue | str | bytes | Secret, prefixes: tuple[str, ...] = TOKEN_PREFIXES
) -> SecretValue:
    """``value`` (text as UTF-8) as a :class:`SecretValue`, its prefix recognised when it
    starts with one of ``prefixes``. Raises ``ValueError`` when it is too short."""
    if isinstance(value, SecretValue):
        return value
    if isinstance(value, Secret):
        value = value.reveal()
    raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
    prefix = next((p for p in prefixes if raw.startswith(p.encode("ascii"))), "")
    return SecretValue(raw, len(prefix))


def _base64_cores(data: bytes) -> dict[bytes, tuple[int, int]]:
    """The base64 characters that depend on ``data`` alone, at each of the three alignments it
    can have inside a longer stream (standard alphabet) → how many characters before and after
    them hold some of its bits too (0 or 1 each)."""
    cores = {}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data)
        first = -(-8 * shift // 6)  # ceil: the first character made only of data's bits
        last = 8 * (shift + len(data)) // 6  # floor: past the last such character
        cores[encoded[first:last]] = (
            int(8 * shift % 6 != 0),
            int(8 * (shift + len(data)) % 6 != 0),
        )
    return cores


def _needles(secret: SecretValue) -> tuple[set[bytes], dict[bytes, tuple[int, int]]]:
    """``(case_insensitive, exact)`` needles of one secret (module docstring); the first
    lower-cased, the second with ``-_`` read as ``+/``, each with the partial characters
    around it that a match takes too (:func:`_base64_cores`)."""
    folded: set[bytes] = set()
    exact: dict[bytes, tuple[int, int]] = {}
    value = secret.value
    if secret.prefix_len:
        body = value[secret.prefix_len :]
        variants = {body, body.lower(), body.upper()}
        folded.add(body.lower())
    else:
        variants = {value}
        exact[value.translate(_URLSAFE)] = (0, 0)
    for variant in variants:
        folded.add(variant.hex().encode("ascii"))
        folded.add(b"".join(b"%%%02x" % b for b in variant))
        quoted = urllib.parse.quote_from_bytes(variant, safe="").encode("ascii").lower()
        if quoted != variant.lower():
            folded.add(quoted)
        try:
            text = variant.decode("utf-8")
        except UnicodeDecodeError:
            text = variant.decode("latin-1")
        for ascii_only in (True, False):
            escaped = json.dumps(text, ensure_ascii=ascii_only)[1:-1].encode("utf-8")
            if escaped != variant:
                folded.add(escaped.lower())
        # every character escaped, as a JSON writer that escapes all it can does (issue 31)
        every = (f"\\u{ord(c):04x}" if ord(c) < 0x10000 else json.dumps(c)[1:-1] for c in text)
        folded.add("".join(every).lower().encode("ascii", "replace"))
        exact.update(_base64_cores(variant))
    return folded, exact


class Redactor:
    """Replaces every occurrence of each of ``secrets`` in its forms (module docstring) by
    :data:`~core.secret.REDACTED`. Immutable; build a new one when the set changes.

    ``secrets`` are :class:`SecretValue` s or anything :func:`secret_value` takes. An empty set
    redacts nothing and costs nothing.
    """

    __slots__ = ("_exact", "_folded", "longest")

    def __init__(self, secrets: Iterable[SecretValue | str | bytes | Secret] = ()) -> None:
        folded: set[bytes] = set()
        exact: dict[bytes, tuple[int, int]] = {}
        for item in secrets:
            held = secret_value(item)
            more_folded, more_exact = _needles(held)
            folded |= more_folded
            exact |= more_exact
        self._folded = tuple(sorted(folded))
        self._exact = tuple(sorted(exact.items()))
        longest = max(map(len, (*folded, *exact)), default=0)
        self.longest = longest + 4 if longest else 0
        """The longest form in bytes, with a base64 form's partial characters and padding
        (what a stream holds back, less one)."""

    def __bool__(self) -> bool:
        return self.longest > 0

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """The ``(start, end)`` byte ranges of ``data`` that hold a form, merged, in order."""
        found: list[tuple[int, int]] = []
        hay = data.lower()
        for needle in self._folded:
            at = hay.find(needle)
            while at >= 0:
                found.append((at, at + len(needle)))
                at = hay.find(needle, at + 1)
        hay = data.translate(_URLSAFE)
        for needle, (before, after) in self._exact:
            at = hay.find(needle)
            while at >= 0:
                found.append(_widened(hay, at, at + len(needle), before, after))
                at = hay.find(needle, at + 1)
        if not found:
            return found
        found.sort()
        merged = [found[0]]
        for start, end in found[1:]:
            last_start, last_end = merged[-1]
            if start <= last_end:
                merged[-1] = (last_start, max(last_end, end))
            else:
                merged.append((start, end))
        return merged

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every form of every secret replaced."""
        if not self.longest or len(data) < MIN_SECRET_BYTES:
            return data
        return _replaced(data, self.spans(data))

    def redact(self, text: str) -> str:
        """``text`` with every form of every secret replaced (matched over its UTF-8 bytes)."""
        if not self.longest or len(text) < MIN_SECRET_BYTES // 4:
            return text
        data = text.encode("utf-8", "surrogatepass")
        spans = self.spans(data)
        if not spans:
            return text
        return _replaced(data, spans).decode("utf-8", "replace")


_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _widened(hay: bytes, start: int, end: int, before: int, after: int) -> tuple[int, int]:
    """A base64 match with the partial characters around it that hold some of the value's
    bits, and its ``=`` padding."""
    if before and start > 0 and hay[start - 1] in _BASE64:
        start -= 1
    if after and end < len(hay) and hay[end] in _BASE64:
        end += 1
        for _ in range(2):
            if end < len(hay) and hay[end] == 0x3D:  # "="
                end += 1
    return start, end


def _replaced(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    if not spans:
        return data
    out = bytearray()
    at = 0
    for start, end in spans:
        out += data[at:start]
        out += _MARK
        at = end
    out += data[at:]
    return bytes(out)


class StreamRedactor:
    """:class:`Redactor` over a stream of byte chunks (module docstring).

    :meth:`feed` returns what may go out now; :meth:`flush`, at the end, the rest. The
    concatenation of what they return is :meth:`Redactor.redact_bytes` of the whole stream.
    At most ``redactor.longest - 1`` bytes are held back at a time.
    """

    __slots__ = ("_held", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        """The redacted bytes that can go out after ``chunk``."""
        keep = self._redactor.longest - 1
        if keep <= 0:
            return chunk
        data = self._held + chunk if self._held else chunk
        if len(data) <= keep:
            self._held = data
            return b""
        safe = len(data) - keep  # a form starting before this ends inside ``data``
        spans = [s for s in self._redactor.spans(data) if s[0] < safe]
        cut = max(safe, spans[-1][1]) if spans else safe
        self._held = data[cut:]
        return _replaced(data[:cut], spans)

    def flush(self) -> bytes:
        """The held bytes, redacted: call once, when the stream has ended."""
        held, self._held = self._held, b""
        return self._redactor.redact_bytes(held)
