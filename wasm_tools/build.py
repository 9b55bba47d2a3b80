"""Reproducible build of every WebAssembly module the site ships — the create-asset tool and the
example plugins — and of the test-only modules and plugin packages (SPEC §8; docs/plugins.md).

Usage (from anywhere; paths are resolved from this file)::

    python wasm_tools/build.py                    # out/: create_asset.wasm, sandbox.html, plugins/
    python wasm_tools/build.py --out DIR          # same, into DIR
    python wasm_tools/build.py --repin            # build and deliberately rewrite every pin
    python wasm_tools/build.py --test-modules DIR # testdata/*.c and test packages (never shipped)

The compiler is Debian's clang 14 with lld (``wasm-ld``): freestanding C, no libc, no debug
info (``-g`` would embed the build path), ``--strip-all``, a declared memory maximum. Every
module is a plugin of the Extism PDK ABI (``pdk.h``): it imports only kernel functions of
``extism:host/env``. The same source gives the same bytes in any folder; a build whose bytes
differ from the pin fails with exit status 1 (a different compiler version is the usual cause:
the message says which) and leaves no module behind.

Pins: ``create_asset.wasm.sha256`` for create-asset; for a plugin, the ``sha256`` of each
module in its manifest ``plugins/<id>/voicebox-plugin.json`` (the manifest IS the pin). A
plugin package is ``out/plugins/<id>-<release>.zip`` (the manifest and its modules, stored
uncompressed with fixed times: byte-identical on every machine), and the same files unpacked
in ``out/plugins/<id>/``.

``out/sandbox.html`` is ``sandbox.template.html`` with ``pdk_host.js`` + ``sandbox.js`` inlined
and that script's sha256 as the only ``script-src`` source (an opaque-origin document cannot
check an external script's integrity without CORS, and ``'self'`` would let it load anything
from our own site).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLANG_VERSION",
    "MANIFEST_NAME",
    "MAX_MEMORY_BYTES",
    "PIN_FILE",
    "PLUGINS",
    "SOURCE",
    "BuildError",
    "build_create_asset",
    "build_module",
    "build_plugin",
    "build_plugins",
    "build_sandbox",
    "build_test_modules",
    "build_test_packages",
    "compile_module",
    "sandbox_script",
    "write_package",
]

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "create_asset.c"
PIN_FILE = HERE / "create_asset.wasm.sha256"
TESTDATA = HERE / "testdata"
TEST_PACKAGES = TESTDATA / "packages"
PLUGINS = HERE / "plugins"
SANDBOX_TEMPLATE = HERE / "sandbox.template.html"
SANDBOX_SCRIPT = HERE / "sandbox.js"
PDK_HOST_SCRIPT = HERE / "pdk_host.js"
DEFAULT_OUT = HERE / "out"
MANIFEST_NAME = "voicebox-plugin.json"

#: The compiler the pins were made with (``clang --version``, first line).
CLANG_VERSION = "Debian clang version 14.0.6"
#: create-asset's declared memory maximum: 128 pages of 64 KiB (a 1024 x 1024 image needs ~6.6 MB).
MAX_MEMORY_BYTES = 8 * 1024 * 1024
STACK_BYTES = 64 * 1024
EXPORTS = ("create",)
PAGE = 65536

CFLAGS = (
    "--target=wasm32",
    "-O2",
    "-std=c11",
    "-nostdlib",
    "-ffreestanding",
    "-fno-builtin",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    "-Wno-unused-function",
)

#: A zip entry's fixed time (the earliest a zip can say) and permissions: no build leaks in.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_ZIP_MODE = 0o100644 << 16


class BuildError(RuntimeError):
    """The build failed, or its bytes differ from the pin."""


@dataclass(frozen=True, slots=True)
class LinkOptions:
    """Link settings of one module. ``max_memory`` in bytes, ``None`` = declare no maximum
    (only test modules do that, to show the host caps it); ``initial_memory`` in bytes or
    ``None`` (the linker's choice); ``exports`` must each be defined (the link fails if not)."""

    max_memory: int | None = MAX_MEMORY_BYTES
    exports: tuple[str, ...] = EXPORTS
    initial_memory: int | None = None


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise BuildError(f"'{name}' not found: apt-get install -y clang lld")
    return found


def clang_version() -> str:
    """The first line of ``clang --version`` (e.g. ``Debian clang version 14.0.6``)."""
    out = subprocess.run(
        [_tool("clang"), "--version"], check=True, capture_output=True, text=True
    ).stdout
    return out.splitlines()[0].strip()


def compile_module(source: Path, out: Path, options: LinkOptions | None = None) -> bytes:
    """Compile one freestanding C file to a Wasm module at ``out``; return its bytes.

    The compile runs in a fresh temporary folder on a copy of the source named ``module.c``,
    with the ``*.h`` beside it and the shared headers of ``wasm_tools/`` (``pdk.h``,
    ``plugin.h``), so neither the source's folder nor its name can reach the output. Raises
    :class:`BuildError` with the compiler's message on failure.
    """
    options = options or LinkOptions()
    _tool("wasm-ld")
    flags = [*CFLAGS, "-Wl,--no-entry", "-Wl,--strip-all", "-Wl,--stack-first"]
    flags.append(f"-Wl,-z,stack-size={STACK_BYTES}")
    if options.max_memory is not None:
        flags.append(f"-Wl,--max-memory={options.max_memory}")
    if options.initial_memory is not None:
        flags.append(f"-Wl,--initial-memory={options.initial_memory}")
    flags += [f"-Wl,--export={name}" for name in options.exports]
    with tempfile.TemporaryDirectory(prefix="vbx-wasm-") as tmp:
        work = Path(tmp)
        for header in [*sorted(source.parent.glob("*.h")), *sorted(HERE.glob("*.h"))]:
            shutil.copyfile(header, work / header.name)
        shutil.copyfile(source, work / "module.c")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        proc = subprocess.run(
            [_tool("clang"), *flags, "-o", "module.wasm", "module.c"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise BuildError(f"compiling {source.name} failed:\n{proc.stderr.strip()}")
        data = (work / "module.wasm").read_bytes()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return data


def _mismatch(name: str, digest: str, size: int, pinned: str | None, repin_hint: str) -> BuildError:
    return BuildError(
        f"{name} does not match its pin\n"
        f"  built:  {digest} ({size} bytes)\n"
        f"  pinned: {pinned}\n"
        f"  compiler: {clang_version()} (the pin was made with {CLANG_VERSION})\n"
        f"If the source changed on purpose, rebuild with --repin and commit {repin_hint}."
    )


def read_pin() -> str | None:
    """The pinned sha256 of create-asset (64 hex digits), or ``None`` without a pin file."""
    if not PIN_FILE.exists():
        return None
    text = PIN_FILE.read_text(encoding="ascii").split()
    return text[0].lower() if text else None


def build_create_asset(out_dir: Path = DEFAULT_OUT, *, repin: bool = False) -> Path:
    """Build ``create_asset.wasm`` into ``out_dir`` and check it against the pin.

    With ``repin`` the pin file is rewritten instead (a deliberate act, reviewed in the diff).
    Raises :class:`BuildError` when the bytes differ from the pin; the built file is then
    removed so a stale or foreign module is never left where the site build would pick it up.
    """
    out = Path(out_dir) / "create_asset.wasm"
    data = compile_module(SOURCE, out)
    digest = hashlib.sha256(data).hexdigest()
    if repin:
        PIN_FILE.write_text(f"{digest}  create_asset.wasm\n", encoding="ascii")
        return out
    pinned = read_pin()
    if pinned != digest:
        out.unlink()
        raise _mismatch("create_asset.wasm", digest, len(data), pinned, "the pin")
    return out


# --- plugins --------------------------------------------------------------------------------


def read_manifest(folder: Path) -> dict:
    """The manifest of the plugin in ``folder`` (its ``voicebox-plugin.json``), as JSON data.

    Only what the build needs is checked here (modules with file names and pins, operations
    naming a module and an entry); the closed model that admits a package is the host's.
    """
    path = Path(folder) / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        modules = manifest["modules"]
        for module in modules:
            if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,62}\.wasm", module["file"]):
                raise BuildError(f"{path}: module file name {module['file']!r} is not allowed")
        for op in manifest["operations"]:
            if op["module"] not in {m["file"] for m in modules}:
                raise BuildError(f"{path}: operation {op['name']} names an unknown module")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"{path}: not a readable plugin manifest ({exc})") from None
    return manifest


def manifest_text(manifest: dict) -> str:
    """The canonical text of a manifest as committed: 2-space JSON, UTF-8, one final newline."""
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def _link_options(manifest: dict, file: str) -> LinkOptions:
    """A plugin module exports every entry its manifest names and declares the largest memory
    bound of its operations as its maximum (the host caps each call at the operation's own)."""
    ops = [op for op in manifest["operations"] if op["module"] == file]
    entries = tuple(sorted({op["entry"] for op in ops}))
    memory = max((op["limits"]["memoryBytes"] for op in ops), default=MAX_MEMORY_BYTES)
    return LinkOptions(max_memory=-(-memory // PAGE) * PAGE, exports=entries)


def write_package(files: dict[str, bytes], out: Path) -> Path:
    """Write ``files`` (name → bytes) as a zip at ``out``: stored (no compression, so no zlib
    version can change the bytes), in the given order, every entry at 1980-01-01 with mode
    0644. The same files always give the same zip."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.create_system = 3
            info.external_attr = _ZIP_MODE
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, data)
    return out


def build_plugin(folder: Path, out_dir: Path = DEFAULT_OUT, *, repin: bool = False) -> Path:
    """Build the plugin in ``folder``: each manifest module from ``<stem>.c`` beside it, checked
    against the manifest's sha256; then ``out_dir/plugins/<id>/`` and its package zip.

    With ``repin`` the manifest's digests are rewritten instead. Raises :class:`BuildError`
    when a module differs from its pin; nothing of that plugin is then left in ``out_dir``.
    Returns the zip's path.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    pid, release = manifest["id"], manifest["release"]
    unpacked = Path(out_dir) / "plugins" / pid
    package = Path(out_dir) / "plugins" / f"{pid}-{release}.zip"
    shutil.rmtree(unpacked, ignore_errors=True)
    package.unlink(missing_ok=True)
    modules: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="vbx-plugin-") as tmp:
        for module in manifest["modules"]:
            file = module["file"]
            source = folder / (file.removesuffix(".wasm") + ".c")
            data = compile_module(source, Path(tmp) / file, _link_options(manifest, file))
            digest = hashlib.sha256(data).hexdigest()
            if repin:
                module["sha256"] = digest
            elif module["sha256"] != digest:
                raise _mismatch(
                    f"{pid}/{file}", digest, len(data), module["sha256"], "the manifest"
                )
            modules[file] = data
    if repin:
        (folder / MANIFEST_NAME).write_text(manifest_text(manifest), encoding="utf-8")
    files = {MANIFEST_NAME: (folder / MANIFEST_NAME).read_bytes(), **modules}
    unpacked.mkdir(parents=True)
    for name, data in files.items():
        (unpacked / name).write_bytes(data)
    return write_package(files, package)


def build_plugins(out_dir: Path = DEFAULT_OUT, *, repin: bool = False) -> dict[str, Path]:
    """Build every example plugin under ``plugins/``; plugin id → package zip path."""
    built = {}
    for folder in sorted(p for p in PLUGINS.iterdir() if (p / MANIFEST_NAME).exists()):
        built[folder.name] = build_plugin(folder, out_dir, repin=repin)
    return built


# --- test-only modules and packages ----------------------------------------------------------


def _test_options(source: Path) -> LinkOptions:
    """A test module may say ``// max-memory: none|<bytes>`` and ``// initial-memory: <bytes>``;
    it exports what its ``PDK_EXPORT``s name."""
    text = source.read_text(encoding="utf-8")
    options = LinkOptions(exports=())
    match = re.search(r"^// max-memory: (\S+)$", text, re.M)
    if match:
        value = match.group(1)
        options = LinkOptions(max_memory=None if value == "none" else int(value), exports=())
    match = re.search(r"^// initial-memory: (\d+)$", text, re.M)
    if match:
        options = LinkOptions(options.max_memory, (), int(match.group(1)))
    return options


def _refuse_shipped_folder(out_dir: Path) -> None:
    if Path(out_dir).resolve() == DEFAULT_OUT.resolve():
        raise BuildError("test modules must not be built into wasm_tools/out/ (shipped folder)")


def build_test_modules(out_dir: Path) -> dict[str, Path]:
    """Build every ``testdata/*.c`` into ``out_dir`` as ``<stem>.wasm``; name → path.

    These modules misbehave on purpose (a runaway loop, malformed output, memory hunger,
    imports no host here gives, answers that claim a receipt) to exercise the runtime's bounds
    and the host's decoder. They are never pinned and never shipped.
    """
    out_dir = Path(out_dir)
    _refuse_shipped_folder(out_dir)
    built = {}
    for source in sorted(TESTDATA.glob("*.c")):
        path = out_dir / f"{source.stem}.wasm"
        compile_module(source, path, _test_options(source))
        built[source.stem] = path
    return built


def build_test_packages(out_dir: Path, modules: dict[str, Path] | None = None) -> dict[str, Path]:
    """Build the hostile plugin packages of ``testdata/packages/*.json`` into ``out_dir``.

    Each template is a manifest in the real format; a module's ``"sha256": "@sha256@"`` becomes
    the digest of the module built from ``testdata/<stem>.c`` (or of an example plugin's, e.g.
    ``textstats.wasm``), any other value stays (the bad pin). Two more packages break the zip
    itself: ``extra-entry`` (a file the manifest does not list) and ``traversal`` (an entry
    named ``../``). Name → zip path. Never shipped.
    """
    out_dir = Path(out_dir)
    _refuse_shipped_folder(out_dir)
    modules = dict(modules or build_test_modules(out_dir / "modules"))
    for folder in sorted(PLUGINS.iterdir()):
        if (folder / MANIFEST_NAME).exists():
            manifest = read_manifest(folder)
            for module in manifest["modules"]:
                stem = module["file"].removesuffix(".wasm")
                path = out_dir / "modules" / module["file"]
                compile_module(folder / f"{stem}.c", path, _link_options(manifest, module["file"]))
                modules[stem] = path
    built = {}
    for template in sorted(TEST_PACKAGES.glob("*.json")):
        manifest = json.loads(template.read_text(encoding="utf-8"))
        files: dict[str, bytes] = {}
        for module in manifest["modules"]:
            data = modules[module["file"].removesuffix(".wasm")].read_bytes()
            if module["sha256"] == "@sha256@":
                module["sha256"] = hashlib.sha256(data).hexdigest()
            files[module["file"]] = data
        files = {MANIFEST_NAME: manifest_text(manifest).encode(), **files}
        built[template.stem] = write_package(files, out_dir / f"{template.stem}.zip")
    good = zipfile.ZipFile(built["loop"]).read
    loop = {MANIFEST_NAME: good(MANIFEST_NAME), "runaway.wasm": good("runaway.wasm")}
    extra = {**loop, "README.txt": b"not listed in the manifest\n"}
    built["extra-entry"] = write_package(extra, out_dir / "extra-entry.zip")
    traversal = {MANIFEST_NAME: loop[MANIFEST_NAME], "../runaway.wasm": loop["runaway.wasm"]}
    built["traversal"] = write_package(traversal, out_dir / "traversal.zip")
    return built


def build_module(source: Path, out: Path) -> bytes:
    """Compile any C file with the shipped create-asset module's settings (used by tests)."""
    return compile_module(source, out, LinkOptions())


# --- the sandbox page ------------------------------------------------------------------------


def sandbox_script() -> str:
    """The one script of the sandbox page: ``pdk_host.js``, a newline, ``sandbox.js``."""
    host = PDK_HOST_SCRIPT.read_text(encoding="utf-8")
    frame = SANDBOX_SCRIPT.read_text(encoding="utf-8")
    return f"{host}\n{frame}"


def build_sandbox(out_dir: Path = DEFAULT_OUT) -> Path:
    """Write ``out_dir/sandbox.html``: the template with :func:`sandbox_script` inlined and its
    CSP hash.

    The script's hash is ``sha256-<base64>`` of its UTF-8 bytes, exactly as inlined. Raises
    :class:`BuildError` if the script could end its own ``<script>`` element early or the
    template lost a placeholder.
    """
    script = sandbox_script()
    if re.search(r"</script|<!--", script, re.I):
        raise BuildError(
            "pdk_host.js and sandbox.js must not contain '</script' or '<!--' (inlined)"
        )
    template = SANDBOX_TEMPLATE.read_text(encoding="utf-8")
    if template.count("@SCRIPT_HASH@") != 1 or template.count("<script>@SCRIPT@</script>") != 1:
        raise BuildError("sandbox.template.html lost its @SCRIPT_HASH@ or @SCRIPT@ placeholder")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    html = template.replace("@SCRIPT_HASH@", digest).replace("@SCRIPT@", script)
    out = Path(out_dir) / "sandbox.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8", newline="\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--repin", action="store_true", help="rewrite every sha256 pin")
    parser.add_argument("--test-modules", type=Path, metavar="DIR", help="build test modules")
    args = parser.parse_args(argv)
    try:
        if args.test_modules:
            modules = build_test_modules(args.test_modules / "modules")
            for name, path in modules.items():
                print(f"{name}: {path} ({path.stat().st_size} bytes)")
            for name, path in build_test_packages(args.test_modules, modules).items():
                print(f"package {name}: {path}")
            return 0
        out = build_create_asset(args.out, repin=args.repin)
        data = out.read_bytes()
        verb = "pinned" if args.repin else "matches pin"
        print(f"{out}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()} ({verb})")
        for pid, package in build_plugins(args.out, repin=args.repin).items():
            print(f"{package}: plugin {pid}, {package.stat().st_size} bytes ({verb})")
        page = build_sandbox(args.out)
        print(f"{page}: {page.stat().st_size} bytes")
        return 0
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
