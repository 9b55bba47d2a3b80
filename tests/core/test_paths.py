"""The one name rule (core/paths.py; SPEC §3, §7, §11): paths and display names."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.paths import (
    BIDI_CONTROLS,
    MAX_SEGMENT_BYTES,
    META_DIR,
    TEMP_PREFIX,
    ProjectPath,
    _any_text_problem,
    _text_problem,
    check_name,
    check_project_name,
    parse_new_path,
    parse_path,
)
from core.refusals import Code, Refused
from tests.support import HostHarness, run


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
        "a..b",
        ".hidden",
        "<img src=x onerror=alert(1)>",
        "x" * MAX_SEGMENT_BYTES,
        "a b/c d",
        " leading space",
        'note-a:b*c?d"e<f>g|h',
        "CONSOLE.txt",
        "con-notes/COM10",
        "caf\u00e9",
        "👩\u200d💻",
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


@pytest.mark.parametrize(
    "text",
    [
        ".VOICEBOX/x",
        ".Voicebox/x",
        ".VOICEBOX/skeleton.json",
        ".voiceBOX",
        ".VBX-TMP-x",
        ".Vbx-Tmp-",
        "a/.VBX-TMP-x",
        "deep/er/.vbx-TMP-draft.md",
    ],
)
def test_reserved_names_are_reserved_in_every_letter_case(text: str) -> None:
    """On a case-insensitive disk (where picked folders live) ``.VOICEBOX`` is ``.voicebox``."""
    assert code_of(text) == Code.PATH_RESERVED
    with pytest.raises(Refused) as caught:
        parse_path(text)
    assert "letter case" in caught.value.message


@given(
    st.sampled_from([f"{META_DIR}/x", f"{TEMP_PREFIX}draft.md", f"a/{TEMP_PREFIX}"]),
    st.lists(st.booleans(), min_size=24, max_size=24),
)
def test_any_mix_of_letter_case_in_a_reserved_name_is_reserved(
    base: str, upper: list[bool]
) -> None:
    spelled = "".join(c.upper() if up else c for c, up in zip(base, upper, strict=False))
    assert code_of(spelled) == Code.PATH_RESERVED


def test_the_metadata_name_is_reserved_only_at_the_project_root() -> None:
    for text in ["docs/.voicebox/x", "docs/.VOICEBOX/x", ".voicebox-notes/x", "x.vbx-tmp-y"]:
        assert str(parse_path(text)) == text


# The hostile-name corpus (SPEC §3, §11): each name with the code the one rule gives it.
HOSTILE_SEGMENTS = [
    ("CON", Code.PATH_RESERVED),
    ("con", Code.PATH_RESERVED),
    ("NUL", Code.PATH_RESERVED),
    ("nul.txt", Code.PATH_RESERVED),
    ("Aux.tar.gz", Code.PATH_RESERVED),
    ("COM1", Code.PATH_RESERVED),
    ("lpt9.log", Code.PATH_RESERVED),
    ("COM\u00b9", Code.PATH_RESERVED),
    ("CONIN$", Code.PATH_RESERVED),
    ("CON .txt", Code.PATH_RESERVED),
    ("a.", Code.PATH_INVALID),
    ("a ", Code.PATH_INVALID),
    ("...", Code.PATH_INVALID),
    ("a..", Code.PATH_INVALID),
    (". .", Code.PATH_INVALID),
    (" ", Code.PATH_INVALID),
    ("x" * (MAX_SEGMENT_BYTES + 1), Code.PATH_INVALID),
    ("é" * 128, Code.PATH_INVALID),
    ("😀" * 64, Code.PATH_INVALID),
    ("a\x00b", Code.PATH_INVALID),
    ("a\x1b[2J", Code.PATH_INVALID),
    ("\u202eevil.txt", Code.PATH_INVALID),
    ("evil\u202etxt.exe", Code.PATH_INVALID),
    ("\u2066isolate\u2069", Code.PATH_INVALID),
    ("cafe\u0301", Code.PATH_INVALID),
    ("x\ud800y", Code.PATH_INVALID),
    (".", Code.PATH_INVALID),
    ("..", Code.PATH_OUTSIDE_ROOT),
]


@pytest.mark.parametrize(("segment", "code"), HOSTILE_SEGMENTS)
def test_hostile_names_are_refused_by_the_one_rule(segment: str, code: Code) -> None:
    assert code_of(segment) == code
    assert code_of(f"folder/{segment}") == code
    if code != Code.PATH_OUTSIDE_ROOT:
        assert code_of(f"{segment}/inside.txt") == code


def test_nfc_and_nfd_spellings_never_both_exist() -> None:
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert str(parse_path(nfc)) == nfc
    assert code_of(nfd) == Code.PATH_INVALID
    with pytest.raises(Refused) as caught:
        check_name(f"Project {nfd}")
    assert caught.value.code == Code.NAME_INVALID


def test_a_refusal_says_which_rule() -> None:
    for segment, words in [
        ("CON", "device name"),
        ("a.", "ends with a dot or a space"),
        ("cafe\u0301", "NFC"),
        ("a\u202eb", "bidirectional"),
        ("a\x00b", "control character"),
        ("x/../y", "holds '..' (a step up out of a folder)"),
        ("a" * 256, "is too long: at most 255 bytes"),
        ("CON", "choose another name"),
    ]:
        with pytest.raises(Refused) as caught:
            parse_path(segment)
        assert words in caught.value.message


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
    assert path.parts[0].casefold() != META_DIR
    assert not any(seg.casefold().startswith(TEMP_PREFIX) for seg in path.parts)
    assert "/".join(path.parts) == text
    for seg in path.parts:
        assert unicodedata.is_normalized("NFC", seg)
        assert not BIDI_CONTROLS & set(seg)
        assert not seg.endswith((".", " "))
        assert len(seg.encode("utf-8")) <= MAX_SEGMENT_BYTES
        assert seg.split(".")[0].rstrip(" ").upper() not in {"CON", "PRN", "AUX", "NUL"}


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "a\nb", "x" * 201, None, 3, "a\x00b", "\u202eRTL", "cafe\u0301", "x\udc00"],
)
def test_display_names_refuse_empty_control_bidi_denormalised_and_overlong(bad: object) -> None:
    with pytest.raises(Refused) as caught:
        check_name(bad)
    assert caught.value.code == Code.NAME_INVALID


def test_display_names_keep_markup_slashes_and_device_names_literally() -> None:
    for name in ["<b>x</b>", "a/b", "..", "CON", "a.", " padded ", "caf\u00e9", "👩\u200d💻"]:
        assert check_name(name) == name


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_the_ascii_shortcut_gives_every_ascii_name_the_general_rules_verdict(text: str) -> None:
    """The read path's shortcut for ASCII names (issue 18) refuses exactly what the general
    character rule refuses, with the same words."""
    assert _text_problem(text) == _any_text_problem(text)


@pytest.mark.parametrize("code", range(0x80))
def test_every_ascii_character_gets_the_general_rules_verdict(code: int) -> None:
    assert _text_problem(f"a{chr(code)}b") == _any_text_problem(f"a{chr(code)}b")


# ---- issue 34: the Windows set, said by name; a project name is not a path -----------------


def test_a_drive_letter_is_refused_naming_the_drive_letter_and_the_colon() -> None:
    for text in ("a:b.txt", "C:/Windows/x", "z:"):
        with pytest.raises(Refused) as caught:
            parse_path(text)
        said = caught.value.message
        assert caught.value.code == Code.PATH_OUTSIDE_ROOT
        assert f"'{text[:2]}'" in said and "drive letter" in said and "':'" in said, said
    with pytest.raises(Refused) as caught:
        parse_path("/etc/passwd")
    assert "'/'" in caught.value.message and "drive" not in caught.value.message


@pytest.mark.parametrize("ch", list('<>:"|?*'))
def test_a_new_name_holds_no_character_windows_forbids_and_the_refusal_names_it(ch: str) -> None:
    for text in (f"ok{ch}.txt", f"folder{ch}/a.txt", f"a/b/{ch}"):
        with pytest.raises(Refused) as caught:
            parse_new_path(text)
        assert caught.value.code == Code.PATH_INVALID, text
        assert f"'{ch}'" in caught.value.message and "Windows" in caught.value.message
    # a name already there is not new: parse_path (read, list, delete, a move's source) takes it
    assert str(parse_path(f"ok{ch}.txt")) == f"ok{ch}.txt"


def test_a_file_already_named_with_a_windows_character_stays_readable_saveable_and_movable() -> (
    None
):
    h = HostHarness()
    pid = h.ok("project.create", name="older")["project"]["id"]
    h.roots.roots[pid].tree["ok?.txt"] = b"made before the rule"
    assert [e["name"] for e in h.ok("file.list", project=pid)["entries"]] == ["ok?.txt"]
    assert h.call("file.read", project=pid, path="ok?.txt")[1] == b"made before the rule"
    h.ok("file.write", b"saved over", project=pid, path="ok?.txt")  # the editor's save
    assert h.call("file.read", project=pid, path="ok?.txt")[1] == b"saved over"
    refused = h.refused("file.write", b"x", project=pid, path="new?.txt")
    assert refused["code"] == "path-invalid" and "'?'" in refused["message"]
    assert h.refused("file.move", project=pid, src="ok?.txt", dst="b?.txt")["code"] == (
        "path-invalid"
    )
    h.ok("file.move", project=pid, src="ok?.txt", dst="ok.txt")  # renamed away from it
    assert [e["name"] for e in h.ok("file.list", project=pid)["entries"]] == ["ok.txt"]


def test_a_project_name_a_person_gives_is_not_a_path_and_has_no_outer_space() -> None:
    h = HostHarness()
    for name, word in (("bad/name:*?", "'/'"), ("back\\slash", "'\\'"), (" padded", "space")):
        refused = h.refused("project.create", name=name)
        assert refused["code"] == "name-invalid" and word in refused["message"], refused
        with pytest.raises(Refused):
            check_project_name(name)
    # markup and the other Windows characters are display text: shown, never a file name
    shown = '<img src=x onerror=alert(1)> a:b*?"|'
    assert h.ok("project.create", name=shown)["project"]["name"] == shown
    pid = h.ok("project.create", name="fine")["project"]["id"]
    assert h.refused("project.rename", project=pid, name="a/b")["code"] == "name-invalid"


def test_a_project_already_named_with_a_slash_still_opens_lists_and_saves() -> None:
    h = HostHarness()  # a name stored before the rule (an import keeps an archive's name)
    catalog = h.ctx.catalog
    manifest, files = run(catalog.create_staged("bad/name:*?"))
    run(catalog.commit(manifest, files))
    assert "bad/name:*?" in [p["name"] for p in h.ok("project.list")["projects"]]
    h.ok("file.write", b"x", project=manifest.id, path="a.txt")
    assert h.call("file.read", project=manifest.id, path="a.txt")[1] == b"x"
    assert h.ok("project.export", project=manifest.id)["files"] == 1
