"""Reproducible build of the create-asset Wasm module, and of the test-only modules (SPEC §8).

Usage (from anywhere; paths are resolved from this file)::

    python wasm_tools/build.py                   # out/create_asset.wasm (pinned) + out/sandbox.html
    python wasm_tools/build.py --out DIR         # same, into DIR
    python wasm_tools/build.py --repin           # build and deliberately rewrite the pin file
    python wasm_tools/build.py --test-modules DIR  # build testdata/*.c into DIR (never shipped)

The compiler is Debian's clang 14 with lld (``wasm-ld``): freestanding C, no libc, no imports,
no debug info (``-g`` would embed the build path), ``--strip-all``, a declared memory maximum.
The same source gives the same bytes in any folder; the pin file
``create_asset.wasm.sha256`` holds the expected sha256 and a build whose bytes differ fails
with exit status 1 (a different compiler version is the usual cause: the message says which).

``out/sandbox.html`` is ``sandbox.template.html`` with ``sandbox.js`` inlined and that script's
sha256 as the only ``script-src`` source (an opaque-origin document cannot check an external
script's integrity without CORS, and ``'self'`` would let it load anything from our own site).
The shipped pair is ``out/create_asset.wasm`` and ``out/sandbox.html``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLANG_VERSION",
    "MAX_MEMORY_BYTES",
    "PIN_FILE",
    "SOURCE",
    "BuildError",
    "build_create_asset",
    "build_module",
    "build_sandbox",
    "build_test_modules",
    "compile_module",
]

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "create_asset.c"
PIN_FILE = HERE / "create_asset.wasm.sha256"
TESTDATA = HERE / "testdata"
SANDBOX_TEMPLATE = HERE / "sandbox.template.html"
SANDBOX_SCRIPT = HERE / "sandbox.js"
DEFAULT_OUT = HERE / "out"

#: The compiler the pin was made with (``clang --version``, first line).
CLANG_VERSION = "Debian clang version 14.0.6"
#: The module's declared memory maximum: 128 pages of 64 KiB (a 1024 x 1024 image needs ~6.6 MB).
MAX_MEMORY_BYTES = 8 * 1024 * 1024
STACK_BYTES = 64 * 1024
EXPORTS = ("alloc_input", "create", "output_ptr")

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
)


class BuildError(RuntimeError):
    """The build failed, or its bytes differ from the pin."""


@dataclass(frozen=True, slots=True)
class LinkOptions:
    """Link settings of one module. ``max_memory`` in bytes, ``None`` = declare no maximum
    (only test modules do that, to show the sandbox refuses them)."""

    max_memory: int | None = MAX_MEMORY_BYTES
    exports: tuple[str, ...] = EXPORTS


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

    The compile runs in a fresh temporary folder on a copy of the source named ``module.c``
    (and of the ``*.h`` beside it), so neither the source's folder nor its name can reach the
    output. Raises
    :class:`BuildError` with the compiler's message on failure.
    """
    options = options or LinkOptions()
    _tool("wasm-ld")
    flags = [*CFLAGS, "-Wl,--no-entry", "-Wl,--strip-all", "-Wl,--stack-first"]
    flags.append(f"-Wl,-z,stack-size={STACK_BYTES}")
    if options.max_memory is not None:
        flags.append(f"-Wl,--max-memory={options.max_memory}")
    flags += [f"-Wl,--export={name}" for name in options.exports]
    with tempfile.TemporaryDirectory(prefix="vbx-wasm-") as tmp:
        work = Path(tmp)
        shutil.copyfile(source, work / "module.c")
        for header in source.parent.glob("*.h"):
            shutil.copyfile(header, work / header.name)
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


def read_pin() -> str | None:
    """The pinned sha256 (64 hex digits), or ``None`` when there is no pin file yet."""
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
        raise BuildError(
            "create_asset.wasm does not match its pin\n"
            f"  built:  {digest} ({len(data)} bytes)\n"
            f"  pinned: {pinned}\n"
            f"  compiler: {clang_version()} (the pin was made with {CLANG_VERSION})\n"
            "If the source changed on purpose, rebuild with --repin and commit the pin."
        )
    return out


def _test_options(source: Path) -> LinkOptions:
    """A test module may say ``// max-memory: none`` or ``// max-memory: <bytes>``."""
    match = re.search(r"^// max-memory: (\S+)$", source.read_text(encoding="utf-8"), re.M)
    if not match:
        return LinkOptions()
    value = match.group(1)
    return LinkOptions(max_memory=None if value == "none" else int(value))


def build_test_modules(out_dir: Path) -> dict[str, Path]:
    """Build every ``testdata/*.c`` into ``out_dir`` as ``<stem>.wasm``; name → path.

    These modules misbehave on purpose (a runaway loop, malformed output, memory hunger, an
    import) to exercise the sandbox's bounds. They are never pinned and never shipped.
    """
    out_dir = Path(out_dir)
    if out_dir.resolve() == DEFAULT_OUT.resolve():
        raise BuildError("test modules must not be built into wasm_tools/out/ (shipped folder)")
    built = {}
    for source in sorted(TESTDATA.glob("*.c")):
        path = out_dir / f"{source.stem}.wasm"
        compile_module(source, path, _test_options(source))
        built[source.stem] = path
    return built


def build_module(source: Path, out: Path) -> bytes:
    """Compile any C file with the shipped module's settings (used by tests)."""
    return compile_module(source, out, LinkOptions())


def build_sandbox(out_dir: Path = DEFAULT_OUT) -> Path:
    """Write ``out_dir/sandbox.html``: the template with sandbox.js inlined and its CSP hash.

    The script's hash is ``sha256-<base64>`` of its UTF-8 bytes, exactly as inlined. Raises
    :class:`BuildError` if the script could end its own ``<script>`` element early or the
    template lost a placeholder.
    """
    script = SANDBOX_SCRIPT.read_text(encoding="utf-8")
    if re.search(r"</script|<!--", script, re.I):
        raise BuildError("sandbox.js must not contain '</script' or '<!--' (it is inlined)")
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
    parser.add_argument("--repin", action="store_true", help="rewrite the sha256 pin")
    parser.add_argument("--test-modules", type=Path, metavar="DIR", help="build test modules")
    args = parser.parse_args(argv)
    try:
        if args.test_modules:
            for name, path in build_test_modules(args.test_modules).items():
                print(f"{name}: {path} ({path.stat().st_size} bytes)")
            return 0
        out = build_create_asset(args.out, repin=args.repin)
        data = out.read_bytes()
        verb = "pinned" if args.repin else "matches pin"
        print(f"{out}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()} ({verb})")
        page = build_sandbox(args.out)
        print(f"{page}: {page.stat().st_size} bytes")
        return 0
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
