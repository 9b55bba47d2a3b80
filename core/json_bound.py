"""The one JSON parser for every text that comes from outside the host (issue 29 item 5).

Plugins' outputs and answers, peers' and remotes' answers, archive and plugin manifests, the
page's messages and every document the host reads back from storage (mailbox lines,
``policy.json``, ``plugins.json``, ``environments.json`` ...) are parsed here, or by a
contract's ``model_validate_json`` — the same parser (below).

Why not ``json.loads``: the stdlib's C scanner recurses once per nested array or object. Under
CPython a deep text ends in ``RecursionError``; in Pyodide the Wasm stack is smaller than the
interpreter's recursion limit assumes, so 100,000 nested ``[`` overflow it first and the whole
host dies (a fatal error, not an exception — issue 29 item 5).

The parser is pydantic-core's (``jiter``, Rust). It bounds nesting itself: at
:data:`MAX_DEPTH` + 1 nested arrays or objects it stops with an error, in one linear pass that
builds nothing deeper, in CPython and in Pyodide alike (``tests/core/test_json_bound.py`` feeds
it 10^5 and 10^6 levels in both). ``model_validate_json`` runs the same parser with the same
bound and refuses deep input as a ``ValidationError`` (``json_invalid``), which its callers
already turn into their refusals. Measured on a 1.16 MB document of 7,000 listing rows
(docs/operations.md, "Bounded JSON"): about 5 ms in CPython and 8 ms in Pyodide, no more than
``json.loads`` in either; a 10^6-deep text is refused in about 0.05 ms, since the parser stops
at the bound.

Differences from ``json.loads``, all stricter: a lone surrogate (escaped or raw) and a UTF-8
BOM are refused as malformed. ``NaN``/``Infinity`` and big integers read as ``json.loads``
reads them.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic_core import from_json

from core.refusals import Code, Refused

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "nests_too_deep", "parse_json", "too_deep"]

MAX_DEPTH: Final = 200
"""Arrays and objects nested at most this deep (the outermost counts as 1). It is
pydantic-core's own recursion limit; a test pins it, so an upgrade that moves it is seen."""

MAX_JSON_BYTES: Final = 16 * 1024 * 1024
"""The size bound when the caller names none (bytes of UTF-8). Callers with a tighter bound of
their own (a plugin result's 1 MiB, a mailbox line's) pass it."""


def parse_json(
    text: str | bytes | bytearray,
    *,
    code: Code = Code.MESSAGE_MALFORMED,
    what: str = "The message",
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """Parse ``text`` (JSON, UTF-8 when bytes) into plain values: ``dict``, ``list``, ``str``,
    ``int``, ``float``, ``bool``, ``None``.

    Refuses with ``code`` — ``message-malformed`` for protocol, peer, remote and stored input,
    ``tool-output-invalid`` for a plugin's output; the caller picks — when ``text`` is longer
    than ``max_bytes`` (UTF-8 bytes; a ``str`` is measured without a copy when its length alone
    decides), nests arrays or objects deeper than :data:`MAX_DEPTH`, or is not JSON. ``what``
    names the text in the sentence ("The plugin's output"). Never raises anything else, never
    recurses in Python (issue 29 item 5).
    """
    if len(text) > max_bytes:  # at least one byte a character
        raise Refused(code, f"{what} is larger than {max_bytes} bytes.")
    if isinstance(text, str) and len(text) * 4 > max_bytes:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise Refused(code, f"{what} is larger than {max_bytes} bytes.")
    try:
        return from_json(text)
    except (ValueError, TypeError) as exc:
        if nests_too_deep(str(exc)):
            raise too_deep(code, what) from None
        raise Refused(code, f"{what} is not valid JSON.") from None


def nests_too_deep(error: str) -> bool:
    """Whether the parser's error text ``error`` (from :func:`parse_json`'s parser, or the
    ``ctx.error`` of a ``json_invalid`` validation error of ``model_validate_json``) says it
    stopped at its nesting bound rather than at malformed text."""
    return "recursion limit" in error


def too_deep(code: Code, what: str) -> Refused:
    """The refusal for a text that nests deeper than :data:`MAX_DEPTH`: ``code``, ``what``
    naming the text ("The message"). The text is valid JSON; it is refused for its depth."""
    return Refused(code, f"{what} nests arrays or objects deeper than {MAX_DEPTH} levels.")
