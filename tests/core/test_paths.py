"""The one path rule (core/paths.py; SPEC §3, §7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.paths import MAX_SEGMENT_BYTES, ProjectPath, check_name, parse_path
from core.refusals import Code, Refused


def code_of(text: object, **kw: bool) -> Code:
    with pytest.raises(Refused) as caught:
        parse_path(text, **kw)
    return caught.value.code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("../escape", Code.PATH_OUTSIDE_ROOT),
        ("../../host/x", Code.PATH_OUTSIDE_ROOT),
        ("a/../../b", Code.PATH_OUTSIDE_ROOT),
        ("a/..", Code.PATH_OUTSIDE_ROOT),
        ("/etc/passwd", Code.PATH_OUTSIDE_ROOT),
        ("\\\\server\\share", Code.PATH_OUTSIDE_ROOT),
        ("C:/Windows", Code.PATH_OUTSIDE_ROOT),
        ("c:evil", Code.PATH_OUTSIDE_ROOT),
        ("", Code.PATH_INVALID),
        ("a//b", Code.PATH_INVALID),
        ("a/./b", Code.PATH_INVALID),
        ("a/", Code.PATH_INVALID),
        ("a\x00b", Code.PATH_INVALID),
        ("tab\there", Code.PATH_INVALID),
        ("del\x7f", Code.PATH_INVALID),
        ("c1\x85", Code.PATH_INVALID),
        ("a\\..\\b", Code.PATH_INVALID),
        ("x" * (MAX_SEGMENT_BYTES + 1), Code.PATH_INVALID),
        ("é" * 128, Code.PATH_INVALID),
        (".voicebox/manifest.json", Code.PATH_RESERVED),
        (".voicebox", Code.PATH_RESERVED),
        ("a/.vbx-tmp-123", Code.PATH_RESERVED),
        (5, Code.PATH_INVALID),
    ],
)
def test_paths_that_leave_or_abuse_the_root_are_refused_by_name(text: object, code: Code) -> None:
    assert code_of(text) == code


def test_escape_is_named_as_escape_even_inside_reserved_folder() -> None:
    assert code_of(".voicebox/../../host/token") == Code.PATH_OUTSIDE_ROOT


@pytest.mark.parametrize(
    "text",
    [
        "a.txt",
        "docs/guide/intro.md",
        "Проект-ü-📦/файл.txt",
        "host/x",
        "..a",
        "a..",
        ".hidden",
        "<img src=x onerror=alert(1)>",
        "x" * MAX_SEGMENT_BYTES,
        "a b/c d",
        "\u202eevil.txt",
    ],
)
def test_ordinary_unicode_paths_are_kept_exactly(text: str) -> None:
    path = parse_path(text)
    assert str(path) == text
    assert path.parts == tuple(text.split("/"))


def test_a_user_folder_called_host_is_just_a_folder() -> None:
    assert parse_path("host/token").parts == ("host", "token")


def test_metadata_owner_may_name_voicebox_paths() -> None:
    assert parse_path(".voicebox/mailbox.jsonl", allow_meta=True).is_meta


def test_names_are_not_normalised_nfc_and_nfd_stay_distinct() -> None:
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert parse_path(nfc) != parse_path(nfd)


@given(st.text(max_size=300))
def test_parse_path_yields_a_safe_path_or_a_refusal(text: str) -> None:
    try:
        path = parse_path(text)
    except Refused as refused:
        assert refused.code in {Code.PATH_INVALID, Code.PATH_OUTSIDE_ROOT, Code.PATH_RESERVED}
        return
    assert isinstance(path, ProjectPath)
    assert all(seg not in ("", ".", "..") for seg in path.parts)
    assert not path.is_meta
    assert "/".join(path.parts) == text


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "x" * 201, None, 3])
def test_display_names_refuse_empty_control_and_overlong(bad: object) -> None:
    with pytest.raises(Refused) as caught:
        check_name(bad)
    assert caught.value.code == Code.NAME_INVALID


def test_display_names_keep_markup_and_slashes_literally() -> None:
    for name in ["<b>x</b>", "a/b", "..", "\u202eRTL"]:
        assert check_name(name) == name
