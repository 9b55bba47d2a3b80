"""Text that came from outside and is relayed or compared by the host (issue 29 item 4).

Paths and display names *refuse* invisible and direction-changing characters
(:mod:`core.paths`, rule c: Trojan Source, CVE-2021-42574). Text the host only relays — a
plugin's error message, its ``message``, the strings of its result — cannot be refused
character by character without losing the plugin's whole answer, so it is *escaped*, here, in
one place:

- :func:`escape_invisible` — every character that is invisible or changes how the text around
  it reads becomes a visible ``<U+XXXX>``: the bidirectional controls (:data:`BIDI_CONTROLS`,
  the set :mod:`core.paths` refuses), every other format character (``Cf``: ``U+200B``–``U+200F``
  zero-width and marks, ``U+2060``–``U+2064``, ``U+061C``, ``U+FEFF``, soft hyphen …), every
  control character except tab and newline (``Cc``), line and paragraph separators
  (``Zl``/``Zp``). Anything else is kept exactly. :func:`escape_tree` does the same to every
  key and string of a JSON value.
- :func:`fold_key` — the spelling a key is *compared* in: NFKC, format characters removed,
  case folded, look-alike letters of other scripts (Cyrillic ``е``, Greek ``ο`` …) mapped to the
  Latin letter they imitate, separators dropped. ``rеceipt`` (Cyrillic ``е``), ``RECEIPT``,
  ``re\u200bceipt`` and ``ｒｅｃｅｉｐｔ`` all fold to ``receipt``.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["BIDI_CONTROLS", "escape_invisible", "escape_tree", "fold_key"]

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional embedding, override and isolate controls: refused in a path or a name
(:mod:`core.paths` rule c), escaped in relayed text."""

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
_KEPT = frozenset("\t\n")

_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "г": "r", "е": "e", "ё": "e", "з": "3", "і": "i", "ї": "i",
        "ј": "j", "к": "k", "л": "n", "м": "m", "н": "h", "о": "o", "п": "n", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
        "һ": "h", "ɡ": "g", "ց": "g", "ԍ": "g", "ѡ": "w", "ү": "y", "ӏ": "l",
        # Greek
        "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
        "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j", "ς": "c",
        "σ": "o", "ω": "w",
        # Armenian and Latin look-alikes
        "օ": "o", "ո": "n", "ս": "u", "ք": "p", "ı": "i", "ȷ": "j", "ſ": "s", "ɑ": "a",
        "ꞵ": "b", "ʀ": "r", "ɪ": "i", "ɴ": "n", "ᴛ": "t", "ᴄ": "c", "ᴇ": "e", "ᴘ": "p",
    }
)  # fmt: skip


_ASCII_DROP = str.maketrans("", "", "".join(chr(c) for c in range(128) if not chr(c).isalnum()))


def _hidden(ch: str) -> bool:
    return ch in BIDI_CONTROLS or (
        ch not in _KEPT and unicodedata.category(ch) in _HIDDEN_CATEGORIES
    )


def escape_invisible(text: str) -> str:
    """``text`` with each invisible or direction-changing character written as ``<U+XXXX>``
    (module docstring); unchanged — the same string — when it holds none. Linear time."""
    if text.isascii() and (text.isprintable() or all(c.isprintable() or c in _KEPT for c in text)):
        return text
    if not any(_hidden(ch) for ch in text):
        return text
    return "".join(f"<U+{ord(ch):04X}>" if _hidden(ch) else ch for ch in text)


def escape_tree(value: Any) -> Any:
    """The JSON ``value`` with :func:`escape_invisible` applied to every object key and every
    string, at any depth; changed in place (a list or object is rebuilt only where a key needs
    it) and returned. Iterative: no nesting depth reaches a recursion limit."""
    if isinstance(value, str):
        return escape_invisible(value)
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(k, str) and escape_invisible(k) is not k for k in item):
                pairs = list(item.items())
                item.clear()
                item.update((escape_invisible(k) if isinstance(k, str) else k, v) for k, v in pairs)
            for key, inner in item.items():
                if isinstance(inner, str):
                    item[key] = escape_invisible(inner)
                elif isinstance(inner, dict | list):
                    stack.append(inner)
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = escape_invisible(inner)
                elif isinstance(inner, dict | list):
                    stack.append(inner)
    return value


def fold_key(key: str) -> str:
    """``key`` as it is compared with a reserved word (module docstring): NFKC, format and
    control characters dropped, case folded, look-alike letters mapped to Latin, every
    character that is not a letter or digit dropped (``re-ceipt``, ``re_ceipt`` → ``receipt``)."""
    if key.isascii():  # the common key, at once: ASCII has no look-alike and no format character
        return key.lower().translate(_ASCII_DROP)
    text = unicodedata.normalize("NFKC", key)
    text = "".join(ch for ch in text if not _hidden(ch)).casefold()
    text = unicodedata.normalize("NFKC", text.translate(_CONFUSABLES))
    text = "".join(unicodedata.normalize("NFKD", ch)[0] if not ch.isascii() else ch for ch in text)
    return "".join(ch for ch in text.translate(_CONFUSABLES) if ch.isalnum())
