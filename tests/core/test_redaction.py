"""Exact-value redaction (issue 29 items 7–9; core/redaction.py): a secret a side holds never
leaves in any of its common forms, whole or split across two chunks of a stream."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from core.redaction import Redactor, SecretValue, StreamRedactor, secret_value
from core.secret import REDACTED

BEARER = "vbx_" + "Q3xk-9_Zr2LmPq7TuVw8YaBcDeFgHiJkLmNoPqRsTuV"
TOKEN = "vbh_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9w"
KEY = bytes(range(200, 232))  # an audit key: 32 raw bytes, not text


def _forms(value: bytes, body: bytes) -> dict[str, bytes]:
    """The forms a secret can leave in, each inside ordinary text."""
    return {
        "raw": value,
        "body": body,
        "body lower": body.lower(),
        "body upper": body.upper(),
        "hex": value.hex().encode(),
        "HEX": value.hex().upper().encode(),
        "body hex": body.hex().encode(),
        "percent": b"".join(b"%%%02x" % b for b in value),
        "PERCENT": b"".join(b"%%%02X" % b for b in value),
        "quoted": urllib.parse.quote_from_bytes(value, safe="").encode(),
        "json": json.dumps(value.decode("latin-1"))[1:-1].encode(),
        "base64": base64.b64encode(value),
        "base64 urlsafe": base64.urlsafe_b64encode(value),
        "base64 +1": base64.b64encode(b"x" + value),
        "base64 +2": base64.b64encode(b"xy" + value),
        "base64 urlsafe +2": base64.urlsafe_b64encode(b"xy" + value),
        "base64 of body lower": base64.b64encode(body.lower()),
        "base64 of body lower +1": base64.b64encode(b"\n" + body.lower()),
    }


def _leaks(out: bytes, value: bytes, body: bytes) -> list[str]:
    """The forms still found in ``out`` (each checked on its secret-only part)."""
    leaked = []
    for name, form in _forms(value, body).items():
        core = form[3:-3] if name.startswith("base64") else form  # the value's own characters
        if core in out or (core.lower() in out.lower() and name.startswith("body")):
            leaked.append(name)
    return leaked


@pytest.mark.parametrize("secret", [BEARER, TOKEN])
def test_every_form_of_a_held_token_is_redacted(secret: str) -> None:
    value = secret.encode()
    body = value[4:]
    redactor = Redactor([secret])
    for name, form in _forms(value, body).items():
        text = b"before " + form + b" after"
        out = redactor.redact_bytes(text)
        assert REDACTED.encode() in out, name
        assert out.startswith(b"before ") and out.endswith(b" after"), name
        assert not _leaks(out, value, body), name


def test_every_form_of_a_binary_key_is_redacted() -> None:
    redactor = Redactor([KEY])
    for name, form in _forms(KEY, KEY).items():
        if name.startswith("body"):
            continue  # a key has no prefix: its raw form is exact
        out = redactor.redact_bytes(b"x" + form + b"y")
        assert REDACTED.encode() in out, name


def test_text_without_a_secret_is_unchanged() -> None:
    redactor = Redactor([BEARER, TOKEN, KEY])
    text = b"vbx_ is a prefix; " + BEARER[:-8].encode()[4:] + b" is only part of one"
    assert redactor.redact_bytes(text) == text
    assert redactor.redact("ünïcode stays ünïcode") == "ünïcode stays ünïcode"


def test_text_answers_are_redacted_over_their_utf8() -> None:
    redactor = Redactor([BEARER])
    said = json.dumps({"name": BEARER[4:].lower(), "note": "ü " + BEARER[4:]})
    out = redactor.redact(said)
    assert BEARER[4:].lower() not in out.lower()
    assert json.loads(out) == {"name": REDACTED, "note": "ü " + REDACTED}


def test_a_value_split_across_two_chunks_is_redacted() -> None:
    redactor = Redactor([BEARER, KEY])
    for form in (BEARER.encode(), base64.b64encode(BEARER.encode()), KEY.hex().encode()):
        stream = b"a" * 100 + form + b"b" * 100
        for cut in range(1, len(stream)):
            sr = StreamRedactor(redactor)
            out = sr.feed(stream[:cut]) + sr.feed(stream[cut:]) + sr.flush()
            assert out == redactor.redact_bytes(stream), cut
            assert REDACTED.encode() in out


def test_a_stream_of_small_chunks_equals_the_whole_redacted() -> None:
    redactor = Redactor([BEARER, TOKEN])
    stream = (b"line " + BEARER.encode() + b" and " + TOKEN[4:].lower().encode() + b"\n") * 50
    sr = StreamRedactor(redactor)
    out = b"".join(sr.feed(stream[i : i + 7]) for i in range(0, len(stream), 7)) + sr.flush()
    assert out == redactor.redact_bytes(stream)
    assert out.count(REDACTED.encode()) == 100


def test_a_value_too_short_to_redact_safely_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        SecretValue(b"short")
    with pytest.raises(ValueError, match="body has at least"):
        secret_value("vbx_tiny-body-12")


def test_an_empty_redactor_changes_nothing() -> None:
    redactor = Redactor()
    assert not redactor
    sr = StreamRedactor(redactor)
    assert sr.feed(b"abc") == b"abc" and sr.flush() == b""


def test_a_key_with_every_character_json_escaped_is_redacted() -> None:
    """A JSON writer that escapes every character (``\\u0073\\u006b…``) hides a provider key
    from a needle that escapes only what JSON must (issue 31, "Masking")."""
    key = "sk-ant-canary-5Xq8Lm2Pz7Rv4Tn9Wb1Kd6Hj3Fg0Yc"
    escaped = "".join(f"\\u{ord(c):04x}" for c in key)
    redactor = Redactor([key])
    assert redactor.redact(f'{{"k": "{escaped}"}}') == f'{{"k": "{REDACTED}"}}'
    assert redactor.redact(escaped.upper().replace("\\U", "\\u")) == REDACTED
