"""The one sanitizer for names and purposes that come from the runner seat (seed 004 §8).

A runner (an agent, a model) may propose block names and purposes through ``candidate_edit``.
Each such text passes :func:`check_runner_text`; the owner seat — the person at the page — is
never sanitized. The sanitizer validates only: a text it accepts is stored byte for byte, never
rewritten. It refuses ``sanitizer_refused`` naming the field and the first class found, in this
order:

- ``control character`` — any Unicode control (``Cc``: NUL, newline, tab, DEL, C1), format
  character (``Cf``: bidi overrides, zero-width joiners and spaces, soft hyphen) or line/paragraph
  separator (``Zl``/``Zp``). A runner name is one line of plain text;
- ``URL`` — a scheme followed by ``//`` (``https://``, ``ftp://``…), a ``www.`` host, or one of
  the schemes ``javascript:``, ``data:``, ``vbscript:``, ``file:``, ``mailto:``;
- ``path separator`` — ``/`` or ``\\``;
- ``token-like string`` — a word (split on whitespace) that looks like a credential: it starts
  with a well-known secret prefix (``vbx_``, ``sk-``, ``sk_live_``, ``ghp_``, ``gho_``,
  ``ghs_``, ``github_pat_``, ``xoxb-``, ``xoxp-``, ``AKIA``, ``AIza``, ``eyJ``) and is at least
  16 characters; or it is at least 32 hex digits; or it is at least 24 characters of
  ``[A-Za-z0-9+/=_-]`` mixing upper case, lower case and digits, with a character entropy of at
  least 4 bits and lower-case runs shorter than 3 letters on average (random text; a CamelCase
  identifier such as ``ParseHttpRequestHeadersV2024`` reads as words and passes).

Ordinary names — ``Receipt importer``, ``handle_oauth2_callback_v2``, ``Élan vital — 2º``,
``data: pipeline`` — pass unchanged.

Every check reads the text in time linear in its length (issue 13: a pattern with an unbounded
``*`` after a letter took ≈ 1 s per 10,000 letters in Pyodide, quadratic, and one batch hung the
host). The scheme rule is a scan, not a pattern; the one pattern left has only bounded
quantifiers (``tests/core/test_patterns_are_linear.py`` proves the class of every pattern in
``core`` and ``browser_host``).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from typing import Literal

from core.refusals import Code, Refused

__all__ = ["HazardClass", "check_runner_text", "has_url", "hazard_in"]

HazardClass = Literal["control character", "path separator", "URL", "token-like string"]

_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
_URL_MARK = re.compile(
    r"(?:^|[^\w.])www\.[^\s.]|\b(?:javascript|data|vbscript|file|mailto):(?=\S)", re.IGNORECASE
)
_SCHEME_LETTERS = frozenset(string.ascii_letters + "\u0130\u0131\u017f\u212a")
"""ASCII letters, and the four characters Python's case-insensitive ``[A-Za-z]`` also takes
(İ ı ſ K): the scheme rule keeps exactly what the earlier pattern found."""
_SCHEME_CHARS = _SCHEME_LETTERS | frozenset(string.digits + "+.-")
_SECRET_PREFIXES = (
    "vbx_",
    "sk-",
    "sk_live_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
    "eyJ",
)
_HEX = frozenset(string.hexdigits)
_BLOB = frozenset(string.ascii_letters + string.digits + "+/=_-")
_LOWER_ONLY = str.maketrans(dict.fromkeys(_BLOB - frozenset(string.ascii_lowercase), " "))


def _entropy(word: str) -> float:
    counts = Counter(word)
    n = len(word)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _token_like(word: str) -> bool:
    if len(word) < 16:
        return False
    if word.startswith(_SECRET_PREFIXES):
        return True
    if len(word) < 24:
        return False
    chars = set(word)
    if len(word) >= 32 and chars <= _HEX:
        return True
    if chars <= _BLOB:
        mixed = (
            any(c.isupper() for c in chars)
            and any(c.islower() for c in chars)
            and any(c.isdigit() for c in chars)
        )
        if not mixed:
            return False
        runs = word.translate(_LOWER_ONLY).split()  # the runs of lower-case letters
        wordy = bool(runs) and sum(map(len, runs)) / len(runs) >= 3
        return not wordy and _entropy(word) >= 4.0
    return False


def _has_scheme(text: str) -> bool:
    """A letter, then scheme characters, then ``://`` (RFC 3986 §3.1's scheme shape).

    Each ``://`` is looked back from over the scheme characters before it; those runs never
    overlap (``:`` is not a scheme character), so the text is read about twice at most."""
    end = text.find("://")
    while end != -1:
        start = end
        while start > 0 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        if not _SCHEME_LETTERS.isdisjoint(text[start:end]):
            return True
        end = text.find("://", end + 1)
    return False


def has_url(text: str) -> bool:
    """True when ``text`` holds a URL by the rule in the module docstring (linear time)."""
    if _has_scheme(text):
        return True
    # what _URL_MARK finds holds "www." or ":": a text with neither is not searched
    return ("." in text or ":" in text) and _URL_MARK.search(text) is not None


def hazard_in(text: str) -> HazardClass | None:
    """The first hazard class found in ``text`` (order in the module docstring), or ``None``."""
    if not _CONTROL_CATEGORIES.isdisjoint(map(unicodedata.category, set(text))):
        return "control character"
    if has_url(text):
        return "URL"
    if "/" in text or "\\" in text:
        return "path separator"
    if any(_token_like(word) for word in text.split()):
        return "token-like string"
    return None


def check_runner_text(field: str, text: str) -> str:
    """Return ``text`` unchanged when it is clean; else refuse.

    ``field`` is how the refusal names the input (``ops[2].name``). Raises
    :class:`~core.refusals.Refused` ``sanitizer_refused`` with the message
    ``"<field>: <class>"`` (e.g. ``ops[0].name: path separator``) and ``field`` set.
    """
    hazard = hazard_in(text)
    if hazard is not None:
        raise Refused(Code.SANITIZER_REFUSED, f"{field}: {hazard}", field=field)
    return text
