"""The sorted byte tables the persisted index (:mod:`core.missions.mailbox.index`) is searched
by in place, by bisection, without building a set or dict per letter (seed 004 §2; issue 18):
the content ids and the mission table's rows, and the index's fixed layouts."""

from __future__ import annotations

import bisect
import struct

_ID_BYTES = 32
_MISSION_ID_BYTES = 16
_ROW = struct.Struct(">16sQII")
"""A mission row of the persisted index: mission id, document offset, length, crc32."""
_FANOUT = struct.Struct(">256I")


class _RowKeys:
    """The mission ids of a :class:`_DocTable`'s rows, as a sequence bisect can search."""

    __slots__ = ("_table",)

    def __init__(self, table: bytes) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table) // _ROW.size

    def __getitem__(self, i: int) -> bytes:
        at = i * _ROW.size
        return self._table[at : at + _MISSION_ID_BYTES]


class _SortedIds:
    """Content ids (32 bytes each) as one sorted byte string, searched by bisection: what the
    persisted index loads without building a set of them."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data) // _ID_BYTES

    def __getitem__(self, i: int) -> bytes:
        return self._data[i * _ID_BYTES : (i + 1) * _ID_BYTES]

    def __contains__(self, key: object) -> bool:
        i = bisect.bisect_left(self, key)  # type: ignore[call-overload]  # `in` hands any object; ids are bytes
        return i < len(self) and self[i] == key

    def fanout(self) -> bytes:
        """The fan-out of these ids (module docstring): 256 big-endian ``uint32``."""
        counts = [bisect.bisect_left(self, bytes([b + 1])) for b in range(255)]
        return _FANOUT.pack(*counts, len(self))

    def merged(self, more: set[bytes]) -> bytes:
        """These ids and ``more``, sorted, as one byte string."""
        if not more:
            return self._data
        parts, start = [], 0
        for key in sorted(more):  # few: the ids taken since the last index
            i = bisect.bisect_left(self, key)
            parts += [self._data[start * _ID_BYTES : i * _ID_BYTES], key]
            start = i
        parts.append(self._data[start * _ID_BYTES :])
        return b"".join(parts)
