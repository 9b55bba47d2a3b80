"""The one runner-seat sanitizer (seed 004 §8; :mod:`core.sanitizer`)."""

from __future__ import annotations

import pytest

from core.refusals import Code, Refused
from core.sanitizer import check_runner_text, hazard_in


@pytest.mark.parametrize(
    ("text", "hazard"),
    [
        ("Receipt\nimporter", "control character"),
        ("Receipt\timporter", "control character"),
        ("Receipt\x00importer", "control character"),
        ("Receipt \u202eretropmi", "control character"),
        ("zero\u200bwidth", "control character"),
        ("https://evil.example/x", "URL"),
        ("see www.evil.example", "URL"),
        ("javascript:alert(1)", "URL"),
        ("data:text/html,hi", "URL"),
        ("src/importer", "path separator"),
        ("C:\\importer", "path separator"),
        ("../../etc", "path separator"),
        ("token vbx_9f8e7d6c5b4a3f2e1d0c", "token-like string"),
        ("ghp_a8Kd93kdLq0Zx7Pq2mN4bV6cX1zR5tY8", "token-like string"),
        ("key a9f8e7d6c5b4a39281706f5e4d3c2b1a", "token-like string"),
        ("QmFzZTY0RW5jb2RlZFNlY3JldFZhbHVl", "token-like string"),
        ("eyJhbGciOiJIUzI1NiJ9", "token-like string"),
    ],
)
def test_each_hazard_class_is_named(text, hazard):
    assert hazard_in(text) == hazard
    with pytest.raises(Refused) as caught:
        check_runner_text("ops[3].name", text)
    assert caught.value.code == Code.SANITIZER_REFUSED
    assert caught.value.field == "ops[3].name"
    assert caught.value.message == f"ops[3].name: {hazard}"


@pytest.mark.parametrize(
    "text",
    [
        "Receipt importer",
        "Parses mission letters and keeps the head index.",
        "handle_oauth2_callback_v2",
        "ParseHttpRequestHeadersV2024",
        "Élan vital — 2º (ß, 東京)",
        "data: pipeline",
        "ratio 3:2, version 1.2.3",
    ],
)
def test_plain_text_passes_unchanged(text):
    assert hazard_in(text) is None
    assert check_runner_text("name", text) is text
