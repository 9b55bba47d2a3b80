"""The plugin package: a closed manifest (``voicebox-plugin.json``) and the WebAssembly modules
it pins by sha256 (issue 16; seed 003 "plugin operations keep their origin"; docs/plugins.md).

- :class:`PluginManifest` is the manifest, closed at every level (``extra="forbid"``); its JSON
  Schema is ``docs/plugin-manifest.schema.json`` (``python -m core.tools.plugin_manifest``).
  An operation's effect is ``read`` or ``write``: there is no network capability in this
  version, and the broker keeps refusing egress (``network-egress-refused``).
- :func:`parse_manifest` reads manifest bytes; anything outside the model, or a manifest that
  contradicts itself, is refused ``registration-invalid`` with the fields named, never values.
- :func:`read_package` reads a package (a ``.zip``, or a folder's files): exactly the manifest
  and the modules it lists, flat names (a NUL anywhere in a stored name is refused, never cut
  there), bounded sizes, and each module's bytes equal to its pin
  (``plugin-pin-mismatch``) — checked before any module can run.
- :func:`operation_entries` turns a manifest into registry entries with origin ``plugin:<id>``
  and a strict argument model built from the operation's schema (:func:`args_model`).

Nothing here runs plugin code: a module only ever runs in the sandboxed Wasm frame.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, create_model, model_validator

from core.model import Contract
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.tools.receipts import Rung
from core.tools.registry import NAME_PATTERN, OperationEntry
from core.vocabulary import ProjectId, Sha256Hex

__all__ = [
    "FORMAT",
    "MANIFEST_NAME",
    "MAX_MODULE_BYTES",
    "MAX_PACKAGE_FILES",
    "ArgsSchema",
    "PluginManifest",
    "PluginOperation",
    "PluginPackage",
    "args_model",
    "folder_files",
    "operation_entries",
    "parse_manifest",
    "read_package",
]

FORMAT = "voicebox-plugin/1"
MANIFEST_NAME = "voicebox-plugin.json"
MAX_MANIFEST_BYTES = 256 << 10
MAX_MODULE_BYTES = 4 << 20
"""The sandbox's ``maxModuleBytes`` (wasm_tools/sandbox.js)."""
MAX_PACKAGE_BYTES = 16 << 20
MAX_PACKAGE_FILES = 9
"""A manifest and at most eight modules."""
MAX_TIME_MS = 10_000
MAX_MEMORY_BYTES = 64 << 20
MAX_OUTPUT_BYTES = 16 << 20
MAX_READ_BYTES = 6 << 20

PLUGIN_ID = r"^[a-z0-9][a-z0-9._-]{0,63}$"
MODULE_FILE = r"^[a-z0-9][a-z0-9_-]{0,62}\.wasm$"
PROPERTY = r"^[a-z][a-zA-Z0-9_]{0,63}$"
ENTRY = r"^[!-~]{1,128}$"

Text = Annotated[str, Field(min_length=1)]


class ArgProperty(Contract):
    """One argument: a scalar JSON Schema (no nesting, no ``$ref``)."""

    type: Literal["string", "integer", "number", "boolean"]
    description: str | None = Field(default=None, max_length=500)
    enum: tuple[str | int, ...] | None = Field(default=None, min_length=1, max_length=64)
    min_length: int | None = Field(default=None, alias="minLength", ge=0)
    max_length: int | None = Field(default=None, alias="maxLength", ge=0, le=1 << 20)
    pattern: str | None = Field(default=None, max_length=500)
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: str | int | float | bool | None = None


class ArgsSchema(Contract):
    """An operation's arguments: one closed JSON object of scalar properties."""

    type: Literal["object"]
    properties: dict[Annotated[str, Field(pattern=PROPERTY)], ArgProperty] = Field(max_length=32)
    required: tuple[str, ...] = ()
    additional_properties: Literal[False] = Field(alias="additionalProperties")

    @model_validator(mode="after")
    def _required_are_properties(self) -> ArgsSchema:
        if "project" in self.properties:
            raise ValueError("project is the host's own argument")
        if not set(self.required) <= set(self.properties):
            raise ValueError("required names an argument that is not a property")
        return self


class Capability(Contract):
    """A path argument the host reads (or the plugin may ask to write), and why — the sentence
    shown to the person before install."""

    arg: str = Field(pattern=PROPERTY)
    reason: Text = Field(max_length=200)


class Limits(Contract):
    """Bounds of one call (the sandbox's ceilings, ``LIMITS`` in wasm_tools/sandbox.js)."""

    time_ms: int = Field(alias="timeMs", ge=1, le=MAX_TIME_MS)
    memory_bytes: int = Field(alias="memoryBytes", ge=1 << 16, le=MAX_MEMORY_BYTES)
    output_bytes: int = Field(alias="outputBytes", ge=1, le=MAX_OUTPUT_BYTES)
    read_bytes: int = Field(alias="readBytes", ge=0, le=MAX_READ_BYTES)


class PluginModule(Contract):
    """A module file of the package and its sha256 (lower-case hex)."""

    file: str = Field(pattern=MODULE_FILE)
    sha256: Sha256Hex


class PluginOperation(Contract):
    """One operation: ``name`` in the registry, export ``entry`` of ``module``, its argument
    schema, effect (``read``/``write``) and receipt rung, confirmation, capabilities, limits."""

    name: str = Field(pattern=NAME_PATTERN)
    summary: Text = Field(max_length=200)
    module: str = Field(pattern=MODULE_FILE)
    entry: str = Field(pattern=ENTRY)
    args: ArgsSchema
    effect: Literal["read", "write"]
    receipt: Literal["internal-read", "local-write"]
    confirm: bool
    reads: tuple[Capability, ...] = Field(default=(), max_length=8)
    writes: tuple[Capability, ...] = Field(default=(), max_length=1)
    limits: Limits

    @model_validator(mode="after")
    def _consistent(self) -> PluginOperation:
        if self.entry in {"_start", "_initialize"}:
            raise ValueError("entry may not be _start or _initialize")
        if (self.effect == "read") != (self.receipt == "internal-read"):
            raise ValueError("a read carries internal-read and a write local-write")
        if (self.effect == "write") != bool(self.writes):
            raise ValueError("writes is non-empty exactly for a write operation")
        for cap in (*self.reads, *self.writes):
            prop = self.args.properties.get(cap.arg)
            if prop is None or prop.type != "string" or cap.arg not in self.args.required:
                raise ValueError("reads and writes name required string arguments")
        return self


class PluginManifest(Contract):
    """``voicebox-plugin.json`` (docs/plugins.md "The manifest"; closed at every level)."""

    format: Literal["voicebox-plugin/1"]
    id: str = Field(pattern=PLUGIN_ID)
    release: str = Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$")
    title: Text = Field(max_length=100)
    publisher: Text = Field(max_length=200)
    summary: Text = Field(max_length=500)
    modules: tuple[PluginModule, ...] = Field(min_length=1, max_length=8)
    config: dict[Annotated[str, Field(max_length=256)], Annotated[str, Field(max_length=4096)]] = (
        Field(default_factory=dict, max_length=64)
    )
    operations: tuple[PluginOperation, ...] = Field(min_length=1, max_length=16)

    @model_validator(mode="after")
    def _consistent(self) -> PluginManifest:
        files = [m.file for m in self.modules]
        if len(set(files)) != len(files):
            raise ValueError("a module file is listed twice")
        names = [op.name for op in self.operations]
        if len(set(names)) != len(names):
            raise ValueError("an operation name is listed twice")
        if any(op.module not in files for op in self.operations):
            raise ValueError("an operation names a module the manifest does not list")
        return self

    @property
    def origin(self) -> str:
        """``plugin:<id>``: the origin every operation of this plugin is registered under."""
        return f"plugin:{self.id}"

    def operation(self, name: str) -> PluginOperation | None:
        """The operation called ``name``, or ``None``."""
        return next((op for op in self.operations if op.name == name), None)


_NAMES = known_names(PluginManifest)


def parse_manifest(data: bytes) -> PluginManifest:
    """The manifest in ``data`` (UTF-8 JSON, ≤ 256 KiB).

    Refuses ``message-too-large`` past the size, ``registration-invalid`` for anything that is
    not a :class:`PluginManifest` (the fields named, never their values; an unknown field is
    reported as ``(field)``)."""
    if len(data) > MAX_MANIFEST_BYTES:
        raise Refused(Code.MESSAGE_TOO_LARGE, "The plugin manifest is larger than 256 KiB.")
    try:
        return PluginManifest.model_validate_json(data)
    except ValidationError as exc:
        raise invalid_input(exc, _NAMES, code=Code.REGISTRATION_INVALID, under="manifest") from None


@dataclass(frozen=True, slots=True)
class PluginPackage:
    """A read package: its manifest, each module's bytes by file name (each equal to its pin),
    and the package's own sha256 over the manifest bytes (what the install dialog names)."""

    manifest: PluginManifest
    manifest_bytes: bytes
    modules: Mapping[str, bytes]

    @property
    def manifest_sha256(self) -> str:
        """sha256 of the manifest bytes, hex."""
        return hashlib.sha256(self.manifest_bytes).hexdigest()


def _zip_files(data: bytes) -> dict[str, bytes]:
    if len(data) > MAX_PACKAGE_BYTES:
        raise Refused(Code.ARCHIVE_TOO_LARGE, "A plugin package is at most 16 MiB.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise Refused(Code.ARCHIVE_INVALID, "The file is not a readable zip.") from None
    if len(infos) > MAX_PACKAGE_FILES:
        raise Refused(Code.ARCHIVE_INVALID, "A plugin package holds a manifest and ≤ 8 modules.")
    files: dict[str, bytes] = {}
    for info in infos:
        # zipfile cuts a name at its first NUL ("a.wasm\0x" reads as "a.wasm"): the name as
        # stored must be the name read (issue 29 item 4)
        _check_name(info.orig_filename)
        _check_name(info.filename)
        if info.filename in files:
            raise Refused(Code.ARCHIVE_ENTRY_DUPLICATE, "A name appears twice in the package.")
        limit = MAX_MANIFEST_BYTES if info.filename == MANIFEST_NAME else MAX_MODULE_BYTES
        if info.file_size > limit:
            raise Refused(Code.FILE_TOO_LARGE, "A file of the package is too large.")
        try:
            with archive.open(info) as handle:
                body = handle.read(limit + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
            raise Refused(Code.ARCHIVE_INVALID, "An entry of the package is unreadable.") from None
        if len(body) != info.file_size:
            raise Refused(Code.ARCHIVE_ENTRY_SIZE_MISMATCH, "An entry is not the size it says.")
        files[info.filename] = body
    return files


def folder_files(entries: Sequence[tuple[str, int]], body: bytes) -> dict[str, bytes]:
    """Split a folder's files sent as one body: ``entries`` are ``(relative path, size in
    bytes)`` in body order, ``body`` their bytes concatenated. Returns ``{name: bytes}`` for
    :func:`read_package`, which then checks everything a zip's files are checked for.

    A path is a plain file name, or ``<folder>/<name>`` with one folder shared by every entry
    (what a browser's folder picker names: the picked folder, then the file); the folder is
    dropped. Refuses ``archive-invalid`` for no entry or more than :data:`MAX_PACKAGE_FILES`,
    ``archive-entry-size-mismatch`` when the sizes do not add up to the body,
    ``archive-entry-absolute`` / ``-traversal`` / ``-name-invalid`` for a path that is not
    one of those two shapes, ``archive-entry-duplicate`` for a name twice."""
    if not entries or len(entries) > MAX_PACKAGE_FILES:
        raise Refused(Code.ARCHIVE_INVALID, "A plugin package holds a manifest and ≤ 8 modules.")
    if any(size < 0 for _, size in entries) or sum(s for _, s in entries) != len(body):
        raise Refused(
            Code.ARCHIVE_ENTRY_SIZE_MISMATCH, "The files' sizes do not add up to the bytes sent."
        )
    for path, _ in entries:
        if path.startswith(("/", "\\")):
            raise Refused(Code.ARCHIVE_ENTRY_ABSOLUTE, "Package entries are plain file names.")
        if ".." in re.split(r"[/\\]", path):
            raise Refused(Code.ARCHIVE_ENTRY_TRAVERSAL, "Package entries are plain file names.")
    parts = [path.split("/") for path, _ in entries]
    if all(len(p) == 2 for p in parts) and len({p[0] for p in parts}) == 1 and parts[0][0]:
        names = [p[1] for p in parts]
    else:
        names = [path for path, _ in entries]
    files: dict[str, bytes] = {}
    offset = 0
    for name, (_, size) in zip(names, entries, strict=True):
        _check_name(name)
        if name in files:
            raise Refused(Code.ARCHIVE_ENTRY_DUPLICATE, "A name appears twice in the package.")
        files[name] = body[offset : offset + size]
        offset += size
    return files


def _check_name(name: str) -> None:
    if "\0" in name:
        raise Refused(
            Code.ARCHIVE_ENTRY_NAME_INVALID, "A package entry's name holds a NUL character."
        )
    if name.startswith(("/", "\\")):
        raise Refused(Code.ARCHIVE_ENTRY_ABSOLUTE, "Package entries are plain file names.")
    if ".." in re.split(r"[/\\]", name):
        raise Refused(Code.ARCHIVE_ENTRY_TRAVERSAL, "Package entries are plain file names.")
    if name != MANIFEST_NAME and not re.fullmatch(MODULE_FILE, name):
        raise Refused(Code.ARCHIVE_ENTRY_NAME_INVALID, "Package entries are plain file names.")


def read_package(data: bytes | Mapping[str, bytes]) -> PluginPackage:
    """Read a plugin package: zip bytes, or a folder's ``{name: bytes}``.

    Refuses, in this order: the zip's own codes (``archive-too-large``, ``archive-invalid``,
    ``archive-entry-absolute``/``-traversal``/``-name-invalid``/``-duplicate``/``-size-mismatch``,
    ``file-too-large``); no manifest or a file the manifest does not list, or a listed module
    missing (``archive-invalid``); the manifest's own refusals (:func:`parse_manifest`); a
    module whose sha256 is not its pin (``plugin-pin-mismatch``, naming the file)."""
    if isinstance(data, bytes | bytearray):
        files = _zip_files(bytes(data))
    else:
        files = dict(data)
        for name, body in files.items():
            _check_name(name)
            limit = MAX_MANIFEST_BYTES if name == MANIFEST_NAME else MAX_MODULE_BYTES
            if len(body) > limit:
                raise Refused(Code.FILE_TOO_LARGE, "A file of the package is too large.")
    raw = files.get(MANIFEST_NAME)
    if raw is None:
        raise Refused(Code.ARCHIVE_INVALID, f"The package has no {MANIFEST_NAME}.")
    manifest = parse_manifest(raw)
    listed = {m.file for m in manifest.modules}
    if set(files) != listed | {MANIFEST_NAME}:
        raise Refused(
            Code.ARCHIVE_INVALID,
            "A package holds exactly its manifest and the modules the manifest lists.",
        )
    for module in manifest.modules:
        if hashlib.sha256(files[module.file]).hexdigest() != module.sha256:
            raise Refused(
                Code.PLUGIN_PIN_MISMATCH,
                f"{module.file}: its bytes are not the ones the manifest pins.",
                details={"file": module.file},
            )
    modules = {m.file: files[m.file] for m in manifest.modules}
    return PluginPackage(manifest, raw, modules)


_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def args_model(schema: ArgsSchema, *, title: str) -> type[Contract]:
    """A strict, closed contract model for ``schema`` (the worker ships no JSON Schema
    validator, so admission checks a call's arguments with this model: ``args-invalid``).

    Each property becomes a field under its own name (as an alias); constraints map to pydantic
    ones; an ``enum`` becomes a ``Literal``; an optional property without a default is ``None``
    when absent. The host adds ``project`` (required): the project the host reads from and
    writes into for the call — never passed to the plugin."""
    fields: dict[str, Any] = {"project": (ProjectId, Field(description="The project."))}
    for index, (name, prop) in enumerate(sorted(schema.properties.items())):
        kind: Any = _PY_TYPES[prop.type]
        if prop.enum is not None:
            kind = Literal[tuple(prop.enum)]
        constraints: dict[str, Any] = {"alias": name}
        if prop.description is not None:
            constraints["description"] = prop.description
        if prop.type == "string":
            constraints |= {
                "min_length": prop.min_length,
                "max_length": prop.max_length,
                "pattern": prop.pattern,
            }
        if prop.type in {"integer", "number"}:
            constraints |= {"ge": prop.minimum, "le": prop.maximum}
        if name in schema.required:
            fields[f"a{index}"] = (kind, Field(**constraints))
        else:
            fields[f"a{index}"] = (kind | None, Field(default=prop.default, **constraints))
    model = create_model(title, __base__=Contract, **fields)
    model.model_config["serialize_by_alias"] = True
    return model


def operation_entries(manifest: PluginManifest, manifest_sha256: str) -> list[OperationEntry]:
    """The registry entries of ``manifest``'s operations: origin ``plugin:<id>``, the manifest's
    release and ``manifest_sha256`` (hex; what admission, grants and withdrawal follow — issue
    29 item 1), the ``files`` capability when the operation reads or writes a path."""
    entries = []
    for op in manifest.operations:
        rung: Rung = op.receipt
        entries.append(
            OperationEntry(
                name=op.name,
                origin=manifest.origin,
                summary=op.summary,
                args_model=args_model(op.args, title=op.name.replace(".", "_") + "_args"),
                effect=op.effect,
                receipt_rule=rung,
                needs_confirmation=op.confirm,
                capabilities=frozenset({"files"}) if (op.reads or op.writes) else frozenset(),
                release=manifest.release,
                manifest_sha256=manifest_sha256,
            )
        )
    return entries


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`PluginManifest` (validation mode, by alias)."""
    return PluginManifest.model_json_schema(by_alias=True)


if __name__ == "__main__":
    print(json.dumps(manifest_schema(), indent=2, sort_keys=True))
