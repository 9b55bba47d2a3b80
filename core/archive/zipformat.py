"""The bytes of a stored zip around the files' data: headers, data descriptors, the directory.

SPEC §10; docs/archives.md §3. The export (:mod:`core.archive.export`) decides every entry —
name, order, kind — and asks these functions for the bytes that frame it; the files' own bytes
never pass through here, so a placement can move them without Python touching them
(``worker/byte-path.mjs``) and only hand back each file's size and CRC-32.

The layout is the one CPython's :mod:`zipfile` writes to a non-seekable file, byte for byte
(a test compares the two on every runtime): a local header with general-purpose bits 3 (sizes
and CRC follow the data) and 11 (UTF-8 name), the data, a data descriptor; folders as a local
header without data; then the central directory, and the zip64 end records only when a count,
size or offset needs them. Every entry is *stored*; times are 1980-01-01 00:00:00; the creator
is Unix (3); modes are ``0644`` (files) and ``0755`` plus the MS-DOS directory bit (folders);
no extra fields but zip64's. The same entries therefore give the same bytes on every machine.

Format: PKWARE APPNOTE.TXT 6.3.x §4.3 (local header 4.3.7, data descriptor 4.3.9, central
directory 4.3.12, zip64 end records 4.3.14–4.3.15, end of central directory 4.3.16).
"""

from __future__ import annotations

import stat
import struct
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CentralEntry",
    "central_directory",
    "data_descriptor",
    "descriptor_template",
    "local_header",
]

_LOCAL = b"PK\x03\x04"
_CENTRAL = b"PK\x01\x02"
_DESCRIPTOR = 0x08074B50
_END = b"PK\x05\x06"
_END64 = b"PK\x06\x06"
_END64_LOCATOR = b"PK\x06\x07"

_VERSION = 20  # 2.0: folders, stored entries
_VERSION_ZIP64 = 45
_UNIX = 3
_DESCRIPTOR_FLAG = 0x08
_UTF8_FLAG = 0x800
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01
_DOS_TIME = 0  # 00:00:00
_FILE_ATTR = (stat.S_IFREG | 0o644) << 16
_DIR_ATTR = ((stat.S_IFDIR | 0o755) << 16) | 0x10  # 0x10: the MS-DOS directory attribute

ZIP64_LIMIT = (1 << 31) - 1
"""Sizes and offsets above this get zip64 fields (the bound :mod:`zipfile` uses)."""
_COUNT_LIMIT = (1 << 16) - 1


def _zip64_local(size_hint: int) -> bool:
    """Whether a file entry's local header carries zip64 sizes: decided before its data, from
    the size its listing gave, with zipfile's 5 % margin for a file that grows meanwhile."""
    return size_hint * 1.05 > ZIP64_LIMIT


@dataclass(frozen=True, slots=True)
class CentralEntry:
    """One entry as the central directory lists it: ``name`` (a folder's ends in ``/``),
    ``folder``, data ``size`` and ``crc32``, the ``offset`` of its local header, and whether
    its local header was written with zip64 sizes (``zip64_local``)."""

    name: str
    folder: bool
    size: int
    crc32: int
    offset: int
    zip64_local: bool = False


def local_header(name: str, *, folder: bool, size_hint: int = 0) -> tuple[bytes, bool]:
    """The local file header of entry ``name`` and whether it carries zip64 sizes.

    A file's header has bit 3 set and zero CRC and sizes (its data descriptor follows the
    data); ``size_hint`` is the size the listing gave (bytes), which decides zip64. A folder's
    header (``name`` ending in ``/``) has no descriptor and no data.
    """
    encoded = name.encode("utf-8")
    zip64 = not folder and _zip64_local(size_hint)
    extra = struct.pack("<HHQQ", 1, 16, 0, 0) if zip64 else b""
    version = _VERSION_ZIP64 if zip64 else _VERSION
    flags = _UTF8_FLAG if folder else _UTF8_FLAG | _DESCRIPTOR_FLAG
    sizes = 0xFFFFFFFF if zip64 else 0
    head = struct.pack(
        "<4s2B4HL2L2H",
        _LOCAL,
        version,
        0,
        flags,
        0,  # stored
        _DOS_TIME,
        _DOS_DATE,
        0,
        sizes,
        sizes,
        len(encoded),
        len(extra),
    )
    return head + encoded + extra, zip64


def data_descriptor(crc32: int, size: int, *, zip64: bool) -> bytes:
    """The data descriptor after a file's ``size`` bytes of data (stored: compressed size =
    size); 8-byte sizes when its local header was zip64. ``ValueError`` when ``size`` needs
    zip64 but the header was written without it (the file grew past 2 GiB while exported)."""
    if zip64:
        return struct.pack("<LLQQ", _DESCRIPTOR, crc32, size, size)
    if size > ZIP64_LIMIT:
        raise ValueError("the file grew past the zip64 limit while it was exported")
    return struct.pack("<LLLL", _DESCRIPTOR, crc32, size, size)


def descriptor_template(
    *, zip64: bool
) -> tuple[bytes, tuple[tuple[Literal["crc32", "size"], int, int], ...]]:
    """A data descriptor with zero CRC and sizes, and where a relay writes the measured CRC-32
    and size into it (``(what, offset, width)``, little-endian): filled in, it is
    :func:`data_descriptor` of those values."""
    width = 8 if zip64 else 4
    return data_descriptor(0, 0, zip64=zip64), (
        ("crc32", 4, 4),
        ("size", 8, width),
        ("size", 8 + width, width),
    )


def central_directory(entries: list[CentralEntry], start: int) -> bytes:
    """The central directory of ``entries`` (in archive order) and the end records, for a
    directory that starts at byte ``start`` of the archive."""
    parts: list[bytes] = []
    for entry in entries:
        extra_fields: list[int] = []
        size = entry.size
        if size > ZIP64_LIMIT:
            extra_fields += [size, size]
            size = 0xFFFFFFFF
        offset = entry.offset
        if offset > ZIP64_LIMIT:
            extra_fields.append(offset)
            offset = 0xFFFFFFFF
        extra = (
            struct.pack(f"<HH{len(extra_fields)}Q", 1, 8 * len(extra_fields), *extra_fields)
            if extra_fields
            else b""
        )
        version = _VERSION_ZIP64 if extra_fields or entry.zip64_local else _VERSION
        encoded = entry.name.encode("utf-8")
        flags = _UTF8_FLAG if entry.folder else _UTF8_FLAG | _DESCRIPTOR_FLAG
        parts.append(
            struct.pack(
                "<4s4B4HL2L5H2L",
                _CENTRAL,
                version,
                _UNIX,
                version,
                0,
                flags,
                0,  # stored
                _DOS_TIME,
                _DOS_DATE,
                entry.crc32,
                size,
                size,
                len(encoded),
                len(extra),
                0,  # comment
                0,  # disk
                0,  # internal attributes
                _DIR_ATTR if entry.folder else _FILE_ATTR,
                offset,
            )
        )
        parts.append(encoded)
        parts.append(extra)
    directory = b"".join(parts)
    count, length, offset = len(entries), len(directory), start
    tail = b""
    if count > _COUNT_LIMIT or offset > ZIP64_LIMIT or length > ZIP64_LIMIT:
        end64_at = start + length
        tail = struct.pack(
            "<4sQ2H2L4Q", _END64, 44, 45, 45, 0, 0, count, count, length, offset
        ) + struct.pack("<4sLQL", _END64_LOCATOR, 0, end64_at, 1)
        count, length, offset = (
            min(count, 0xFFFF),
            min(length, 0xFFFFFFFF),
            min(offset, 0xFFFFFFFF),
        )
    end = struct.pack("<4s4H2LH", _END, 0, 0, count, count, length, offset, 0)
    return directory + tail + end
