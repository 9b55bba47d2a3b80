"""create-asset on the host's side: its arguments, their bytes for the module, and the check of
what the module returned (SPEC §7, §8; seed 003 "a result and a receipt prove different things").

The host validates :class:`CreateAssetArgs` (their JSON Schema is what discovery shows), sends
:meth:`CreateAssetArgs.module_input` and the module's bytes to the sandbox, and passes whatever
comes back through :func:`check_png` before it writes a single byte. Anything that is not a
complete, well-formed, non-interlaced PNG of exactly the requested size, within
:data:`MAX_ASSET_BYTES`, is refused ``tool-output-invalid`` and nothing is written. A failure
the sandbox reports is turned into a refusal by :func:`sandbox_refusal`.

Pure Python (``struct``, ``zlib``, ``hashlib``): runs unchanged on CPython and in Pyodide.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from core.model import Contract
from core.paths import MAX_PATH_BYTES, ProjectPath, parse_path
from core.refusals import Code, Refused

__all__ = [
    "MAX_ASSET_BYTES",
    "MAX_COLOURS",
    "MAX_SIDE",
    "PALETTES",
    "PATTERNS",
    "SANDBOX_CODES",
    "TIME_LIMIT_MS",
    "CreateAssetArgs",
    "PngInfo",
    "check_png",
    "output_too_large",
    "sandbox_refusal",
]

#: Largest width or height in pixels.
MAX_SIDE = 1024
#: Most colours a custom palette may hold (at least 2).
MAX_COLOURS = 8
#: Largest PNG the host accepts from the tool, in bytes. A 1024 x 1024 RGB image stored without
#: compression is 3,147,060 bytes; the sandbox's own output cap defaults to the same 4 MiB.
MAX_ASSET_BYTES = 4 * 1024 * 1024
#: Time the sandbox gives one run, in milliseconds, before it stops the module (``tool-timeout``).
TIME_LIMIT_MS = 3000

#: Pattern names in the module's numbering (argument byte 1).
PATTERNS: tuple[str, ...] = ("gradient", "identicon", "stripes", "noise")
#: Named palettes in the module's numbering (argument byte 2; 0 is a custom palette).
PALETTES: tuple[str, ...] = ("ember", "ocean", "forest", "dusk", "mono")

#: Codes a sandbox answer may carry; anything else is reported as ``tool-output-invalid``.
SANDBOX_CODES = frozenset(
    {
        Code.TOOL_TIMEOUT,
        Code.TOOL_MEMORY_EXCEEDED,
        Code.TOOL_OUTPUT_INVALID,
        Code.SANDBOX_UNAVAILABLE,
        Code.MESSAGE_MALFORMED,
    }
)

PatternName = Literal["gradient", "identicon", "stripes", "noise"]
PaletteName = Literal["ember", "ocean", "forest", "dusk", "mono"]
Colour = Annotated[str, StringConstraints(pattern=r"^#[0-9a-fA-F]{6}$")]
CustomPalette = Annotated[list[Colour], Field(min_length=2, max_length=MAX_COLOURS)]

_ARGS_VERSION = 1


class CreateAssetArgs(Contract):
    """Arguments of ``create-asset`` (SPEC §8): what to draw and where the host writes it.

    ``width``/``height`` in pixels (1..1024); ``seed`` an unsigned 32-bit integer (the same
    arguments always give the same bytes); ``pattern`` one of :data:`PATTERNS`; ``palette``
    a named palette or 2..8 ``#rrggbb`` colours; ``path`` the project-relative file the host
    writes, ending in ``.png`` (checked by the one path rule when the host resolves it).
    """

    path: str = Field(
        max_length=MAX_PATH_BYTES,
        pattern=r"\.[pP][nN][gG]$",
        description="Project-relative path of the PNG the host writes, e.g. 'assets/icon.png'.",
    )
    width: int = Field(default=256, ge=1, le=MAX_SIDE, description="Width in pixels.")
    height: int = Field(default=256, ge=1, le=MAX_SIDE, description="Height in pixels.")
    seed: int = Field(
        default=0, ge=0, le=2**32 - 1, description="Varies the picture; same seed, same bytes."
    )
    pattern: PatternName = Field(default="identicon", description="What to draw.")
    palette: PaletteName | CustomPalette = Field(
        default="ember",
        description="A named palette, or 2 to 8 colours written '#rrggbb'.",
    )

    def target(self) -> ProjectPath:
        """The validated target path; refuses ``path-invalid``, ``path-outside-root``,
        ``path-reserved`` (the one path rule, :func:`core.paths.parse_path`)."""
        return parse_path(self.path)

    def module_input(self) -> bytes:
        """The argument bytes the module's ``create`` reads (version 1, little-endian).

        Layout: ``u8 version=1, u8 pattern, u8 palette (0 = custom), u8 ncolours,
        u16 width, u16 height, u32 seed``, then ``ncolours`` RGB triplets — 12 + 3n bytes.
        """
        if isinstance(self.palette, str):
            palette_id, colours = PALETTES.index(self.palette) + 1, b""
        else:
            palette_id, colours = 0, b"".join(bytes.fromhex(c[1:]) for c in self.palette)
        head = struct.pack(
            "<BBBBHHI",
            _ARGS_VERSION,
            PATTERNS.index(self.pattern),
            palette_id,
            len(colours) // 3,
            self.width,
            self.height,
            self.seed,
        )
        return head + colours


@dataclass(frozen=True, slots=True)
class PngInfo:
    """What :func:`check_png` found: pixel size, format, byte size and sha256 (hex)."""

    width: int
    height: int
    bit_depth: int
    colour_type: int
    size: int
    sha256: str


_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CRITICAL = frozenset({b"IHDR", b"PLTE", b"IDAT", b"IEND"})
# colour type → (channels, allowed bit depths), PNG spec table 11.1
_FORMATS = {
    0: (1, (1, 2, 4, 8, 16)),
    2: (3, (8, 16)),
    3: (1, (1, 2, 4, 8)),
    4: (2, (8, 16)),
    6: (4, (8, 16)),
}


def _invalid(message: str) -> Refused:
    return Refused(Code.TOOL_OUTPUT_INVALID, f"The tool's output is not a valid PNG: {message}.")


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Split ``data`` after the signature into ``(type, body)`` pairs, checking every CRC."""
    chunks = []
    pos = len(_SIGNATURE)
    while pos < len(data):
        if len(data) - pos < 12:
            raise _invalid("it ends inside a chunk header")
        length, kind = struct.unpack_from(">I4s", data, pos)
        if length > 0x7FFFFFFF:
            raise _invalid("a chunk length exceeds 2^31 - 1")
        if not kind.isalpha() or not kind.isascii():
            raise _invalid("a chunk type is not four ASCII letters")
        end = pos + 8 + length
        if end + 4 > len(data):
            raise _invalid(f"it is truncated inside the {kind.decode()} chunk")
        body = data[pos + 8 : end]
        (crc,) = struct.unpack_from(">I", data, end)
        if zlib.crc32(kind + body) != crc:
            raise _invalid(f"the {kind.decode()} chunk's CRC is wrong")
        chunks.append((kind, body))
        pos = end + 4
        if kind == b"IEND":
            break
    if pos != len(data):
        raise _invalid("bytes follow the IEND chunk")
    return chunks


def check_png(
    data: bytes | bytearray | memoryview,
    *,
    width: int,
    height: int,
    max_bytes: int = MAX_ASSET_BYTES,
) -> PngInfo:
    """Check that ``data`` is a complete PNG of ``width`` x ``height`` pixels (SPEC §8).

    Checks, in order: at most ``max_bytes`` bytes; the 8-byte signature; every chunk's length,
    type and CRC-32; IHDR first (13 bytes, a legal bit depth / colour type pair, compression 0,
    filter 0, no interlace) with exactly the requested size; PLTE present for colour type 3;
    one or more consecutive IDAT chunks whose zlib stream (Adler-32 included) inflates to
    exactly the image's filtered size, with filter types 0..4; unknown critical chunks refused;
    IEND last, empty, and nothing after it. Inflation is bounded by the expected size, so a
    compression bomb costs at most one image's worth of memory.

    Returns a :class:`PngInfo`; raises :class:`~core.refusals.Refused` ``tool-output-invalid``
    with a sentence naming the first failure.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _invalid("the tool returned no bytes")
    data = bytes(data)
    if len(data) > max_bytes:
        raise output_too_large(len(data), max_bytes)
    if not data.startswith(_SIGNATURE):
        raise _invalid("the PNG signature is missing")
    chunks = _chunks(data)
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise _invalid("IHDR is not the first chunk, or is not 13 bytes")
    if chunks[-1] != (b"IEND", b""):
        raise _invalid("it does not end with an empty IEND chunk")
    w, h, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (w, h) != (width, height):
        raise _invalid(f"it is {w} x {h} pixels, not the requested {width} x {height}")
    if colour not in _FORMATS or depth not in _FORMATS[colour][1]:
        raise _invalid(f"bit depth {depth} with colour type {colour} is not a PNG format")
    if compression != 0 or filtering != 0 or interlace != 0:
        raise _invalid("only deflate, filter method 0 and no interlace are accepted")
    kinds = [kind for kind, _ in chunks]
    for kind in kinds:
        if kind not in _CRITICAL and kind[0:1].isupper():
            raise _invalid(f"it holds an unknown critical chunk {kind.decode()}")
    if kinds.count(b"IHDR") != 1 or kinds.count(b"IEND") != 1 or kinds.count(b"PLTE") > 1:
        raise _invalid("IHDR, PLTE or IEND appears more than once")
    if colour == 3 and b"PLTE" not in kinds:
        raise _invalid("colour type 3 needs a PLTE chunk")
    idat = [i for i, kind in enumerate(kinds) if kind == b"IDAT"]
    if not idat or idat != list(range(idat[0], idat[-1] + 1)):
        raise _invalid("the IDAT chunks are missing or not consecutive")
    row = 1 + (w * _FORMATS[colour][0] * depth + 7) // 8
    _check_image_data(b"".join(chunks[i][1] for i in idat), rows=h, row_bytes=row)
    return PngInfo(w, h, depth, colour, len(data), hashlib.sha256(data).hexdigest())


def _check_image_data(stream: bytes, *, rows: int, row_bytes: int) -> None:
    expected = rows * row_bytes
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(stream, expected + 1)
    except zlib.error:
        raise _invalid("its image data is not a valid zlib stream") from None
    if len(raw) != expected:
        raise _invalid(f"its image data inflates to {len(raw)} bytes, not {expected}")
    if not inflater.eof:
        raise _invalid("its zlib stream is incomplete")
    if inflater.unused_data:
        raise _invalid("bytes follow the end of its zlib stream")
    if any(raw[r * row_bytes] > 4 for r in range(rows)):
        raise _invalid("a row has an unknown filter type")


def output_too_large(size: int, max_bytes: int = MAX_ASSET_BYTES) -> Refused:
    """The refusal ``tool-output-invalid`` for ``size`` bytes of output over ``max_bytes``:
    :func:`check_png`'s, and the sandbox adapter's for an answer it measures before copying
    it into the host's memory (issue 13: a 1.5 GB answer left the Wasm heap at 1.5 GB)."""
    return Refused(
        Code.TOOL_OUTPUT_INVALID,
        f"The tool returned {size} bytes; the host accepts at most {max_bytes}.",
    )


def sandbox_refusal(code: object, message: object) -> Refused:
    """Turn a sandbox's ``{ok: false, code, message}`` answer into a refusal (SPEC §8).

    ``code`` must be one of :data:`SANDBOX_CODES`; any other value (a sandbox must never be
    able to choose an arbitrary refusal) becomes ``tool-output-invalid``. The message is
    kept as text, at most 300 characters.
    """
    text = (message if isinstance(message, str) else "")[:300] or None
    try:
        parsed = Code(code) if isinstance(code, str) else None
    except ValueError:
        parsed = None
    if parsed not in SANDBOX_CODES:
        return Refused(Code.TOOL_OUTPUT_INVALID, "The sandbox answered with an unknown code.")
    return Refused(parsed, text)
