"""The one runner-seat sanitizer (seed 004 §8; :mod:`core.missions.sanitizer`)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.missions.sanitizer import check_runner_text, has_url, hazard_in
from core.protocol import MAX_MESSAGE_BYTES
from core.refusals import Code, Refused


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
OLD_HEX_RUN = re.compile(r"[0-9a-fA-F]{32,}")
OLD_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{24,}")
OLD_LOWER_RUN = re.compile(r"[a-z]+")
PREFIXES = ("vbx_", "sk-", "sk_live_", "ghp_", "gho_", "ghs_", "github_pat_", "xoxb-", "xoxp-")
PREFIXES += ("AKIA", "AIza", "eyJ")


def old_hazard_in(text: str) -> str | None:
    """The sanitizer as it was before issue 13 (its URL pattern quadratic on letter runs): the
    specification the linear rewrite keeps, run on short texts only."""

    def token_like(word: str) -> bool:
        if len(word) >= 16 and word.startswith(PREFIXES):
            return True
        if OLD_HEX_RUN.fullmatch(word):
            return True
        if OLD_BLOB.fullmatch(word):
            mixed = all(any(f(c) for c in word) for f in (str.isupper, str.islower, str.isdigit))
            runs = [len(run) for run in OLD_LOWER_RUN.findall(word)]
            wordy = bool(runs) and sum(runs) / len(runs) >= 3
            counts = Counter(word)
            entropy = -sum(c / len(word) * math.log2(c / len(word)) for c in counts.values())
            return mixed and not wordy and entropy >= 4.0
        return False

    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text):
        return "control character"
    if OLD_URL.search(text):
        return "URL"
    if "/" in text or "\\" in text:
        return "path separator"
    if any(token_like(word) for word in text.split()):
        return "token-like string"
    return None


URLISH = st.lists(
    st.sampled_from([*"a\u017f\u212a\u0131\u00e91.:/ w\n", "://", "www.", "data:", "FILE:"]),
    max_size=12,
).map("".join)
TOKENISH = st.lists(
    st.one_of(
        st.text(alphabet="0123456789abcdefABZqz+/=_-", min_size=14, max_size=40),
        st.sampled_from(["vbx_", "ghp_", "eyJ", "AKIA", "\u00e9", "\u200b"]),
    ),
    max_size=4,
).map(" ".join)


@settings(max_examples=400)
@given(st.one_of(URLISH, TOKENISH, st.tuples(URLISH, TOKENISH).map("".join)))
def test_the_linear_sanitizer_names_exactly_what_the_old_one_named(text):
    assert hazard_in(text) == old_hazard_in(text)
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
