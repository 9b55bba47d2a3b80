"""The host's check of create-asset's output and its argument model (SPEC §7, §8): only a
complete PNG of exactly the requested size, within the cap, is ever written."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image
from pydantic import ValidationError

from core.refusals import Code, Refused
from core.tools.asset_check import (
    MAX_ASSET_BYTES,
    CreateAssetArgs,
    check_png,
    sandbox_refusal,
)
from tests.tool.wasm_runner import run_create


@pytest.fixture(scope="module")
def png(module_bytes: bytes) -> bytes:
    args = CreateAssetArgs(path="a.png", width=40, height=30, seed=5, pattern="stripes")
    out = run_create(module_bytes, args.module_input())
    assert isinstance(out, bytes)
    return out


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_of(
    width: int,
    height: int,
    raw: bytes | None = None,
    *,
    ihdr: bytes | None = None,
    middle: list[bytes] | None = None,
) -> bytes:
    """A hand-made 8-bit RGB PNG; ``raw`` is the filtered image data (default: all zero)."""
    raw = bytes(height * (1 + 3 * width)) if raw is None else raw
    ihdr = ihdr or struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = middle if middle is not None else [chunk(b"IDAT", zlib.compress(raw))]
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + b"".join(idat) + chunk(b"IEND", b"")


def refused(data: object, width: int, height: int, **kw: int) -> str:
    with pytest.raises(Refused) as caught:
        check_png(data, width=width, height=height, **kw)
    assert caught.value.code is Code.TOOL_OUTPUT_INVALID
    return caught.value.message


def test_the_tools_png_passes(png: bytes) -> None:
    info = check_png(png, width=40, height=30)
    assert (info.width, info.height, info.bit_depth, info.colour_type) == (40, 30, 8, 2)
    assert info.size == len(png)


def test_a_png_from_another_encoder_passes() -> None:
    for mode in ("RGB", "RGBA", "L", "P", "1"):
        buffer = io.BytesIO()
        Image.new(mode, (17, 9)).save(buffer, format="PNG")
        assert check_png(buffer.getvalue(), width=17, height=9).width == 17


def test_a_corrupted_crc_is_refused(png: bytes) -> None:
    broken = bytearray(png)
    broken[45] ^= 0xFF  # inside the IDAT body, CRC left as it was
    assert "CRC" in refused(bytes(broken), 40, 30)


def test_a_corrupted_stream_with_a_fixed_crc_is_refused() -> None:
    good = zlib.compress(bytes(3 * (1 + 3 * 4)))
    bad = good[:-1] + bytes([good[-1] ^ 1])  # Adler-32 wrong, chunk CRC recomputed
    assert "zlib" in refused(png_of(4, 3, middle=[chunk(b"IDAT", bad)]), 4, 3)


def test_wrong_dimensions_are_refused(png: bytes) -> None:
    assert "not the requested 41 x 30" in refused(png, 41, 30)
    refused(png, 40, 31)


@pytest.mark.parametrize("keep", [0, 7, 8, 20, 33, 60, -1, -12, -13])
def test_truncated_data_is_refused(png: bytes, keep: int) -> None:
    refused(png[:keep], 40, 30)


def test_oversize_output_is_refused(png: bytes) -> None:
    assert "at most" in refused(png, 40, 30, max_bytes=len(png) - 1)
    assert check_png(png, width=40, height=30, max_bytes=len(png)).size == len(png)
    huge = png + bytes(MAX_ASSET_BYTES)
    assert "at most" in refused(huge, 40, 30)


def test_bytes_after_iend_are_refused(png: bytes) -> None:
    assert "follow the IEND" in refused(png + b"\0", 40, 30)


def test_a_missing_signature_is_refused(png: bytes) -> None:
    refused(b"GIF89a" + png[6:], 40, 30)
    refused("not bytes", 40, 30)


def test_a_missing_iend_is_refused(png: bytes) -> None:
    refused(png[:-12], 40, 30)


def test_interlace_is_refused() -> None:
    ihdr = struct.pack(">IIBBBBB", 4, 3, 8, 2, 0, 0, 1)
    assert "interlace" in refused(png_of(4, 3, ihdr=ihdr), 4, 3)


def test_an_impossible_format_is_refused() -> None:
    ihdr = struct.pack(">IIBBBBB", 4, 3, 4, 2, 0, 0, 0)  # RGB at 4 bits does not exist
    refused(png_of(4, 3, ihdr=ihdr), 4, 3)


def test_an_unknown_critical_chunk_is_refused() -> None:
    raw_chunk = chunk(b"IDAT", zlib.compress(bytes(3 * 13)))
    assert "critical" in refused(png_of(4, 3, middle=[chunk(b"EVIL", b"x"), raw_chunk]), 4, 3)


def test_an_ancillary_chunk_is_allowed() -> None:
    raw_chunk = chunk(b"IDAT", zlib.compress(bytes(3 * 13)))
    assert check_png(png_of(4, 3, middle=[chunk(b"tEXt", b"a\0b"), raw_chunk]), width=4, height=3)


def test_split_idat_must_be_consecutive() -> None:
    stream = zlib.compress(bytes(3 * 13))
    a, b = chunk(b"IDAT", stream[:5]), chunk(b"IDAT", stream[5:])
    assert check_png(png_of(4, 3, middle=[a, b]), width=4, height=3)
    refused(png_of(4, 3, middle=[a, chunk(b"tEXt", b"a\0b"), b]), 4, 3)
    refused(png_of(4, 3, middle=[]), 4, 3)


def test_image_data_of_the_wrong_size_is_refused() -> None:
    assert "inflates to" in refused(png_of(4, 3, bytes(3 * 13 - 1)), 4, 3)
    assert "inflates to" in refused(png_of(4, 3, bytes(3 * 13 + 1)), 4, 3)


def test_a_compression_bomb_is_cut_short() -> None:
    bomb = chunk(b"IDAT", zlib.compress(bytes(64 * 1024 * 1024), 9))
    assert "inflates to" in refused(png_of(4, 3, middle=[bomb]), 4, 3)


def test_an_unknown_row_filter_is_refused() -> None:
    raw = bytearray(3 * 13)
    raw[13] = 5
    assert "filter" in refused(png_of(4, 3, bytes(raw)), 4, 3)


# --- the argument model -------------------------------------------------------------------


def test_defaults_and_schema_are_what_discovery_shows() -> None:
    args = CreateAssetArgs.model_validate({"path": "assets/icon.png"})
    assert (args.width, args.height, args.seed, args.pattern, args.palette) == (
        256,
        256,
        0,
        "identicon",
        "ember",
    )
    schema = CreateAssetArgs.model_json_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["path"]
    assert set(schema["properties"]) == {"path", "width", "height", "seed", "pattern", "palette"}
    assert schema["properties"]["width"]["maximum"] == 1024


@pytest.mark.parametrize(
    "bad",
    [
        {"width": 0},
        {"width": 1025},
        {"height": 0},
        {"height": 1025},
        {"width": "64"},
        {"width": True},
        {"seed": -1},
        {"seed": 2**32},
        {"pattern": "spiral"},
        {"palette": "neon"},
        {"palette": ["#ffffff"]},
        {"palette": ["#ffffff"] * 9},
        {"palette": ["#fff", "#000"]},
        {"palette": ["ffffff", "#000000"]},
        {"path": "icon.svg"},
        {"path": "icon.png.txt"},
        {"grant": {"files": "all"}},
    ],
)
def test_arguments_outside_their_bounds_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        CreateAssetArgs.model_validate({"path": "a.png", **bad})


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../outside.png", Code.PATH_OUTSIDE_ROOT),
        ("/abs.png", Code.PATH_OUTSIDE_ROOT),
        (".voicebox/x.png", Code.PATH_RESERVED),
        ("a//b.png", Code.PATH_INVALID),
    ],
)
def test_the_target_passes_the_one_path_rule(path: str, code: Code) -> None:
    args = CreateAssetArgs(path=path)
    with pytest.raises(Refused) as caught:
        args.target()
    assert caught.value.code is code
    assert str(CreateAssetArgs(path="assets/Icon.PNG").target()) == "assets/Icon.PNG"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("tool-timeout", Code.TOOL_TIMEOUT),
        ("tool-memory-exceeded", Code.TOOL_MEMORY_EXCEEDED),
        ("tool-output-invalid", Code.TOOL_OUTPUT_INVALID),
        ("sandbox-unavailable", Code.SANDBOX_UNAVAILABLE),
        ("message-malformed", Code.MESSAGE_MALFORMED),
        ("human_gesture_required", Code.TOOL_OUTPUT_INVALID),
        ("receipt-forgery-refused", Code.TOOL_OUTPUT_INVALID),
        ("no-such-code", Code.TOOL_OUTPUT_INVALID),
        (None, Code.TOOL_OUTPUT_INVALID),
    ],
)
def test_a_sandbox_can_only_answer_its_own_codes(code: object, expected: Code) -> None:
    assert sandbox_refusal(code, "x" * 1000).code is expected
    assert len(sandbox_refusal(code, "x" * 1000).message) <= 300
