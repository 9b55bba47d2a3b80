"""The plugin manifest and package (issue 16): closed model, pins checked before anything runs,
flat packages, and operations that keep their origin ``plugin:<id>`` (seed 003)."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import zipfile

import pytest

from core.policy import Policy
from core.refusals import Code, Refused
from core.tools.admission import CallRequest, admit
from core.tools.plugin_manifest import (
    MANIFEST_NAME,
    operation_entries,
    parse_manifest,
    read_package,
)
from core.tools.registry import OperationRegistry
from tests.contracts.operations import builtin

MODULE = b"\x00asm\x01\x00\x00\x00 stand-in bytes"


def manifest(module: bytes = MODULE) -> dict:
    return {
        "format": "voicebox-plugin/1",
        "id": "tidy",
        "release": "1.0.0",
        "title": "Tidy text",
        "publisher": "Tests",
        "summary": "Tidies a text file.",
        "modules": [{"file": "tidy.wasm", "sha256": hashlib.sha256(module).hexdigest()}],
        "operations": [
            {
                "name": "tidy.text",
                "summary": "Write a tidied copy.",
                "module": "tidy.wasm",
                "entry": "text",
                "args": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "maxLength": 64},
                        "target": {"type": "string", "minLength": 1, "maxLength": 64},
                        "width": {"type": "integer", "minimum": 1, "maximum": 200},
                    },
                    "required": ["path", "target"],
                    "additionalProperties": False,
                },
                "effect": "write",
                "receipt": "local-write",
                "confirm": True,
                "reads": [{"arg": "path", "reason": "Reads the file you name."}],
                "writes": [{"arg": "target", "reason": "Writes the tidied copy."}],
                "limits": {
                    "timeMs": 2000,
                    "memoryBytes": 16 << 20,
                    "outputBytes": 1 << 20,
                    "readBytes": 1 << 20,
                },
            }
        ],
    }


SHA = "5" * 64
"""A manifest sha256 for the registry entries these tests build."""


def encoded(value: dict) -> bytes:
    return json.dumps(value).encode()


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return buffer.getvalue()


def refusal(call, *args) -> Refused:
    with pytest.raises(Refused) as caught:
        call(*args)
    return caught.value


def test_a_well_formed_package_is_read_with_its_pinned_modules() -> None:
    package = read_package(zipped({MANIFEST_NAME: encoded(manifest()), "tidy.wasm": MODULE}))
    assert package.manifest.origin == "plugin:tidy"
    assert package.modules == {"tidy.wasm": MODULE}
    folder = read_package({MANIFEST_NAME: encoded(manifest()), "tidy.wasm": MODULE})
    assert folder.manifest == package.manifest


def test_a_module_whose_bytes_differ_from_its_pin_is_refused_before_it_runs() -> None:
    tampered = MODULE + b"\x00"
    for source in (
        zipped({MANIFEST_NAME: encoded(manifest()), "tidy.wasm": tampered}),
        {MANIFEST_NAME: encoded(manifest()), "tidy.wasm": tampered},
    ):
        refused = refusal(read_package, source)
        assert refused.code == Code.PLUGIN_PIN_MISMATCH
        assert refused.details == {"file": "tidy.wasm"}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ((), {"allowedHosts": ["example.com"]}),
        (("operations", 0), {"grant": "files"}),
        (("operations", 0, "limits"), {"cpu": 1}),
        (("operations", 0, "args", "properties", "path"), {"format": "uri"}),
        (("modules", 0), {"url": "https://example.com/x.wasm"}),
    ],
)
def test_a_manifest_with_an_unknown_field_anywhere_is_refused(path: tuple, value: dict) -> None:
    raw = manifest()
    target = raw
    for key in path:
        target = target[key]
    target.update(value)
    refused = refusal(parse_manifest, encoded(raw))
    assert refused.code == Code.REGISTRATION_INVALID
    for word in ("example.com", "files"):
        assert word not in refused.message


def _edit(change) -> dict:
    raw = copy.deepcopy(manifest())
    change(raw, raw["operations"][0])
    return raw


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda m, op: op.update(effect="network"), id="network-effect"),
        pytest.param(lambda m, op: op.update(receipt="external-write"), id="foreign-rung"),
        pytest.param(lambda m, op: op.update(receipt="internal-read"), id="write-as-read-rung"),
        pytest.param(lambda m, op: op.update(effect="read", receipt="internal-read"), id="read-w"),
        pytest.param(lambda m, op: op.update(writes=[]), id="write-without-writes"),
        pytest.param(lambda m, op: op["reads"][0].update(arg="width"), id="read-non-string"),
        pytest.param(lambda m, op: op["reads"][0].update(arg="nope"), id="read-unknown-arg"),
        pytest.param(lambda m, op: op.update(module="other.wasm"), id="unlisted-module"),
        pytest.param(lambda m, op: op.update(entry="_start"), id="start-entry"),
        pytest.param(lambda m, op: op["limits"].update(timeMs=60_000), id="time-over-ceiling"),
        pytest.param(lambda m, op: op["limits"].update(memoryBytes=1 << 30), id="memory-over"),
        pytest.param(lambda m, op: m.update(id="../x"), id="bad-id"),
        pytest.param(lambda m, op: m.update(format="voicebox-plugin/2"), id="format"),
        pytest.param(lambda m, op: m["operations"].append(op), id="duplicate-operation"),
        pytest.param(lambda m, op: op["args"].update(additionalProperties=True), id="open-args"),
        pytest.param(lambda m, op: op["args"].update(required=["ghost"]), id="required-ghost"),
        pytest.param(
            lambda m, op: op["args"]["properties"].update(project={"type": "string"}),
            id="project-is-the-hosts",
        ),
        pytest.param(lambda m, op: op["writes"].append(op["writes"][0]), id="two-writes"),
    ],
)
def test_a_manifest_that_contradicts_itself_is_refused(change) -> None:
    assert refusal(parse_manifest, encoded(_edit(change))).code == Code.REGISTRATION_INVALID


@pytest.mark.parametrize(
    ("files", "code"),
    [
        ({"tidy.wasm": MODULE}, Code.ARCHIVE_INVALID),
        (
            {MANIFEST_NAME: None, "tidy.wasm": MODULE, "README.txt": b"x"},
            Code.ARCHIVE_ENTRY_NAME_INVALID,
        ),
        ({MANIFEST_NAME: None, "tidy.wasm": MODULE, "more.wasm": b"x"}, Code.ARCHIVE_INVALID),
        ({MANIFEST_NAME: None}, Code.ARCHIVE_INVALID),
        ({MANIFEST_NAME: None, "../tidy.wasm": MODULE}, Code.ARCHIVE_ENTRY_TRAVERSAL),
        ({MANIFEST_NAME: None, "/tidy.wasm": MODULE}, Code.ARCHIVE_ENTRY_ABSOLUTE),
        ({MANIFEST_NAME: None, "sub/tidy.wasm": MODULE}, Code.ARCHIVE_ENTRY_NAME_INVALID),
    ],
)
def test_a_package_holds_exactly_its_manifest_and_listed_modules(files: dict, code: Code) -> None:
    files = {k: encoded(manifest()) if v is None else v for k, v in files.items()}
    assert refusal(read_package, zipped(files)).code == code


def test_bytes_that_are_not_a_zip_are_refused_archive_invalid() -> None:
    assert refusal(read_package, b"PK\x03\x04 not really").code == Code.ARCHIVE_INVALID


def test_plugin_operations_keep_their_origin_and_release() -> None:
    (entry,) = operation_entries(parse_manifest(encoded(manifest())), SHA)
    assert (entry.origin, entry.release, entry.effect) == ("plugin:tidy", "1.0.0", "write")
    assert entry.receipt_rule == "local-write" and entry.needs_confirmation
    assert entry.capabilities == frozenset({"files"})


def test_an_operation_named_like_a_builtin_is_refused_and_the_builtin_stays() -> None:
    registry = OperationRegistry()
    registry.register(builtin("file.write", effect="write", receipt_rule="local-write"))
    raw = _edit(lambda m, op: op.update(name="file.write"))
    (entry,) = operation_entries(parse_manifest(encoded(raw)), SHA)
    assert refusal(registry.register, entry).code == Code.REGISTRATION_CONFLICT
    assert registry.get("file.write").origin == "builtin"


def _admit(args: dict, *, policy: Policy | None = None, confirmed: bool = True):
    registry = OperationRegistry()
    (entry,) = operation_entries(parse_manifest(encoded(manifest())), SHA)
    registry.register(entry)
    policy = Policy(admitted_plugins={"tidy": SHA}) if policy is None else policy
    request = CallRequest(
        "tidy.text", entry.descriptor_id, args, confirmed_by="human-ui" if confirmed else None
    )
    return admit(registry, policy, request)


@pytest.mark.parametrize(
    "args",
    [
        {"project": "p_0123456789abcdef", "path": "a.md"},
        {"project": "p_0123456789abcdef", "path": "a.md", "target": ""},
        {"project": "p_0123456789abcdef", "path": "a.md", "target": "b.md", "width": 0},
        {"project": "p_0123456789abcdef", "path": "a.md", "target": "b.md", "width": "3"},
        {"project": "p_0123456789abcdef", "path": "a.md", "target": "b.md", "extra": 1},
        {"project": "p_0123456789abcdef", "path": 1, "target": "b.md"},
        {"path": "a.md", "target": "b.md"},
        {"path": "a.md", "target": "b.md", "project": "../p"},
    ],
)
def test_arguments_outside_the_manifest_schema_are_refused_args_invalid(args: dict) -> None:
    assert refusal(_admit, args).code == Code.ARGS_INVALID


def test_arguments_inside_the_schema_are_admitted_under_their_own_names() -> None:
    admitted = _admit(
        {"project": "p_0123456789abcdef", "path": "a.md", "target": "b.md", "width": 80}
    )
    assert admitted.args.model_dump(by_alias=True) == {
        "project": "p_0123456789abcdef",
        "path": "a.md",
        "target": "b.md",
        "width": 80,
    }


def test_the_release_must_be_the_admitted_one_and_confirmation_a_gesture() -> None:
    args = {"project": "p_0123456789abcdef", "path": "a.md", "target": "b.md"}
    for policy in (Policy(), Policy(admitted_plugins={"tidy": "0.9.0"})):
        assert refusal(lambda p=policy: _admit(args, policy=p)).code == Code.PLUGIN_NOT_ADMITTED
    refused = refusal(lambda: _admit(args, confirmed=False))
    assert refused.code == Code.CONFIRMATION_REQUIRED
