"""No JSON from outside the host can crash it (issue 29 item 5): every entry point that reads
a plugin's, a peer's, a remote's, an archive's, the page's or a stored document's JSON refuses
10^5 and 10^6 nested arrays with a code — or, where the reader's contract is to skip, skips —
instead of overflowing the stack. This file runs in CPython and inside Pyodide
(``tests/pyodide_runner.mjs`` includes ``tests/core``), where ``json.loads`` on such a text is a
fatal Wasm stack overflow that no ``except`` can catch."""

from __future__ import annotations

import ast
import io
import json
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.archive.manifest import MANIFEST_NAME
from core.archive.plan import plan_import
from core.custody.environment import ENVIRONMENTS_DOC, load_environments
from core.custody.pairing import PAIRINGS_DOC, load_pairings
from core.custody.peer_admin import PeerAdmin
from core.custody.remote import (
    parse_claim,
    parse_command_answer,
    parse_identity,
    refusal_from_answer,
)
from core.custody.wire import MAX_FRAME_BYTES, parse_call_envelope, parse_peer_message
from core.json_bound import MAX_DEPTH, parse_json
from core.memory.adapters import FixedClock, MemoryHostState, SeededRandomness
from core.missions.mailbox import decode_line
from core.protocol import parse_envelope, salvage_id
from core.refusals import Code, Refused
from core.tools.plugin_call import decode_output
from core.tools.plugin_manifest import PluginOperation, parse_manifest
from core.tools.plugin_shelf import PluginShelf
from core.tools.receipts import MAX_PLUGIN_RESULT_BYTES, decode_plugin_result
from core.tools.registry import OperationRegistry
from tests.support import run

ROOT = Path(__file__).resolve().parents[2]
DEPTHS = [pytest.param(10**5, id="1e5"), pytest.param(10**6, id="1e6")]


def deep(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def refuses(code: Code, call: Callable[[], Any]) -> Refused:
    with pytest.raises(Refused) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


# ---- the parser itself -------------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("code", [Code.MESSAGE_MALFORMED, Code.TOOL_OUTPUT_INVALID])
def test_deep_nesting_is_refused_with_the_callers_code(depth: int, code: Code) -> None:
    for text in (deep(depth), deep(depth).encode(), '{"a":' * depth + "1" + "}" * depth):
        refused = refuses(code, lambda t=text: parse_json(t, code=code, what="The text"))
        assert f"deeper than {MAX_DEPTH} levels" in refused.message


def test_the_depth_bound_is_exactly_max_depth() -> None:
    """Pins pydantic-core's limit: an upgrade that moves it fails here, not in production."""
    assert parse_json(deep(MAX_DEPTH)) is not None
    refuses(Code.MESSAGE_MALFORMED, lambda: parse_json(deep(MAX_DEPTH + 1)))
    mixed = '{"a":[' * (MAX_DEPTH // 2) + "1" + "]}" * (MAX_DEPTH // 2)
    assert parse_json(mixed) is not None
    refuses(Code.MESSAGE_MALFORMED, lambda: parse_json("[" + mixed + "]"))


def test_the_size_bound_refuses_before_parsing() -> None:
    refused = refuses(
        Code.MESSAGE_MALFORMED, lambda: parse_json("[" + " " * 100 + "]", max_bytes=64)
    )
    assert "larger than 64 bytes" in refused.message
    refuses(Code.MESSAGE_MALFORMED, lambda: parse_json('"' + "é" * 40 + '"', max_bytes=64))
    assert parse_json('"' + "é" * 30 + '"', max_bytes=64) == "é" * 30


@pytest.mark.parametrize(
    "text", ["", "[1,", "\ufeff[1]", '"\\ud800"', '"\ud800"', b"\xff", "{'a': 1}", "[1,]"]
)
def test_malformed_text_is_refused_never_raised(text: str | bytes) -> None:
    refused = refuses(Code.MESSAGE_MALFORMED, lambda: parse_json(text, what="The text"))
    assert refused.message == "The text is not valid JSON."


def test_plain_json_reads_as_json_loads_reads_it() -> None:
    text = '{"a":[1,2.5,-0,true,null,"é\\u0000"],"b":12345678901234567890123,"a2":{}}'
    assert parse_json(text) == json.loads(text)
    assert parse_json(text.encode()) == json.loads(text)


def test_a_megabyte_document_is_checked_in_linear_time() -> None:
    """The bound costs nothing extra: one pass in Rust (figures in docs/operations.md)."""
    rows = [
        {"path": f"src/f{i}.py", "size": i, "sha": "ab" * 32, "t": [[1, [2]]]} for i in range(8000)
    ]
    text = json.dumps({"rows": rows})
    assert len(text) > 1_000_000
    start = time.perf_counter()
    assert len(parse_json(text)["rows"]) == 8000
    took = time.perf_counter() - start
    start = time.perf_counter()
    refuses(Code.MESSAGE_MALFORMED, lambda: parse_json(deep(500_000)))
    refused_in = time.perf_counter() - start
    assert took < 1.0 and refused_in < 1.0, (took, refused_in)


# ---- every entry point -------------------------------------------------------------------

_READ_OP = PluginOperation.model_validate(
    {
        "name": "deep.nest",
        "summary": "Outputs deep nesting.",
        "module": "deep.wasm",
        "entry": "nest",
        "args": {"type": "object", "properties": {}, "additionalProperties": False},
        "effect": "read",
        "receipt": "internal-read",
        "confirm": False,
        "limits": {"timeMs": 1000, "memoryBytes": 4 << 20, "outputBytes": 1 << 20, "readBytes": 1},
    }
)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_plugins_deep_output_is_refused_as_tool_output_invalid(depth: int) -> None:
    output = ('{"ok":true,"result":' + deep(depth) + "}").encode()
    refuses(Code.TOOL_OUTPUT_INVALID, lambda: decode_output(_READ_OP, {}, output))
    refuses(Code.TOOL_OUTPUT_INVALID, lambda: decode_output(_READ_OP, {}, deep(depth).encode()))


def test_a_plugin_output_at_the_bound_is_decoded_whole() -> None:
    """Nesting up to the bound is data, carried through every later step (the receipt-key
    scan, the re-serialisation) without a crash in either runtime."""
    at_bound = '{"ok":true,"result":{"x":' + deep(MAX_DEPTH - 2) + "}}"
    output, writes = decode_output(_READ_OP, {}, at_bound.encode())
    assert writes == [] and json.dumps(output.result).count("[") == MAX_DEPTH - 2


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_plugins_deep_answer_is_refused_as_message_malformed(depth: int) -> None:
    text = deep(depth)
    big = len(text) > MAX_PLUGIN_RESULT_BYTES  # its own 1 MiB bound answers first
    refuses(
        Code.MESSAGE_TOO_LARGE if big else Code.MESSAGE_MALFORMED,
        lambda: decode_plugin_result(text),
    )
    refuses(Code.MESSAGE_MALFORMED, lambda: decode_plugin_result(deep(500_000)))


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_page_message_is_refused_as_message_malformed(depth: int) -> None:
    text = '{"v":1,"id":"a1","op":"host.info","args":' + deep(depth) + "}"
    if len(text) > 1 << 20:  # the protocol's own size bound answers first
        refuses(Code.MESSAGE_TOO_LARGE, lambda: parse_envelope(text))
    else:
        refuses(Code.MESSAGE_MALFORMED, lambda: parse_envelope(text))
    refuses(Code.MESSAGE_MALFORMED, lambda: parse_envelope(deep(min(depth, 400_000))))
    assert salvage_id(deep(min(depth, 400_000))) is None


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_peer_frame_or_call_envelope_is_refused(depth: int) -> None:
    frame = '{"type":"result","id":"r1","result":{"x":' + deep(depth) + "}}"
    big = len(frame) > MAX_FRAME_BYTES  # the frame's own size bound answers first
    code = Code.MESSAGE_TOO_LARGE if big else Code.MESSAGE_MALFORMED
    refuses(code, lambda: parse_peer_message(frame))
    refuses(code, lambda: parse_call_envelope(deep(depth)))


class _LyingServers:
    """An environment server whose admin answers are ``answer`` (a lying or broken peer)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def start(self, name: str) -> None:
        return None

    def running(self, name: str) -> bool:
        return True

    async def admin(self, name: str, request: str) -> str:
        return self.answer


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_peers_deep_admin_answer_is_refused_as_peer_answer_invalid(depth: int) -> None:
    for answer in (deep(depth), '{"ok":true,"envKey":' + deep(depth) + "}", "[]"):
        admin = PeerAdmin(
            MemoryHostState(),
            _LyingServers(answer),  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            FixedClock(),
            SeededRandomness(),
            frozenset(),
        )
        refuses(Code.PEER_ANSWER_INVALID, lambda a=admin: run(a.create("box")))


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_remotes_deep_answers_are_refused(depth: int) -> None:
    text = '{"refusal":{"code":' + deep(depth) + "}}"
    assert refusal_from_answer(403, text).code == Code.ENVIRONMENT_UNREACHABLE  # type: ignore[union-attr]
    refuses(Code.PEER_ANSWER_INVALID, lambda: parse_claim(deep(depth)))
    refuses(Code.PEER_ANSWER_INVALID, lambda: parse_identity(deep(depth), "k"))
    refuses(Code.PEER_ANSWER_INVALID, lambda: parse_command_answer(deep(depth)))


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_archive_manifest_is_refused_as_archive_invalid(depth: int) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("notes.md", b"hi")
        archive.writestr(MANIFEST_NAME, deep(depth))
    refuses(Code.ARCHIVE_INVALID, lambda: plan_import(buffer.getvalue(), max_ratio=10**9))


@pytest.mark.parametrize("depth", [pytest.param(10**5, id="1e5")])  # the 256 KiB bound first
def test_a_deep_plugin_manifest_is_refused(depth: int) -> None:
    refuses(Code.REGISTRATION_INVALID, lambda: parse_manifest(deep(depth).encode()))
    refuses(Code.MESSAGE_TOO_LARGE, lambda: parse_manifest(deep(10**6).encode()))


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_stored_documents_refuse_or_are_skipped(depth: int) -> None:
    assert decode_line(deep(depth).encode()) is None  # a mailbox line: skipped, never fatal
    state = MemoryHostState()
    state.docs[ENVIRONMENTS_DOC] = deep(depth).encode()
    state.docs[PAIRINGS_DOC] = deep(depth).encode()
    state.docs["plugins.json"] = deep(depth).encode()
    with pytest.raises(Refused) as caught:
        run(load_environments(state))
    assert caught.value.code == Code.STORAGE_FAILED
    with pytest.raises(Refused) as caught:
        run(load_pairings(state))
    assert caught.value.code == Code.STORAGE_FAILED
    with pytest.raises(Refused) as caught:
        run(PluginShelf(state, OperationRegistry()).load())
    assert caught.value.code == Code.MESSAGE_MALFORMED


@pytest.mark.parametrize("depth", DEPTHS)
def test_model_validate_json_is_the_same_bounded_parser(depth: int) -> None:
    """Every contract's ``model_validate_json`` runs pydantic-core's parser with the same
    bound, so the contracts read outside the host (policy.json, environments.json, mailbox
    lines, peer frames, remote answers ...) refuse deep text as a ValidationError."""
    with pytest.raises(ValidationError) as caught:
        PluginOperation.model_validate_json(deep(depth))
    assert "recursion limit" in str(caught.value)


def test_no_reader_of_outside_json_calls_the_stdlib_parser() -> None:
    """One parser: ``json.loads``/``json.load`` and a bare ``from_json`` appear nowhere in the
    host's code but :mod:`core.json_bound` (the build tools under worker/ read our own files)."""
    found = []
    for folder in ("core", "browser_host", "server_host"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "json_bound.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                    "json.loads",
                    "json.load",
                    "from_json",
                    "pydantic_core.from_json",
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10**5])
def test_a_page_message_too_deep_is_refused_for_its_depth_not_as_broken_json(depth: int) -> None:
    """Stop 45's tryout: a well-formed message nesting deeper than the bound read "The message
    is not valid JSON." (its envelope is read by ``model_validate_json``, whose refusal of the
    depth is a ``json_invalid`` error). It is refused ``message-malformed`` saying its depth;
    broken text still reads as not valid JSON."""
    deep = '{"v":1,"id":"d1","op":"host.info","args":' + "[" * depth + "]" * depth + "}"
    with pytest.raises(Refused) as refused:
        parse_envelope(deep)
    assert refused.value.code == Code.MESSAGE_MALFORMED
    assert refused.value.message == (
        f"The message nests arrays or objects deeper than {MAX_DEPTH} levels."
    )
    with pytest.raises(Refused) as broken:
        parse_envelope('{"v":1,"id":"d1","op":')
    assert broken.value.message == "The message is not valid JSON."
