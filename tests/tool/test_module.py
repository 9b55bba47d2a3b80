"""The create-asset module itself (SPEC §8): a plugin of the Extism PDK ABI that imports only
the kernel functions it needs, a capped memory, real PNGs that an independent decoder (Pillow,
zlib) reads at the requested size, the same bytes for the same arguments, and its own argument
bounds."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import subprocess
import zlib

import pytest
from PIL import Image, ImageOps

from core.tools.asset_check import MAX_ASSET_BYTES, PALETTES, PATTERNS, CreateAssetArgs, check_png
from tests.tool.pdk_host import SIGNATURES
from tests.tool.wasm_runner import exports_of, imports_of, memory_limits, run_create
from wasm_tools.build import MAX_MEMORY_BYTES

ERR_ARGS, ERR_RANGE = -1, -2


def make(module_bytes: bytes, **fields: object) -> bytes:
    args = CreateAssetArgs.model_validate({"path": "a.png", **fields})
    out = run_create(module_bytes, args.module_input())
    assert isinstance(out, bytes), f"create refused with {out}"
    return out


def decode(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def colours(image: Image.Image) -> set[tuple[int, int, int]]:
    return {c for _, c in image.getcolors(maxcolors=1 << 20)}


def hex_rgb(text: str) -> tuple[int, int, int]:
    return tuple(bytes.fromhex(text[1:]))


def raw_rows(png: bytes) -> bytes:
    """The inflated image data, parsed by hand (zlib checks the Adler-32)."""
    pos, idat = 8, b""
    while pos < len(png):
        (length,) = struct.unpack_from(">I", png, pos)
        if png[pos + 4 : pos + 8] == b"IDAT":
            idat += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


#: The kernel functions create-asset calls, and nothing else (no config, vars, logs, network).
KERNEL_USED = {
    "input_length",
    "input_load_u8",
    "alloc",
    "store_u8",
    "store_u64",
    "output_set",
    "error_set",
}


def test_module_imports_only_the_kernel_functions_it_uses(module_bytes: bytes) -> None:
    imports = imports_of(module_bytes)
    assert {module for module, _ in imports} == {"extism:host/env"}
    assert {name for _, name in imports} == KERNEL_USED
    assert set(SIGNATURES) >= KERNEL_USED


def test_module_imports_only_kernel_functions_in_node(module_path) -> None:
    node = shutil.which("node")
    assert node, "node is required (the browser suite needs it too)"
    script = (
        "const m = new WebAssembly.Module(require('fs').readFileSync(process.argv[1]));"
        "console.log(JSON.stringify({imports: WebAssembly.Module.imports(m),"
        " exports: WebAssembly.Module.exports(m)}))"
    )
    out = subprocess.run([node, "-e", script, str(module_path)], capture_output=True, check=True)
    seen = json.loads(out.stdout)
    assert {(i["module"], i["name"], i["kind"]) for i in seen["imports"]} == {
        ("extism:host/env", name, "function") for name in KERNEL_USED
    }
    assert sorted(e["name"] for e in seen["exports"]) == ["create", "memory"]


def test_module_exports_exactly_the_abi(module_bytes: bytes) -> None:
    assert exports_of(module_bytes) == {"memory": "memory", "create": "func"}


def test_module_declares_a_memory_maximum(module_bytes: bytes) -> None:
    minimum, maximum = memory_limits(module_bytes)
    assert maximum == MAX_MEMORY_BYTES // 65536
    assert minimum <= maximum


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("size", [(1, 1), (2, 7), (64, 64), (333, 17), (1024, 1024)])
def test_every_pattern_decodes_at_the_requested_size(
    module_bytes: bytes, pattern: str, size: tuple[int, int]
) -> None:
    width, height = size
    png = make(module_bytes, width=width, height=height, pattern=pattern, seed=99)
    image = decode(png)
    assert image.size == (width, height)
    assert image.mode == "RGB"
    assert len(raw_rows(png)) == height * (1 + 3 * width)
    assert len(png) <= MAX_ASSET_BYTES
    assert check_png(png, width=width, height=height).size == len(png)


@pytest.mark.parametrize("palette", [*PALETTES, ["#000000", "#ffffff"], ["#123456"] * 8])
def test_every_palette_decodes(module_bytes: bytes, palette: object) -> None:
    assert decode(make(module_bytes, width=40, height=30, palette=palette)).size == (40, 30)


def test_same_arguments_give_the_same_bytes(module_bytes: bytes) -> None:
    fields = {"width": 300, "height": 200, "seed": 4242, "pattern": "stripes"}
    first = hashlib.sha256(make(module_bytes, **fields)).hexdigest()
    second = hashlib.sha256(make(module_bytes, **fields)).hexdigest()
    assert first == second


def test_a_different_seed_gives_a_different_picture(module_bytes: bytes) -> None:
    a = make(module_bytes, width=64, height=64, seed=1, pattern="identicon")
    b = make(module_bytes, width=64, height=64, seed=2, pattern="identicon")
    assert decode(a).tobytes() != decode(b).tobytes()


def test_identicon_uses_two_palette_colours_and_is_mirrored(module_bytes: bytes) -> None:
    palette = ["#ff0000", "#0000ff"]
    image = decode(make(module_bytes, width=200, height=200, pattern="identicon", palette=palette))
    assert colours(image) == {hex_rgb(c) for c in palette}
    assert image.tobytes() == ImageOps.mirror(image).tobytes()


def test_stripes_use_only_palette_colours(module_bytes: bytes) -> None:
    palette = ["#102030", "#405060", "#708090", "#a0b0c0"]
    image = decode(make(module_bytes, width=120, height=90, pattern="stripes", palette=palette))
    assert colours(image) <= {hex_rgb(c) for c in palette}
    assert len(colours(image)) >= 2


@pytest.mark.parametrize(
    ("palette", "first", "last"),
    [
        ("ember", "#2b0f0e", "#fde8a8"),
        ("ocean", "#03254c", "#d0efff"),
        ("forest", "#1b2e1b", "#e8f0c8"),
        ("dusk", "#1d1a3a", "#f6b8a0"),
        ("mono", "#111111", "#eeeeee"),
        (["#000000", "#ffffff"], "#000000", "#ffffff"),
    ],
)
def test_gradient_runs_from_first_to_last_colour(
    module_bytes: bytes, palette: object, first: str, last: str
) -> None:
    # seed 0: left to right, not reversed
    png = make(module_bytes, width=50, height=3, pattern="gradient", seed=0, palette=palette)
    image = decode(png)
    for y in range(3):
        assert image.getpixel((0, y)) == hex_rgb(first)
        assert image.getpixel((49, y)) == hex_rgb(last)


def _first_block_type(png: bytes) -> int:
    assert png[37:41] == b"IDAT"
    return (png[43] >> 1) & 3  # after the 2-byte zlib header


def test_compressible_images_use_fixed_huffman_blocks(module_bytes: bytes) -> None:
    png = make(module_bytes, width=512, height=512, pattern="identicon")
    assert _first_block_type(png) == 1
    assert len(png) < 512 * 512 * 3 // 50


def test_incompressible_images_fall_back_to_stored_blocks(module_bytes: bytes) -> None:
    png = make(module_bytes, width=300, height=300, pattern="noise")
    assert _first_block_type(png) == 0
    assert decode(png).size == (300, 300)


def _raw_args(
    *, version=1, pattern=0, palette=1, n=0, width=8, height=8, seed=0, extra=b""
) -> bytes:
    return struct.pack("<BBBBHHI", version, pattern, palette, n, width, height, seed) + extra


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (_raw_args(width=0), ERR_RANGE),
        (_raw_args(width=1025), ERR_RANGE),
        (_raw_args(height=0), ERR_RANGE),
        (_raw_args(height=1025), ERR_RANGE),
        (_raw_args(pattern=4), ERR_RANGE),
        (_raw_args(palette=6), ERR_RANGE),
        (_raw_args(palette=0, n=1, extra=b"\0\0\0"), ERR_RANGE),
        (_raw_args(palette=0, n=9, extra=b"\0" * 27), ERR_RANGE),
        (_raw_args(palette=1, n=2, extra=b"\0" * 6), ERR_RANGE),
        (_raw_args(version=2), ERR_ARGS),
        (_raw_args()[:11], ERR_ARGS),
        (_raw_args(palette=0, n=2, extra=b"\0" * 5), ERR_ARGS),
        (b"", ERR_ARGS),
    ],
)
def test_module_refuses_arguments_outside_its_bounds(
    module_bytes: bytes, args: bytes, code: int
) -> None:
    assert run_create(module_bytes, args) == code


def test_module_input_layout_is_the_documented_one() -> None:
    args = CreateAssetArgs(
        path="x.png", width=300, height=2, seed=0x01020304, pattern="noise", palette=["#0a0b0c"] * 2
    )
    assert args.module_input() == bytes.fromhex("01 03 00 02 2c01 0200 04030201 0a0b0c 0a0b0c")
    named = CreateAssetArgs(path="x.png", pattern="gradient", palette="mono")
    assert named.module_input()[:4] == bytes([1, 0, 5, 0])
