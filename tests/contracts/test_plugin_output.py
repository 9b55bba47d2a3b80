"""What a plugin hands back is checked and relayed as the host's rules say (issue 29 item 4):
no receipt or grant at any depth or in any look-alike spelling, no package entry whose stored
name hides a NUL, no invisible or direction-changing character relayed unseen."""

from __future__ import annotations

import json

import pytest

from core.refusals import Code, Refused
from core.relayed_text import escape_invisible, escape_tree, fold_key
from core.tools.plugin_call import decode_output
from core.tools.plugin_manifest import MANIFEST_NAME, parse_manifest, read_package
from tests.contracts.test_plugin_manifest import MODULE, encoded, manifest, zipped

ARGS = {"path": "a.md", "target": "b.md"}


def _decode(output: object) -> Code | None:
    (op,) = parse_manifest(encoded(manifest())).operations
    try:
        decode_output(op, ARGS, json.dumps(output, ensure_ascii=False).encode())
    except Refused as refused:
        return refused.code
    return None


@pytest.mark.parametrize(
    "result",
    [
        {"a": [{"b": {"receipt": {"rung": "local-write"}}}]},
        {"r\u0435ceipt": {"path": "b.md"}},  # Cyrillic е
        {"x": {"RE\u200bCEIPT": 1}},  # zero-width space, upper case
        {"\uff52\uff45\uff43\uff45\uff49\uff50\uff54": 1},  # full width
        {"x": [[{"hostReceipt": {}}]]},
        {"deep": [[[{"rung": "local-write", "sha256": "00", "path": "b.md"}]]]},
        {"deep": {"rung": "local-write", "issuer": "host"}},
    ],
)
def test_a_receipt_at_any_depth_and_in_any_spelling_is_refused(result: dict) -> None:
    assert _decode({"ok": True, "result": result}) == Code.RECEIPT_FORGERY_REFUSED


@pytest.mark.parametrize(
    "result",
    [
        {"a": {"b": {"grant": {"files": "write"}}}},
        {"list": [{"g\u0433ant": 1}]},  # Cyrillic г
        {"files_grants": ["plugin:x"]},
        {"x": [{"GRANTS": []}]},
    ],
)
def test_a_grant_at_any_depth_and_in_any_spelling_is_refused(result: dict) -> None:
    assert _decode({"ok": True, "result": result}) == Code.GRANT_FIELD_REFUSED


def test_an_ordinary_result_passes() -> None:
    ordinary = {"words": 3, "grammar": "ok", "migrants": 1, "rung": 2, "notes": ["receipt"]}
    assert _decode({"ok": True, "result": ordinary}) is None


def test_look_alike_keys_fold_to_the_word_they_imitate() -> None:
    for key in ("r\u0435c\u0435ipt", "RECEIPT", "re\u200bceipt", "re-ceipt", "r\u00e9ceipt"):
        assert fold_key(key) == "receipt", key


def test_a_package_entry_name_with_a_nul_is_refused_at_read() -> None:
    """The zip reader cuts a name at its first NUL: ``tidy.wasm\\0evil`` would read as the
    module ``tidy.wasm``. The name as stored is checked, and refused."""
    placeholder = b"tidy.wasmQevil"
    data = zipped({MANIFEST_NAME: encoded(manifest()), placeholder.decode(): MODULE})
    data = data.replace(placeholder, b"tidy.wasm\x00evil")
    with pytest.raises(Refused) as caught:
        read_package(data)
    assert caught.value.code == Code.ARCHIVE_ENTRY_NAME_INVALID
    with pytest.raises(Refused) as caught:
        read_package({MANIFEST_NAME: encoded(manifest()), "tidy.wasm\x00evil": MODULE})
    assert caught.value.code == Code.ARCHIVE_ENTRY_NAME_INVALID


def test_relayed_text_shows_invisible_and_direction_changing_characters() -> None:
    assert escape_invisible("evil\u202etxt.exe") == "evil<U+202E>txt.exe"
    assert (
        escape_invisible("a\u200bb\u2066c\ufeffd\x07e") == "a<U+200B>b<U+2066>c<U+FEFF>d<U+0007>e"
    )
    kept = "Straße, 東京, one\ttwo\nthree"
    assert escape_invisible(kept) is kept
    tree = escape_tree({"k\u202e": ["x\u202ey", {"z": "\u2067"}], "n": 1})
    assert tree == {"k<U+202E>": ["x<U+202E>y", {"z": "<U+2067>"}], "n": 1}
    body = Refused(
        Code.TOOL_OUTPUT_INVALID,
        "bad \u202egnp.exe",
        details={"reason": "r\u202e"},
        show_details=True,
    ).body()
    assert body.message == "bad <U+202E>gnp.exe"
    assert body.details == {"reason": "r<U+202E>"}
