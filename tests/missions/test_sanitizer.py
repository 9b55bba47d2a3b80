"""The one runner-seat sanitizer (seed 004 §8; :mod:`core.sanitizer`)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.protocol import MAX_MESSAGE_BYTES
from core.refusals import Code, Refused
from core.sanitizer import check_runner_text, has_url, hazard_in


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


# --- linear time (issue 13 #4) ---------------------------------------------------------------

OLD_URL = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://|(?:^|[^\w.])www\.[^\s.]|\b(?:javascript|data|vbscript|file|mailto):(?=\S)",
    re.IGNORECASE,
)
"""The URL rule as the pattern it was before issue 13 (quadratic on letter runs): the
specification the linear rewrite must keep, checked on short texts only."""

URLISH = st.lists(
    st.sampled_from(
        [*"aZ9+.-:/ _wW\u0130\u0131\u017f\u212a\u00e9\n", "://", "www.", "data:", "File:"]
    ),
    max_size=24,
).map("".join)


@given(URLISH)
def test_the_url_rule_finds_exactly_what_the_old_pattern_found(text):
    assert has_url(text) == (OLD_URL.search(text) is not None)


@pytest.mark.parametrize(
    ("text", "hazard"),
    [
        ("q" * MAX_MESSAGE_BYTES, None),
        ("a" * (MAX_MESSAGE_BYTES - 3) + "://", "URL"),
        ("a1" * (MAX_MESSAGE_BYTES // 2), "token-like string"),
        ("7" * MAX_MESSAGE_BYTES, "token-like string"),
        ("ab " * (MAX_MESSAGE_BYTES // 3), None),
        ("~" * MAX_MESSAGE_BYTES, None),
        (":/" * (MAX_MESSAGE_BYTES // 2), "path separator"),
        ("www" * (MAX_MESSAGE_BYTES // 3), None),
    ],
)
def test_the_sanitizer_reads_a_text_of_the_largest_message_to_the_end(text, hazard):
    """Every class is found (or not) in texts as long as a whole message — runs of letters,
    digits, near-URLs — in one pass: the shapes that made the old URL pattern quadratic."""
    assert hazard_in(text) == hazard
