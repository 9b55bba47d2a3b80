"""The two example plugins (wasm_tools/plugins/; docs/plugins.md), on the CPython host of the
PDK ABI: each does what its source's comment promises, checked against an independent Python
statement of the same rules on generated text — and a reader never asks to write, a writer
only ever RETURNS its write as data.

textstats (reader, effect read / receipt internal-read): count, outline.
tidy (writer, effect write / receipt local-write): text."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.tool.envelope import decode_output, make_input, writes_of
from tests.tool.pdk_host import run
from wasm_tools.build import MANIFEST_NAME, PLUGINS

# --- the rules, said again in Python ----------------------------------------------------------


def count_reference(data: bytes) -> dict:
    """textstats.count: LF lines (+1 for an unterminated last line), ASCII-whitespace words,
    UTF-8 validity and code points."""
    try:
        chars: int | None = len(data.decode("utf-8"))
    except UnicodeDecodeError:
        chars = None
    return {
        "bytes": len(data),
        "lines": data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0),
        "words": len(data.split()),
        "utf8": chars is not None,
        "chars": chars,
    }


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?")


def outline_reference(text: str) -> list[dict]:
    """textstats.outline: ATX headings (closing #-run dropped) outside fenced code blocks."""
    headings, fence = [], None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        line = line.removesuffix("\r")
        opened = _FENCE.match(line)
        if fence is not None:
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
                and line[opened.end() :].strip(" \t") == ""
            ):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        found = _HEADING.fullmatch(line)
        if not found:
            continue
        body = (found.group(2) or "").rstrip(" \t")
        stripped = body.rstrip("#")
        if stripped != body and (stripped == "" or stripped[-1] in " \t"):
            body = stripped.rstrip(" \t")
        headings.append({"level": len(found.group(1)), "line": number, "text": body})
    return headings


def tidy_reference(data: bytes) -> bytes:
    """tidy.text: LF line ends, no trailing spaces/tabs, no leading/trailing/repeated blank
    lines, one final LF."""
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    out: list[bytes] = []
    blank = False
    for line in (line.rstrip(b" \t") for line in lines):
        if not line:
            blank = bool(out)
            continue
        if blank:
            out.append(b"")
        out.append(line)
        blank = False
    return b"\n".join(out) + b"\n" if out else b""


# --- running them ---------------------------------------------------------------------------


def call(modules: dict[str, bytes], plugin: str, entry: str, args: dict, data: bytes) -> dict:
    answer = run(modules[plugin], entry, make_input(f"{plugin}.{entry}", args, {"path": data}))
    assert answer.ok, answer
    return decode_output(answer.output)


TEXTISH = st.lists(
    st.sampled_from(["word", " ", "\t", "\n", "\r\n", "\r", "é", "☃", "#", "##", "```", "~~~", "x"])
    # no lone surrogates: such a str has no UTF-8 encoding (invalid bytes come from st.binary)
    | st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=5),
    max_size=60,
).map("".join)
"""Text tidy takes as text: no NUL (a NUL makes it a binary file, which tidy declines —
``test_tidy_declines_a_binary_file``)."""
BYTESISH = st.one_of(TEXTISH.map(str.encode), st.binary(max_size=300))


@given(BYTESISH)
@settings(deadline=None)  # each example instantiates a Wasm module; time is bench/'s
@example(b"")
@example(b"\xed\xa0\x80 surrogate")
@example(b"\xc0\xaf overlong")
@example(b"no final newline")
def test_count_is_the_documented_count(plugin_modules: dict[str, bytes], data: bytes) -> None:
    answer = call(plugin_modules, "textstats", "count", {"path": "notes/a.md"}, data)
    assert answer == {"ok": True, "result": {"path": "notes/a.md", **count_reference(data)}}


@given(TEXTISH)
@settings(deadline=None)  # each example instantiates a Wasm module; time is bench/'s
@example("# A\n\n## B ##\n### ###\n#nope\n    # code\n```\n# in code\n```\n#### D #x\n")
def test_outline_lists_the_documented_headings(plugin_modules: dict[str, bytes], text: str) -> None:
    answer = call(plugin_modules, "textstats", "outline", {"path": "README.md"}, text.encode())
    headings = outline_reference(text)
    result = answer["result"]
    assert result["headings"] == headings
    assert result["truncated"] is False
    top = min((h["level"] for h in headings), default=1)
    assert result["toc"] == "".join(
        "  " * (h["level"] - top) + "- " + h["text"] + "\n" for h in headings
    )


def test_outline_of_a_worked_example(plugin_modules: dict[str, bytes]) -> None:
    text = "# Guide\nintro\n## Install ##\n```sh\n# comment\n```\n## Use\n### Flags #\n"
    result = call(plugin_modules, "textstats", "outline", {"path": "g.md"}, text.encode())["result"]
    assert result["headings"] == [
        {"level": 1, "line": 1, "text": "Guide"},
        {"level": 2, "line": 3, "text": "Install"},
        {"level": 2, "line": 7, "text": "Use"},
        {"level": 3, "line": 8, "text": "Flags"},
    ]
    assert result["toc"] == "- Guide\n  - Install\n  - Use\n    - Flags\n"


def test_outline_stops_at_its_heading_limit(plugin_modules: dict[str, bytes]) -> None:
    text = "".join(f"## h{i}\n" for i in range(501))
    result = call(plugin_modules, "textstats", "outline", {"path": "big.md"}, text.encode())[
        "result"
    ]
    assert len(result["headings"]) == 500
    assert result["truncated"] is True


def test_outline_declines_a_file_that_is_not_utf8(plugin_modules: dict[str, bytes]) -> None:
    answer = call(plugin_modules, "textstats", "outline", {"path": "bin"}, b"# \xff\n")
    assert answer == {"ok": False, "message": "the file is not UTF-8 text"}


@given(BYTESISH)
@settings(deadline=None)  # each example instantiates a Wasm module; time is bench/'s
@example(b"a\r\r\nb")
@example(b"\n\n  \n")
def test_tidy_writes_the_documented_text_to_the_target(
    plugin_modules: dict[str, bytes], data: bytes
) -> None:
    args = {"path": "notes/in.txt", "target": "notes/out.txt"}
    answer = call(plugin_modules, "tidy", "text", args, data)
    try:
        data.decode("utf-8")
        text = b"\0" not in data
    except UnicodeDecodeError:
        text = False
    if not text:
        assert answer["ok"] is False
        assert "text" in answer["message"]
        return
    expected = tidy_reference(data)
    assert writes_of(answer) == [("notes/out.txt", expected)]
    assert answer["result"] == {
        **args,
        "bytesBefore": len(data),
        "bytesAfter": len(expected),
        "changed": expected != data,
    }


@given(TEXTISH)
@settings(deadline=None)  # each example instantiates a Wasm module; time is bench/'s
def test_tidy_is_idempotent(plugin_modules: dict[str, bytes], text: str) -> None:
    args = {"path": "a.txt", "target": "b.txt"}
    ((_, once),) = writes_of(call(plugin_modules, "tidy", "text", args, text.encode()))
    ((_, twice),) = writes_of(call(plugin_modules, "tidy", "text", args, once))
    assert twice == once


def test_tidy_asks_for_no_write_when_the_file_is_already_tidy(
    plugin_modules: dict[str, bytes],
) -> None:
    answer = call(plugin_modules, "tidy", "text", {"path": "a", "target": "a"}, b"tidy\n")
    assert answer["writes"] == []
    assert answer["result"]["changed"] is False


def test_tidy_declines_a_binary_file(plugin_modules: dict[str, bytes]) -> None:
    answer = call(plugin_modules, "tidy", "text", {"path": "a", "target": "a"}, b"a\0b\n")
    assert answer == {"ok": False, "message": "the file holds NUL bytes: not a text file"}


@pytest.mark.parametrize("path", ['say "hi"\\now.md', "ünïcødé/☃.md", "tab\there.md"])
def test_paths_come_back_exactly_as_given(plugin_modules: dict[str, bytes], path: str) -> None:
    counted = call(plugin_modules, "textstats", "count", {"path": path}, b"x")
    assert counted["result"]["path"] == path
    tidied = call(plugin_modules, "tidy", "text", {"path": path, "target": path}, b"x  ")
    assert writes_of(tidied) == [(path, b"x\n")]


@pytest.mark.parametrize(
    ("plugin", "entry", "data", "message"),
    [
        ("textstats", "count", b"not json", "the input is not a JSON object"),
        ("textstats", "count", b'{"v":2,"args":{},"files":[]}', "unknown envelope version"),
        ("textstats", "count", b'{"v":1,"args":{"path":"a"},"files":[]}', "no file for 'path'"),
        ("tidy", "text", b'{"v":1,"args":{"path":"a"},"files":[]}', "no path or no target"),
    ],
)
def test_a_malformed_envelope_fails_the_call_with_the_plugins_reason(
    plugin_modules: dict[str, bytes], plugin: str, entry: str, data: bytes, message: str
) -> None:
    answer = run(plugin_modules[plugin], entry, data)
    assert (answer.ok, answer.code, answer.reason) == (False, "tool-output-invalid", "plugin-error")
    assert message in answer.message


# --- what the manifests say about them ------------------------------------------------------


def manifest(plugin: str) -> dict:
    return json.loads((PLUGINS / plugin / MANIFEST_NAME).read_text(encoding="utf-8"))


def test_the_reader_declares_reads_only_and_the_writer_one_write_per_target() -> None:
    reader, writer = manifest("textstats"), manifest("tidy")
    for op in reader["operations"]:
        assert (op["effect"], op["receipt"], op["writes"]) == ("read", "internal-read", [])
        assert [r["arg"] for r in op["reads"]] == ["path"]
    (op,) = writer["operations"]
    assert (op["effect"], op["receipt"], op["confirm"]) == ("write", "local-write", True)
    assert [r["arg"] for r in op["reads"]] == ["path"]
    assert [w["arg"] for w in op["writes"]] == ["target"]


def test_every_operation_names_an_export_of_its_module(plugin_modules: dict[str, bytes]) -> None:
    for plugin in ("textstats", "tidy"):
        for op in manifest(plugin)["operations"]:
            answer = run(plugin_modules[plugin], op["entry"], b"{}")
            assert answer.reason == "plugin-error", (plugin, op["entry"], answer)
